// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid case conditions: no comparison, not affine, divisors, dims outside the domain, unknown symbols, wrong arity.

pdg.graph @condition_without_comparison {
  pdg.dim @t < 8
  %y = pdg.node "y" [t] -> tensor<f32>
    // expected-error @+1 {{expected a comparison: ==, >=, <=, > or <}}
    case (t) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
}

// -----

pdg.graph @condition_not_affine {
  pdg.dim @t < 8
  // expected-error @+1 {{condition of case #1 must be affine with positive constant divisors: 't * t' multiplies two non-constant expressions}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t * t >= 1) {
      %c = arith.constant dense<1.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
}

// -----

pdg.graph @condition_divides_by_dim {
  pdg.dim @b < 8
  pdg.dim @t < 8
  // expected-error @+1 {{condition of case #0 must be affine with positive constant divisors: 't mod b' divides by a non-constant expression}}
  %y = pdg.node "y" [b, t] -> tensor<f32>
    case (t mod b == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
}

// -----

pdg.graph @condition_dim_outside_domain {
  pdg.dim @t < 8
  pdg.dim @i < 8
  // expected-error @+1 {{uses dim 'i', which is outside the consumer's domain [t]}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (i >= 1) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
}

// -----

pdg.graph @condition_unknown_symbol {
  pdg.dim @t < 8
  // expected-error @+1 {{uses unknown dim or symbol 'N'}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t >= N) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
}

// -----

pdg.graph @condition_over_wrong_dims {
  pdg.dim @t < 8
  // expected-error @+1 {{condition of case #0 is written over 2 dims and 0 symbols, but the node has 1 dims and 0 symbols}}
  %y = "pdg.node"() <{accesses = [], conditions = [affine_set<(d0, d1) : (0 >= 0)>], name = "y", symbols = []}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : () -> !pdg.value<[t], tensor<f32>>
}
