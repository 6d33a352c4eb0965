# pdg.autodiff.grad adds backward nodes to the program. A window read
# k[max(0, t - 2) : t + 1] is transposed by reading the consumers that may
# read step t, k's gradient parts over [t : min(8, t + 3)], each padded to
# the window's 3 rows, and summing their anti-diagonal. A recurrence
# x[t] = f(x[t - 1]) gets a backward recurrence reading its adjoint at t + 1.
# RUN: %python %s | FileCheck %s
import pdg.frontend as pdg
from pdg.autodiff import grad

prog = pdg.Program("grads")
t = prog.dim("t", 8)
a = prog.input("a", (4,), "f32", domain=[t])
w = prog.input("w", (4,), "f32")
k = pdg.tanh(a * w).named("k")
att = k[pdg.max(0, t - 2) : t + 1].sum(axis=0)
x = prog.recurrent((4,), "f32", domain=[t], name="x")
x[t == 0] = att
x[t > 0] = x[t - 1] * 0.5 + att
(dw,) = grad((x * x).sum(), [w])
prog.output("dw", dw)
print(prog.build())

# CHECK-LABEL: pdg.graph @grads
# w's gradient sums every step's part.
# CHECK: %d_w = pdg.node "d_w" []
# CHECK: %d_x = pdg.node "d_x" [t]
# CHECK: %reduce_2 = pdg.node "reduce_2" [] (%{{.*}} = %{{.*}}[0 : 8] : !pdg.value<[t], tensor<4xf32>>)
# The window's gradient: each step's part padded to 3 rows, then read by
# the steps that saw t.
# CHECK: pdg.node "pad_front" [t] {{.*}} -> tensor<3x4xf32>
# CHECK: pdg.node "diagonal_sum" [t] (%{{.*}} = %pad_front[t : min(8, t + 3)] : !pdg.value<[t], tensor<3x4xf32>>
# x[t - 1] transposed: the next step's part, zero at the last step.
# CHECK: %d_x_part = pdg.node "d_x_part" [t] -> tensor<4xf32>
# CHECK-NEXT: case (t + 1 <= 7) (%{{.*}} = %{{.*}}[t + 1] : !pdg.value<[t], tensor<4xf32>>)
# CHECK: default
# CHECK: pdg.output "dw" %d_w : !pdg.value<[], tensor<4xf32>>
