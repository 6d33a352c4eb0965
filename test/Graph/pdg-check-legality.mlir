// pdg-check-legality: isl proves every read stays in its producer's domain
// and no cycle reads the future of a sequential dim.
// RUN: pdg-opt %s --split-input-file --verify-diagnostics --pdg-check-legality

pdg.graph @past_the_end {
  pdg.dim @t < 8
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{reads 'a'[(t + 1)] outside the domain of 'a' [t], e.g. [x[7] -> a[8]]}}
  %x = pdg.node "x" [t] (%p = %a[t + 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %p : tensor<f32>
  }
  pdg.output "x" %x : !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @slice_past_the_bound {
  pdg.dim @b < launch B
  pdg.dim @t < launch T
  %a = pdg.input "a" : !pdg.value<[b, t], tensor<f32>>
  // expected-error @+1 {{reads 'a'[b, t : (t + 2)] outside the domain of 'a' [b, t]}}
  %x = pdg.node "x" [b, t] (%p = %a[b, t : t + 2] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %e = tensor.extract %p[%c0] : tensor<2xf32>
    %r = tensor.from_elements %e : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "x" %x : !pdg.value<[b, t], tensor<f32>>
}

// -----

// A block that ends past the domain for some t: isl finds t with floor.
pdg.graph @block_overrun {
  pdg.dim @t < 10
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{outside the domain of 'a' [t]}}
  %x = pdg.node "x" [t] (%p = %a[(t floordiv 4) * 4 : (t floordiv 4) * 4 + 4] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %e = tensor.extract %p[%c0] : tensor<4xf32>
    %r = tensor.from_elements %e : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "x" %x : !pdg.value<[t], tensor<f32>>
}

// -----

// x reads y one step ahead and y reads x one step back: no step-by-step
// order exists.
pdg.graph @future_in_a_cycle {
  pdg.dim @t < 8
  // expected-error @+1 {{reads 'y'[(t + 1)] from the future of sequential dim 't' inside a cycle of values}}
  %x = pdg.node "x" [t] -> tensor<f32>
    case (t <= 6) (%p = %y[t + 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
    default {
      %z = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %z : tensor<f32>
    }
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) {
      %z = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %z : tensor<f32>
    }
    case (t >= 1) (%p = %x[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// -----

// Legal reads: a guarded recurrence, a window clamped at 0, a whole
// sequence after the loop; no diagnostics.
pdg.graph @legal {
  pdg.dim @t < dynamic T max 64 until %d : !pdg.value<[t], tensor<i1>>
  %a = pdg.input "a" : !pdg.value<[], tensor<f32>>
  %x = pdg.node "x" [t] -> tensor<f32>
    case (t == 0) (%p = %a[] : !pdg.value<[], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
    case (t >= 1) (%p = %x[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  %w = pdg.node "w" [t] (%p = %x[max(0, t - 3) : t + 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %e = tensor.extract %p[%c0] : tensor<?xf32>
    %r = tensor.from_elements %e : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  %d = pdg.node "d" [t] (%p = %w[t] : !pdg.value<[t], tensor<f32>>) -> tensor<i1> {
    %z = arith.constant dense<0.0> : tensor<f32>
    %c = arith.cmpf ogt, %p, %z : tensor<f32>
    pdg.yield %c : tensor<i1>
  }
  %all = pdg.udf "total" [] (%x[0 : T] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
  pdg.output "all" %all : !pdg.value<[], tensor<f32>>
}

// -----

// t ends separately for each b: a consumer without b cannot use T.
pdg.graph @ambiguous_bound {
  pdg.dim @b < launch B
  pdg.dim @t < dynamic T max 16 until %d : !pdg.value<[b, t], tensor<i1>>
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  %d = pdg.node "d" [b, t] (%p = %x[b] : !pdg.value<[b], tensor<f32>>) -> tensor<i1> {
    %z = arith.constant dense<0.0> : tensor<f32>
    %c = arith.cmpf ogt, %p, %z : tensor<f32>
    pdg.yield %c : tensor<i1>
  }
  // expected-error @+1 {{reads 'd'[0, (T + -1)] through 'T', but 't' ends separately for each b and 'last' is not defined over b: add it to the domain}}
  %last = pdg.node "last" [] (%p = %d[0, T - 1] : !pdg.value<[b, t], tensor<i1>>) -> tensor<i1> {
    pdg.yield %p : tensor<i1>
  }
  pdg.output "last" %last : !pdg.value<[], tensor<i1>>
}

// -----

// A recurrence that only reads ahead (the gradient of a recurrence) runs in
// a loop from the last step: legal along a static dim...
pdg.graph @backward_recurrence {
  pdg.dim @t < 8
  %g = pdg.input "g" : !pdg.value<[t], tensor<f32>>
  %d = pdg.node "d" [t] -> tensor<f32>
    case (t <= 6) (%n = %d[t + 1] : !pdg.value<[t], tensor<f32>>, %a = %g[t] : !pdg.value<[t], tensor<f32>>) {
      %s = arith.addf %n, %a : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
    default (%a = %g[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
  pdg.output "d" %d : !pdg.value<[t], tensor<f32>>
}

// -----

// ...and along a dynamic dim once its end is known: a later loop replays
// the steps backward (the gradient of a generation loop).
pdg.graph @backward_dynamic {
  pdg.dim @t < dynamic T max 8 until %done : !pdg.value<[t], tensor<i1>>
  %g = pdg.input "g" : !pdg.value<[], tensor<f32>>
  %done = pdg.node "done" [t] -> tensor<i1> {
    %f = arith.constant dense<false> : tensor<i1>
    pdg.yield %f : tensor<i1>
  }
  %d = pdg.node "d" [t] -> tensor<f32>
    case (t <= T - 2) (%n = %d[t + 1] : !pdg.value<[t], tensor<f32>>, %a = %g[] : !pdg.value<[], tensor<f32>>) {
      %s = arith.addf %n, %a : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
    default (%a = %g[] : !pdg.value<[], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
  pdg.output "d" %d : !pdg.value<[t], tensor<f32>>
}

// -----

// But not when the dim ends on the backward recurrence itself: its end is
// found only by running forward.
pdg.graph @backward_dynamic_ends_on_it {
  pdg.dim @t < dynamic T max 8 until %done : !pdg.value<[t], tensor<i1>>
  %g = pdg.input "g" : !pdg.value<[], tensor<f32>>
  %done = pdg.node "done" [t] (%a = %d[t] : !pdg.value<[t], tensor<f32>>) -> tensor<i1> {
    %z = arith.constant dense<0.0> : tensor<f32>
    %c = arith.cmpf ogt, %a, %z : tensor<f32>
    pdg.yield %c : tensor<i1>
  }
  // expected-error @+1 {{reads 'd'[(t + 1)] at a later point of dynamic dim 't' (e.g. distance [T = 2] -> [-1]), and 't' ends on a value that depends on it}}
  %d = pdg.node "d" [t] -> tensor<f32>
    case (t <= T - 2) (%n = %d[t + 1] : !pdg.value<[t], tensor<f32>>, %a = %g[] : !pdg.value<[], tensor<f32>>) {
      %s = arith.addf %n, %a : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
    default (%a = %g[] : !pdg.value<[], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
  pdg.output "d" %d : !pdg.value<[t], tensor<f32>>
}
