// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Negative dim sizes must be rejected like zero (known bug: accepted today).
//
// BUG: DimOp::verify compares `*getSize() < 1`, but the ODS accessor of the
// I64Attr `size` returns std::optional<uint64_t>, so -3 is seen as
// 18446744073709551613 and passes; the op then prints
// `pdg.dim @i < 18446744073709551613`, which pdg-opt cannot parse back

pdg.graph @negative_size {
  // expected-error @+1 {{bound of dim 'i' must be at least 1, got -3}}
  pdg.dim @i < -3
}

// -----

pdg.graph @negative_max {
  // expected-error @+1 {{bound of dim 'b' must be at least 1, got -1}}
  pdg.dim @b < launch B max -1
}
