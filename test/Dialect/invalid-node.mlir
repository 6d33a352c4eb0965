// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid pdg.node, pdg.yield and pdg.point: types, recurrences, same-point cycles, conditions, domains.

pdg.graph @yield_type {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<2xf32>
    // expected-error @+1 {{'pdg.yield' op yields 'tensor<2xf32>', but the node's value at one point is 'tensor<f32>'}}
    pdg.yield %c : tensor<2xf32>
  }
}

// -----

pdg.graph @yield_element_type {
  pdg.dim @t < 8
  %y = pdg.node "y" [t] -> tensor<4xf32>
    case (t == 0) {
      %c = arith.constant dense<0> : tensor<4xi32>
      // expected-error @+1 {{yields 'tensor<4xi32>', but the node's value at one point is 'tensor<4xf32>'}}
      pdg.yield %c : tensor<4xi32>
    }
    default {
      %c = arith.constant dense<0.0> : tensor<4xf32>
      pdg.yield %c : tensor<4xf32>
    }
}

// -----

// In the custom form block arguments get their type from the access; the
// generic form can disagree. A constant slice has a static size.
pdg.graph @body_arg_slice_type {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{body argument #0 of case #0 has type 'tensor<?xf32>', but access 'x'[t - 3 : t + 1] gives 'tensor<4xf32>'}}
  %y = "pdg.node"(%x) <{accesses = [#pdg.access<(d0) : [d0 - 3 : d0 + 1]>], conditions = [affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
  ^bb0(%a: tensor<?xf32>):
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @body_arg_point_type {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{body argument #1 of case #1 has type 'tensor<2xf32>', but access 'x'[t] gives 'tensor<f32>'}}
  %y = "pdg.node"(%x, %x, %x) <{accesses = [#pdg.access<(d0) : [d0]>, #pdg.access<(d0) : [0]>, #pdg.access<(d0) : [d0]>], conditions = [affine_set<(d0) : (d0 == 0)>, affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
  ^bb0(%a: tensor<f32>):
    "pdg.yield"(%a) : (tensor<f32>) -> ()
  }, {
  ^bb0(%b: tensor<f32>, %c: tensor<2xf32>):
    "pdg.yield"(%b) : (tensor<f32>) -> ()
  }) : (!pdg.value<[t], tensor<f32>>, !pdg.value<[t], tensor<f32>>, !pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

// The only case reads the node itself: no point can ever be computed first.
pdg.graph @no_base_case {
  pdg.dim @t < 8
  // expected-error @+1 {{recurrence without a base case: every case of 'y' reads the node itself; add a case that does not, e.g. case (t == 0)}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t >= 1) (%p = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

pdg.graph @every_case_reads_itself {
  pdg.dim @b < 4
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  // expected-error @+1 {{recurrence without a base case: every case of 'y' reads the node itself; add a case that does not, e.g. case (t == 0)}}
  %y = pdg.node "y" [b, t] -> tensor<f32>
    case (t >= 1) (%p = %y[b, t - 1] : !pdg.value<[b, t], tensor<f32>>, %v = %x[b, t] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
    case (b >= 1) (%p = %y[b - 1, t] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

// The recurrent case is not guarded: at t = 0 it reads y[-1].
pdg.graph @unguarded_recurrence {
  pdg.dim @t < 8
  // expected-error @+1 {{recurrence without a base case: case #1 reads 'y'[t - 1], which is outside the domain when t < 1; guard this case with (t >= 1) and define t < 1 in another case, e.g. case (t == 0)}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t >= 4) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t <= 3) (%p = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

// The guard must cover the whole distance of the read.
pdg.graph @guard_too_weak {
  pdg.dim @t < 8
  // expected-error @+1 {{case #1 reads 'y'[t - 2], which is outside the domain when t < 2; guard this case with (t >= 2)}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= 1) (%p = %y[t - 2] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

// Reading an earlier point of another value needs the same guard.
pdg.graph @unguarded_read_of_other {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %z = pdg.node "z" [t] (%a = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  // expected-error @+1 {{case #0 reads 'z'[t - 1], which is outside the domain of 'z' when t < 1; guard this case with (t >= 1)}}
  %y = pdg.node "y" [t] (%a = %z[t - 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @unguarded_read_of_input {
  pdg.dim @b < 4
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{case #1 reads 'x'[b - 1], which is outside the domain of 'x' when b < 1; guard this case with (b >= 1)}}
  %y = pdg.node "y" [b, t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= 1) (%a = %x[b - 1] : !pdg.value<[b], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
}

// -----

// Two nodes reading each other at the same point.
pdg.graph @same_point_cycle {
  pdg.dim @t < 8
  %a = pdg.node "a" [t] (%v = %b[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  // expected-error @+1 {{depends on itself at the same point through 'a' -> 'b' -> 'a'; one read in the cycle must be of an earlier point, e.g. t - 1 or a slice ending at t}}
  %b = pdg.node "b" [t] (%v = %a[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
}

// -----

// A longer cycle, through dims that only some of the values have.
pdg.graph @same_point_cycle_of_three {
  pdg.dim @b < 2
  pdg.dim @t < 8
  %a = pdg.node "a" [b, t] (%v = %c[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  // expected-error @+1 {{depends on itself at the same point through 'a' -> 'c' -> 'bb' -> 'a'}}
  %bb = pdg.node "bb" [b, t] (%v = %a[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %c = pdg.node "c" [t] (%v = %bb[0, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
}

// -----

// A slice that includes the current point is a same-point self read.
pdg.graph @self_read_through_slice {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{depends on itself at the same point through 'y' -> 'y'}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) (%a = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %y[0 : t + 1] : !pdg.value<[t], tensor<f32>>) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
}

// -----

// Reading itself at the very same point, in a case next to a base case.
pdg.graph @self_read_same_point {
  pdg.dim @t < 8
  // expected-error @+1 {{depends on itself at the same point through 'y' -> 'y'}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default (%p = %y[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

// A cycle through a host callback.
pdg.graph @cycle_through_udf {
  pdg.dim @t < 8
  %y = pdg.node "y" [t] (%v = %u[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  // expected-error @+1 {{'pdg.udf' op depends on itself at the same point through 'y' -> udf 'f' -> 'y'}}
  %u = pdg.udf "f" [t] (%y[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}

// -----

pdg.graph @point_outside_node {
  pdg.dim @t < 8
  // expected-error @+1 {{'pdg.point' op must be inside the body of a pdg.node}}
  %p = pdg.point @t : index
}

// -----

pdg.graph @point_dim_not_in_domain {
  pdg.dim @t < 8
  pdg.dim @i < 8
  %y = pdg.node "y" [t] -> tensor<index> {
    // expected-error @+1 {{'pdg.point' op dim 'i' is not in the node's domain [t]}}
    %i = pdg.point @i : index
    %r = tensor.from_elements %i : tensor<index>
    pdg.yield %r : tensor<index>
  }
}

// -----

pdg.graph @yield_outside_node {
  %c = arith.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{'pdg.yield' op expects parent op 'pdg.node'}}
  "pdg.yield"(%c) : (tensor<f32>) -> ()
}

// -----

pdg.graph @reserved_dim_name {
  pdg.dim @t < 8
  // expected-error @+1 {{'max' is reserved and cannot name a dim}}
  %y = pdg.node "y" [max] -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @reserved_keyword_dim {
  // expected-error @+1 {{'case' is reserved and cannot name a dim}}
  %y = pdg.udf "f" [t, case] -> tensor<f32>
}

// -----

pdg.graph @duplicate_domain_dim {
  pdg.dim @t < 8
  // expected-error @+1 {{dim 't' appears twice in the domain}}
  %y = pdg.node "y" [t, t] -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @unknown_domain_dim {
  pdg.dim @t < 8
  // expected-error @+1 {{uses unknown dim 'u' in the domain of node 'y' [t, u]; declare it in the graph, e.g. `pdg.dim @u < 16`}}
  %y = pdg.node "y" [t, u] -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @unknown_udf_domain_dim {
  // expected-error @+1 {{uses unknown dim 'b' in the domain of udf 'f' [b]}}
  %y = pdg.udf "f" [b] -> tensor<f32>
}

// -----

pdg.graph @point_type_not_tensor {
  pdg.dim @t < 8
  // expected-error @+1 {{a node's value at one point must be a ranked tensor, got 'f32'}}
  %y = pdg.node "y" [t] -> f32 {
    %c = arith.constant 0.0 : f32
    pdg.yield %c : f32
  }
}

// -----

pdg.graph @udf_point_type_not_tensor {
  pdg.dim @t < 8
  // expected-error @+1 {{a udf's value at one point must be a ranked tensor, got 'tensor<*xf32>'}}
  %y = pdg.udf "f" [t] -> tensor<*xf32>
}

// -----

pdg.graph @inputs_before_cases {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
    // expected-error @+1 {{a node with cases takes its inputs per case, not before '->'}}
    case (t == 0) {
      pdg.yield %a : tensor<f32>
    }
}

// -----

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

pdg.graph @missing_body {
  pdg.dim @t < 8
  // expected-error @+1 {{expected '{' to begin a region}}
  %y = pdg.node "y" [t] -> tensor<f32>
}

// -----

// The generic form can break the structure the custom form guarantees.
pdg.graph @no_case {
  pdg.dim @t < 8
  // expected-error @+1 {{'pdg.node' op needs at least one case}}
  %y = "pdg.node"() <{accesses = [], conditions = [], name = "y", symbols = []}> : () -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @cases_vs_conditions {
  pdg.dim @t < 8
  // expected-error @+1 {{has 1 cases but 2 conditions}}
  %y = "pdg.node"() <{accesses = [], conditions = [affine_set<(d0) : (0 >= 0)>, affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : () -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @arguments_vs_inputs {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{case bodies take 0 arguments in all, but the node has 1 inputs}}
  %y = "pdg.node"(%x) <{accesses = [#pdg.access<(d0) : [d0]>], conditions = [affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
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

pdg.graph @dim_as_symbol {
  pdg.dim @t < 8
  // expected-error @+1 {{'t' is both a domain dim and a symbol}}
  %y = "pdg.node"() <{accesses = [], conditions = [affine_set<(d0)[s0] : (0 >= 0)>], name = "y", symbols = ["t"]}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : () -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @symbol_twice {
  pdg.dim @t < launch T
  // expected-error @+1 {{symbol 'T' is listed twice}}
  %y = "pdg.node"() <{accesses = [], conditions = [affine_set<(d0)[s0, s1] : (0 >= 0)>], name = "y", symbols = ["T", "T"]}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : () -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @symbol_not_a_string {
  pdg.dim @t < launch T
  // expected-error @+1 {{attribute 'symbols' failed to satisfy constraint: string array attribute}}
  %y = "pdg.node"() <{accesses = [], conditions = [affine_set<(d0)[s0] : (0 >= 0)>], name = "y", symbols = [3]}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : () -> !pdg.value<[t], tensor<f32>>
}
