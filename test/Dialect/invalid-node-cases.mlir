// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid case structure of pdg.node: inputs before the cases, no case, cases that disagree with the conditions.

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
