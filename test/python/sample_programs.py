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


# y[b] = x[b] @ w at each point b (the driver's parallel loop), and
# g = sum over b of the outer product x[b] y[b]: one point, a contraction of
# B x K x N (split into per-thread tiles).
def contraction_program(k: int, n: int) -> str:
    return f"""\
!x = !pdg.value<[b], tensor<{k}xf32>>
!w = !pdg.value<[], tensor<{k}x{n}xf32>>
!y = !pdg.value<[b], tensor<{n}xf32>>
pdg.graph @threads {{
  pdg.dim @b < launch B
  %x = pdg.input "x" : !x
  %w = pdg.input "w" : !w
  %y = pdg.node "y" [b] (%a = %x[b] : !x, %m = %w[] : !w) -> tensor<{n}xf32> {{
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<{n}xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<{n}xf32>) -> tensor<{n}xf32>
    %r = linalg.generic {{indexing_maps = [affine_map<(n, k) -> (k)>,
                                          affine_map<(n, k) -> (k, n)>,
                                          affine_map<(n, k) -> (n)>],
                         iterator_types = ["parallel", "reduction"]}}
        ins(%a, %m : tensor<{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<{n}xf32>) {{
    ^bb0(%u: f32, %v: f32, %o: f32):
      %p = arith.mulf %u, %v : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }} -> tensor<{n}xf32>
    pdg.yield %r : tensor<{n}xf32>
  }}
  %g = pdg.node "g" [] (%a = %x[0 : B] : !x, %c = %y[0 : B] : !y) -> tensor<{k}x{n}xf32> {{
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<{k}x{n}xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<{k}x{n}xf32>) -> tensor<{k}x{n}xf32>
    %r = linalg.generic {{indexing_maps = [affine_map<(b, k, n) -> (b, k)>,
                                          affine_map<(b, k, n) -> (b, n)>,
                                          affine_map<(b, k, n) -> (k, n)>],
                         iterator_types = ["reduction", "parallel", "parallel"]}}
        ins(%a, %c : tensor<?x{k}xf32>, tensor<?x{n}xf32>) outs(%f : tensor<{k}x{n}xf32>) {{
    ^bb0(%u: f32, %v: f32, %o: f32):
      %p = arith.mulf %u, %v : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }} -> tensor<{k}x{n}xf32>
    pdg.yield %r : tensor<{k}x{n}xf32>
  }}
  pdg.output "y" %y : !y
  pdg.output "g" %g : !pdg.value<[], tensor<{k}x{n}xf32>>
}}
"""
