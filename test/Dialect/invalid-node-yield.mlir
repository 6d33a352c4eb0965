// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid pdg.yield: a yielded type that is not the node's point type, a yield outside a node.

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

pdg.graph @yield_outside_node {
  %c = arith.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{'pdg.yield' op expects parent op 'pdg.node'}}
  "pdg.yield"(%c) : (tensor<f32>) -> ()
}
