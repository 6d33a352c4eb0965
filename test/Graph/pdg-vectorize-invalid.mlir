// pdg-vectorize reports what it cannot batch at the op, and changes nothing.
// RUN: pdg-opt %s --split-input-file --verify-diagnostics --pdg-vectorize

pdg.graph @udf_over_b {
  pdg.dim @b < 4
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{pdg-vectorize: a udf over 'b' is called per point; it cannot be batched}}
  %r = pdg.udf "score" [b] (%x[b] : !pdg.value<[b], tensor<f32>>) -> tensor<f32>
  pdg.output "r" %r : !pdg.value<[b], tensor<f32>>
}

// -----

pdg.graph @condition_on_b {
  pdg.dim @b < 4
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{pdg-vectorize: a case condition depends on 'b'}}
  %y = pdg.node "y" [b] -> tensor<f32>
    case (b == 0) (%a = %x[b] : !pdg.value<[b], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    default (%a = %x[b] : !pdg.value<[b], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[b], tensor<f32>>
}

// -----

pdg.graph @b_not_first {
  pdg.dim @t < 4
  pdg.dim @b < 4
  // expected-error @+1 {{pdg-vectorize: 'b' must be the first dim of the domain}}
  %x = pdg.input "x" : !pdg.value<[t, b], tensor<f32>>
  pdg.output "x" %x : !pdg.value<[t, b], tensor<f32>>
}

// -----

pdg.graph @neighbour {
  pdg.dim @b < 4
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{pdg-vectorize: reads another coordinate of 'b' than its own}}
  %y = pdg.node "y" [b] (%a = %x[3 - b] : !pdg.value<[b], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[b], tensor<f32>>
}

// -----

pdg.graph @dynamic_b {
  // expected-error @+1 {{pdg-vectorize folds a static or launch dim; 'b' is dynamic}}
  pdg.dim @b < dynamic N max 4 until %stop : !pdg.value<[b], tensor<i1>>
  %stop = pdg.input "stop" : !pdg.value<[b], tensor<i1>>
  pdg.output "s" %stop : !pdg.value<[b], tensor<i1>>
}

// -----

pdg.graph @scalar_of_a_row {
  pdg.dim @b < 4
  %x = pdg.input "x" : !pdg.value<[b], tensor<2xf32>>
  %y = pdg.node "y" [b] (%a = %x[b] : !pdg.value<[b], tensor<2xf32>>) -> tensor<f32> {
    %c = arith.constant 0 : index
    // expected-error @+1 {{pdg-vectorize: cannot batch this op}}
    %e = tensor.extract %a[%c] : tensor<2xf32>
    %r = tensor.from_elements %e : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[b], tensor<f32>>
}
