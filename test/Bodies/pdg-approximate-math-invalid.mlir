// pdg-approximate-math refuses an op it has no approximation for (upstream's
// patterns would skip it without a word).
// RUN: pdg-opt %s --pdg-approximate-math='ops=exp,sqrt' --verify-diagnostics

// expected-error@below {{no approximation of math.sqrt; it has: atan, atan2, cos, erf}}
module {
  func.func @f(%x: f32) -> f32 {
    %s = math.sqrt %x : f32
    return %s : f32
  }
}
