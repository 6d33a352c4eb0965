// pdg-dedup merges nodes that compute the same thing from the same inputs,
// repeatedly, so a duplicated sub-model collapses into one.
// RUN: pdg-opt %s --split-input-file --pdg-dedup | FileCheck %s
// RUN: pdg-opt %s --split-input-file --pdg-dedup --pdg-dce | FileCheck %s --check-prefix=DCE

!v = !pdg.value<[t], tensor<4xf32>>

// Two copies of a two-node trunk feed two heads: after dedup both heads read
// the first copy, and the second copy has no reader left.
// CHECK-LABEL: pdg.graph @duplicated_trunk
// CHECK: %h1 = pdg.node "h1" [t] (%{{.*}} = %x[t]
// CHECK: %g1 = pdg.node "g1" [t] (%{{.*}} = %h1[t]
// CHECK-NOT: pdg.node "h2"
// CHECK-NOT: pdg.node "g2"
// CHECK: %head_a = pdg.node "head_a" [t] (%{{.*}} = %g1[t]
// CHECK: %head_b = pdg.node "head_b" [t] (%{{.*}} = %g1[t]
// DCE-LABEL: pdg.graph @duplicated_trunk
// DCE-COUNT-4: pdg.node
// DCE-NOT: pdg.node
pdg.graph @duplicated_trunk {
  pdg.dim @t < 8
  %x = pdg.input "x" : !v
  %h1 = pdg.node "h1" [t] (%a = %x[t] : !v) -> tensor<4xf32> {
    %e = math.exp %a : tensor<4xf32>
    pdg.yield %e : tensor<4xf32>
  }
  %g1 = pdg.node "g1" [t] (%a = %h1[t] : !v) -> tensor<4xf32> {
    %s = arith.addf %a, %a : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  %h2 = pdg.node "h2" [t] (%a = %x[t] : !v) -> tensor<4xf32> {
    %e = math.exp %a : tensor<4xf32>
    pdg.yield %e : tensor<4xf32>
  }
  %g2 = pdg.node "g2" [t] (%a = %h2[t] : !v) -> tensor<4xf32> {
    %s = arith.addf %a, %a : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  %head_a = pdg.node "head_a" [t] (%a = %g1[t] : !v) -> tensor<4xf32> {
    %n = arith.negf %a : tensor<4xf32>
    pdg.yield %n : tensor<4xf32>
  }
  %head_b = pdg.node "head_b" [t] (%a = %g2[t] : !v) -> tensor<4xf32> {
    %m = arith.mulf %a, %a : tensor<4xf32>
    pdg.yield %m : tensor<4xf32>
  }
  pdg.output "a" %head_a : !v
  pdg.output "b" %head_b : !v
}

// -----

!v = !pdg.value<[t], tensor<4xf32>>

// Different accesses, bodies or cases keep nodes apart; UDFs are never merged.
// CHECK-LABEL: pdg.graph @different
// DCE-LABEL: pdg.graph @different
// CHECK: pdg.node "p"
// CHECK: pdg.node "q"
// CHECK: pdg.node "r"
// CHECK: pdg.node "s"
// CHECK: pdg.udf "f"
// CHECK: pdg.udf "f"
pdg.graph @different {
  pdg.dim @t < 8
  %x = pdg.input "x" : !v
  %p = pdg.node "p" [t] (%a = %x[t] : !v) -> tensor<4xf32> {
    %e = math.exp %a : tensor<4xf32>
    pdg.yield %e : tensor<4xf32>
  }
  %q = pdg.node "q" [t] -> tensor<4xf32>
    case (t >= 1) (%a = %x[t - 1] : !v) {
      %e = math.exp %a : tensor<4xf32>
      pdg.yield %e : tensor<4xf32>
    }
  %r = pdg.node "r" [t] (%a = %x[t] : !v) -> tensor<4xf32> {
    %e = math.log %a : tensor<4xf32>
    pdg.yield %e : tensor<4xf32>
  }
  %s = pdg.node "s" [t] -> tensor<4xf32>
    case (t <= 6) (%a = %x[t] : !v) {
      %e = math.exp %a : tensor<4xf32>
      pdg.yield %e : tensor<4xf32>
    }
  %f1 = pdg.udf "f" [t] (%x[t] : !v) -> tensor<f32>
  %f2 = pdg.udf "f" [t] (%x[t] : !v) -> tensor<f32>
  pdg.output "p" %p : !v
  pdg.output "q" %q : !v
  pdg.output "r" %r : !v
  pdg.output "s" %s : !v
  pdg.output "f1" %f1 : !pdg.value<[t], tensor<f32>>
  pdg.output "f2" %f2 : !pdg.value<[t], tensor<f32>>
}
