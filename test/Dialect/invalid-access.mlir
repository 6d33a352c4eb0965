// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid accesses: arity, dims outside the domain, non-affine forms, divisors, empty slices, unknown names.

pdg.graph @too_many_entries {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access 'x'[t, 0] has 2 entries, but 'x' is defined over [t] (1 dims); give one index or slice per dim}}
  %y = pdg.node "y" [t] (%a = %x[t, 0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @too_few_entries {
  pdg.dim @b < 2
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  // expected-error @+1 {{access 'x'[t] has 1 entries, but 'x' is defined over [b, t] (2 dims)}}
  %y = pdg.node "y" [b, t] (%a = %x[t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @empty_access_of_nonempty_domain {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access 'x'[] has 0 entries, but 'x' is defined over [t] (1 dims)}}
  %u = pdg.udf "f" [] (%x[] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}

// -----

// A dim of the graph that is not in the consumer's domain cannot be read.
pdg.graph @dim_outside_domain {
  pdg.dim @t < 8
  pdg.dim @i < 8
  %x = pdg.input "x" : !pdg.value<[i], tensor<f32>>
  // expected-error @+1 {{uses dim 'i', which is outside the consumer's domain [t]; add 'i' to the domain, or read a fixed point or a slice of it}}
  %y = pdg.node "y" [t] (%a = %x[i] : !pdg.value<[i], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @udf_dim_outside_domain {
  pdg.dim @b < 2
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  // expected-error @+1 {{'pdg.udf' op uses dim 't', which is outside the consumer's domain [b]}}
  %u = pdg.udf "f" [b] (%x[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32>
}

// -----

pdg.graph @unknown_symbol {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{uses unknown dim or symbol 'N'; accesses and conditions may use the node's dims [t] and the bound symbols of launch or dynamic dims}}
  %y = pdg.node "y" [t] (%a = %x[N - 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

// A static dim has no bound symbol: its size is written as a number.
pdg.graph @static_dim_is_no_symbol {
  pdg.dim @t < 8
  pdg.dim @s < 4
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{uses unknown dim or symbol 'S'}}
  %y = pdg.node "y" [s] (%a = %x[0 : S] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

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

// -----

pdg.graph @floordiv_zero {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'floordiv' needs a positive constant divisor, got 0}}
  %y = pdg.node "y" [t] (%a = %x[t floordiv 0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @mod_negative {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'mod' needs a positive constant divisor, got -2}}
  %y = pdg.node "y" [t] (%a = %x[t mod -2] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

// The divisor is folded before it is checked.
pdg.graph @ceildiv_folded_zero {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'ceildiv' needs a positive constant divisor, got 0}}
  %y = pdg.node "y" [t] (%a = %x[t ceildiv (t - t)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @empty_slice {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{slice 't : t' in access 'x'[t : t] is empty (size 0); a slice 'lb : ub' reads lb <= i < ub}}
  %y = pdg.node "y" [t] (%a = %x[t : t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @negative_slice {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{slice '5 : 3' in access 'x'[5 : 3] is negative (size -2)}}
  %y = pdg.node "y" [t] (%a = %x[5 : 3] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

// Every pair of a max/min bound list is checked.
pdg.graph @empty_bound_pair {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{slice 't + 1 : t + 1' in access 'x'[max(0, t + 1) : min(t + 1, 8)] is empty (size 0)}}
  %u = pdg.udf "f" [t] (%x[max(0, t + 1) : min(t + 1, 8)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}

// -----

pdg.graph @max_as_point {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{max(...) is only allowed as the lower bound of a slice 'lb : ub'}}
  %y = pdg.node "y" [t] (%a = %x[max(t, 1)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @min_as_lower_bound {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'min' is reserved and cannot appear here}}
  %u = pdg.udf "f" [t] (%x[min(t, 1) : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}

// -----

pdg.graph @not_an_expression {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{expected an affine expression: an integer, a dim or symbol name, or '('}}
  %u = pdg.udf "f" [t] (%x[t + ] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}

// -----

pdg.graph @input_not_a_value {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{an input must be a !pdg.value, got 'tensor<f32>'}}
  %u = pdg.udf "f" [t] (%x[t] : tensor<f32>) -> tensor<f32>
}

// -----

// The generic form can state an access over the wrong number of dims.
pdg.graph @access_over_wrong_dims {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access #0 is written over 2 dims and 0 symbols, but the node has 1 dims and 0 symbols}}
  %y = "pdg.node"(%x) <{accesses = [#pdg.access<(d0, d1) : [d0]>], conditions = [affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
  ^bb0(%a: tensor<f32>):
    "pdg.yield"(%a) : (tensor<f32>) -> ()
  }) : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @access_over_wrong_symbols {
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access #1 is written over 1 dims and 1 symbols, but the node has 1 dims and 0 symbols}}
  %u = "pdg.udf"(%x, %x) <{accesses = [#pdg.access<(d0) : [d0]>, #pdg.access<(d0)[s0] : [s0 - 1]>], callee = "f", symbols = []}> : (!pdg.value<[t], tensor<f32>>, !pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

// A semi-affine #pdg.access parses on its own, but not as an op's access.
pdg.graph @semi_affine_generic {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'pdg.udf' op access 'x'[t * t] must be affine}}
  %u = "pdg.udf"(%x) <{accesses = [#pdg.access<(d0) : [d0 * d0]>], callee = "f", symbols = []}> : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @access_count_mismatch {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{has 1 inputs but 0 accesses}}
  %u = "pdg.udf"(%x) <{accesses = [], callee = "f", symbols = []}> : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

// Standalone #pdg.access: names are bound once, dims and symbols apart.
// expected-error @+1 {{'d0' cannot be bound twice or reserved}}
#twice = #pdg.access<(d0, d0) : [d0]>

// -----

// expected-error @+1 {{'d0' is bound both as a dim and as a symbol}}
#clash = #pdg.access<(d0)[d0] : [d0]>

// -----

// expected-error @+1 {{'max' cannot be bound twice or reserved}}
#reserved = #pdg.access<(max) : [max]>

// -----

// expected-error @+1 {{unknown dim or symbol 'd1'; known: d0 / s0}}
#unknown = #pdg.access<(d0)[s0] : [d1]>

// -----

// expected-error @+1 {{'floordiv' needs a positive constant divisor, got 0}}
#zero = #pdg.access<(d0) : [d0 floordiv 0 : 4]>
