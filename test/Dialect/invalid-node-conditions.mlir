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

// -----

// A bound past 2^62: MLIR folds `t - 1 >= 2^63 - 1` into one wrapped
// constant, `t - 2^63 >= 0`, which it would print in a form it cannot
// parse back (found by tools/fuzz_pdg_opt.py, seed 3).
#huge = affine_set<(d0) : (d0 - 1 >= 9223372036854775807)>
"builtin.module"() ({
  "pdg.graph"() <{sym_name = "condition_with_a_wrapped_constant"}> ({
    "pdg.dim"() <{kind = #pdg<bound static>, size = 8 : i64, sym_name = "t"}> : () -> ()
    // expected-error @+1 {{condition of case #0 holds the constant -9223372036854775808, beyond +-2^62}}
    %0 = "pdg.node"() <{accesses = [], conditions = [#huge], name = "y", symbols = []}> ({
      %c = "arith.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      "pdg.yield"(%c) : (tensor<f32>) -> ()
    }) : () -> !pdg.value<[t], tensor<f32>>
  }) : () -> ()
}) : () -> ()
