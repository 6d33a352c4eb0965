// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid pdg.node reads of earlier points of other values (nodes, inputs) that no case guards.

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
