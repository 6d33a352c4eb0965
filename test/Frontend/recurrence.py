# Recurrences by cases: x[t == 0] = init; x[t > 0] = f(x[t - 1]). The nodes
# computing f are restricted to the case's condition, so they never read
# x[-1]; a value defined everywhere uses `x[...] = value` (a default case).
# RUN: %python %s | FileCheck %s
import pdg.frontend as pdg

prog = pdg.Program("scan")
t = prog.dim("t", 8)
a = prog.input("a", (), "f32", domain=[t])
x = prog.recurrent((), "f32", domain=[t], name="x")
x[t == 0] = a
x[t > 0] = x[t - 1] * 0.5 + a
y = prog.recurrent((), "f32", domain=[t], name="y")
y[...] = x * x
prog.output("y", y)
print(prog.build())

# CHECK-LABEL: pdg.graph @scan
# CHECK: %x = pdg.node "x" [t] -> tensor<f32>
# CHECK-NEXT: case (t == 0) (%{{.*}} = %a[t] : !pdg.value<[t], tensor<f32>>) {
# CHECK: case (t >= 1) (%{{.*}} = %add[t] : !pdg.value<[t], tensor<f32>>) {
# CHECK: %mul = pdg.node "mul" [t] -> tensor<f32>
# CHECK-NEXT: case (t >= 1) (%{{.*}} = %x[t - 1] : !pdg.value<[t], tensor<f32>>) {
# CHECK: %add = pdg.node "add" [t] -> tensor<f32>
# CHECK-NEXT: case (t >= 1) (%{{.*}} = %mul[t] : !pdg.value<[t], tensor<f32>>, %{{.*}} = %a[t] : !pdg.value<[t], tensor<f32>>) {
# A single default case prints in the short form.
# CHECK: %y = pdg.node "y" [t] (%{{.*}} = %mul_1[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
