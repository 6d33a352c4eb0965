# Host callbacks (UDFs), launch and dynamic dims, coordinates.
# RUN: %python %s | FileCheck %s
import pdg.frontend as pdg


def reward(tokens):
    return float(len(tokens))


prog = pdg.Program("rl")
b = prog.dim("b", launch="B", max=16)
t = prog.dim("t", dynamic="T", max=32)
tok = prog.input("tok", (), "i64", domain=[b, t])
pos = prog.coordinate(t)
done = pos >= 5
t.until(done)
r = prog.udf(reward, [tok[b, 0 : t.size]], (), "f32")
prog.output("reward", r)
print(prog.build())

# CHECK-LABEL: pdg.graph @rl
# CHECK: pdg.dim @b < launch B max 16
# CHECK: pdg.dim @t < dynamic T max 32 until %[[DONE:.*]] : !pdg.value<[t], tensor<i1>>
# CHECK: pdg.node "coordinate" [t] -> tensor<i64>
# CHECK: pdg.point @t : index
# CHECK: %[[DONE]] = pdg.node
# CHECK: %reward = pdg.udf "reward" [b] (%tok[b, 0 : T] : !pdg.value<[b, t], tensor<i64>>) -> tensor<f32>
# CHECK: pdg.output "reward" %reward
