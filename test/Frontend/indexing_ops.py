# Gather (take / embedding lookup), argmax, seeded sampling, casts,
# comparisons and where, concatenation, reshape and permute.
# RUN: %python %s | FileCheck %s
import pdg.frontend as pdg

prog = pdg.Program("indexing")
b = prog.dim("b", 2)
table = prog.input("table", (10, 4), "f32")
ids = prog.input("ids", (3,), "i64", domain=[b])
e = pdg.take(table, ids, axis=0)
prog.output("emb", e)
prog.output("am", pdg.argmax(e, axis=-1))
prog.output("smp", pdg.sample(e, seed=7, temperature=0.5))
prog.output("sel", pdg.where(e > 0.0, e, 0.0))
prog.output("cast", ids.astype("f32"))
prog.output("cat", pdg.concat([e, e], axis=0))
prog.output("rs", e.reshape(12))
prog.output("pm", e.permute(1, 0))
print(prog.build())

# CHECK-LABEL: pdg.graph @indexing
# CHECK: pdg.node "take" [b] ({{.*}}%table[] {{.*}}%ids[b] {{.*}}) -> tensor<3x4xf32>
# CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<10x4xf32>
# CHECK: pdg.node "argmax" [b]
# CHECK: arith.cmpf ogt
# CHECK: arith.select
# CHECK: pdg.node "argmax_1" [b]
# CHECK: pdg.point @b
# CHECK: arith.shrui
# CHECK: math.log
# CHECK: pdg.node "gt" [b]
# CHECK: arith.cmpf ogt
# CHECK: pdg.node "where" [b]
# CHECK: arith.select
# CHECK: pdg.node "astype" [b]
# CHECK: arith.sitofp
# CHECK: tensor.concat dim(0)
# CHECK: tensor.reshape
# CHECK: linalg.transpose
