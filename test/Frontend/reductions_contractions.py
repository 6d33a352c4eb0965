# Reductions (sum, mean, max over axes, keepdims) and contractions (matmul,
# einsum) as linalg.generic with reduction iterators; softmax as
# linalg.softmax; log_softmax composed from max, exp, sum and log.
# RUN: %python %s | FileCheck %s
import pdg.frontend as pdg

prog = pdg.Program("reduce")
x = prog.input("x", (2, 3), "f32")
w = prog.input("w", (3, 5), "f32")
prog.output("sum", x.sum(axis=1))
prog.output("mean", x.mean(axis=0, keepdims=True))
prog.output("max", x.max())
prog.output("mm", x @ w)
prog.output("ein", pdg.einsum("ij,jk->ki", x, w))
prog.output("sm", pdg.softmax(x, axis=-1))
prog.output("lsm", pdg.log_softmax(x))
print(prog.build())

# CHECK-LABEL: pdg.graph @reduce
# CHECK: pdg.node "reduce" []
# CHECK: iterator_types = ["parallel", "reduction"]
# CHECK: arith.addf
# CHECK: pdg.node "reduce_1" []
# CHECK: arith.divf
# CHECK: tensor.expand_shape
# CHECK: pdg.node "reduce_2" []
# CHECK: arith.maximumf
# CHECK: pdg.node "einsum" [] ({{.*}}) -> tensor<2x5xf32>
# CHECK: iterator_types = ["parallel", "parallel", "reduction"]
# CHECK: arith.mulf
# CHECK: pdg.node "einsum_1" [] ({{.*}}) -> tensor<5x2xf32>
# CHECK: pdg.node "softmax" []
# CHECK: linalg.softmax dimension(1)
# CHECK: math.log
