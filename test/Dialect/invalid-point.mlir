// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid pdg.point: outside a node body, or over a dim that is not in the node's domain.

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
