"""Small pdg programs shared by the Python tests (a module with a unique
name: `conftest` is ambiguous when several test folders have one)."""

# A small valid program: an input, a live node with an input its body never
# uses (canonicalize drops it), and a dead cycle p <-> q (pdg-dce drops it).
SMALL_PROGRAM = """\
pdg.graph @small {
  pdg.dim @t < 8
  %w = pdg.input "w" : !pdg.value<[], tensor<f32>>
  %x = pdg.node "x" [t] (%a = %w[] : !pdg.value<[], tensor<f32>>,
                         %u = %w[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  %p = pdg.node "p" [t] -> tensor<f32>
    case (t == 0) (%a = %w[] : !pdg.value<[], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%a = %q[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
  %q = pdg.node "q" [t] (%a = %p[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "x" %x : !pdg.value<[t], tensor<f32>>
}
"""

# Fails verification at line 2, column 3 (a static bound must be >= 1).
BAD_DIM_PROGRAM = """\
pdg.graph @bad {
  pdg.dim @t < 0
}
"""
