# Elementwise arithmetic and math: one node per operator, a linalg.generic
# body that broadcasts like NumPy, Python numbers folded into the body.
# RUN: %python %s | FileCheck %s
import pdg.frontend as pdg

prog = pdg.Program("elementwise")
b = prog.dim("b", 4)
x = prog.input("x", (3,), "f32", domain=[b])
y = prog.input("y", (2, 3), "f32")
s = (x + y) * 2.0
prog.output("s", pdg.tanh(s) - pdg.exp(-x).sum())
prog.output("n", -(prog.input("i", (3,), "i64", domain=[b]) // 2))
print(prog.build())

# CHECK-LABEL: pdg.graph @elementwise
# CHECK: pdg.dim @b < 4
# CHECK: %[[X:.*]] = pdg.input "x" : !pdg.value<[b], tensor<3xf32>>
# CHECK: %[[ADD:.*]] = pdg.node "add" [b] (%{{.*}} = %[[X]][b] : !pdg.value<[b], tensor<3xf32>>, %{{.*}} = %y[] : !pdg.value<[], tensor<2x3xf32>>) -> tensor<2x3xf32>
# CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]}
# CHECK: arith.addf
# CHECK: pdg.node "mul" [b]
# CHECK: arith.constant 2.000000e+00 : f32
# CHECK: pdg.node "tanh" [b]
# CHECK: math.tanh
# CHECK: pdg.node "neg"
# CHECK: arith.negf
# CHECK: pdg.node "exp"
# CHECK: pdg.node "floordiv"
# CHECK: arith.floordivsi
# CHECK: arith.subi
# CHECK: pdg.output "s"
# CHECK: pdg.output "n"
