// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid accesses that are not affine: products of dims or symbols, divisions by dims or symbols.

pdg.graph @product_of_dims {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access 'x'[t * t] must be affine with positive constant divisors: 't * t' multiplies two non-constant expressions}}
  %y = pdg.node "y" [t] (%a = %x[t * t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

// A launch bound is a symbol, still not a constant.
pdg.graph @product_with_symbol {
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access 'x'[0 : t * T] must be affine with positive constant divisors: 't * T' multiplies two non-constant expressions}}
  %y = pdg.node "y" [t] (%a = %x[0 : T * t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @divisor_in_domain {
  pdg.dim @b < 8
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access 'x'[t floordiv b] must be affine with positive constant divisors: 't floordiv b' divides by a non-constant expression}}
  %y = pdg.node "y" [b, t] (%a = %x[t floordiv b] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @mod_by_symbol {
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'t mod T' divides by a non-constant expression}}
  %u = pdg.udf "f" [t] (%x[t mod T] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}
