# Slices along a dim add a leading symbolic dim to the point: full prefix,
# sliding window, block, a constant-size window, and a whole sequence read
# through the bound symbol T after the dynamic dim ends.
# RUN: %python %s | FileCheck %s
import pdg.frontend as pdg

prog = pdg.Program("slices")
b = prog.dim("b", launch="B")
t = prog.dim("t", dynamic="T", max=64)
k = prog.input("k", (4,), "f32", domain=[b, t])
full = k[b, 0 : t + 1].sum(axis=0)
window = k[pdg.max(0, t - 15) : t + 1].sum(axis=0)
block = k[(t // 8) * 8 : t + 1].sum(axis=0)
last4 = k[t - 3 : t + 1]
total = k[0 : t.size].sum(axis=0)
t.until(full.sum() > 100.0)
for name, v in [("full", full), ("window", window), ("block", block), ("total", total)]:
    prog.output(name, v)
prog.output("shape", pdg.transpose(last4) if False else last4.sum(axis=1))
print(prog.build())

# CHECK-LABEL: pdg.graph @slices
# CHECK: pdg.dim @b < launch B
# CHECK: pdg.dim @t < dynamic T max 64 until %{{.*}} : !pdg.value<[b, t], tensor<i1>>
# CHECK: pdg.node "reduce" [b, t] (%{{.*}} = %k[b, 0 : t + 1] : !pdg.value<[b, t], tensor<4xf32>>) -> tensor<4xf32>
# CHECK: tensor<?x4xf32>
# CHECK: pdg.node "reduce_1" [b, t] (%{{.*}} = %k[b, max(0, t - 15) : t + 1]
# CHECK: pdg.node "reduce_2" [b, t] (%{{.*}} = %k[b, (t floordiv 8) * 8 : t + 1]
# CHECK: pdg.node "reduce_3" [b] (%{{.*}} = %k[b, 0 : T] : !pdg.value<[b, t], tensor<4xf32>>) -> tensor<4xf32>
# CHECK: pdg.node "reduce_5" [b, t] (%{{.*}} = %k[b, t - 3 : t + 1]
# CHECK: tensor<4x4xf32>
