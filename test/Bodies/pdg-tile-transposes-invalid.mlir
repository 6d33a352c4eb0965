// RUN: pdg-opt %s --pdg-tile-transposes='tile=0' --verify-diagnostics

// expected-error @below {{pdg-tile-transposes: tile must be at least 1, got 0}}
module {
  func.func @f(%w: memref<64x64xf32>, %t: memref<64x64xf32>) {
    linalg.transpose ins(%w : memref<64x64xf32>) outs(%t : memref<64x64xf32>) permutation = [1, 0]
    return
  }
}
