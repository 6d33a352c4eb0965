// pdg-lower-to-loops with two loop nests over t: a forward recurrence h,
// then a backward one d (the shape of its gradient), then a total computed
// whole after both. The backward loop counts k up and runs step 7 - k.
// RUN: pdg-opt %s --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s

// CHECK-LABEL: func.func @pdg_two_nests(
// The forward nest: step k is t.
// CHECK: scf.for %[[K1:.*]] = %{{.*}} to %{{.*}} step
// CHECK: func.call @two_nests_h_1_into
// CHECK: }
// The backward nest: t = 8 - 1 - k.
// CHECK: scf.for %[[K2:.*]] = %{{.*}} to %[[N:.*]] step
// CHECK: %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[T:.*]] = arith.subi %[[LAST]], %[[K2]] : index
// CHECK: func.call @two_nests_d_0_into
// CHECK: }
// After both: the total, once.
// CHECK: func.call @two_nests_total_0_into
!v = !pdg.value<[t], tensor<f32>>

pdg.graph @two_nests {
  pdg.dim @t < 8
  %x = pdg.input "x" : !v
  %h = pdg.node "h" [t] -> tensor<f32>
    case (t == 0) (%a = %x[t] : !v) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %h[t - 1] : !v, %a = %x[t] : !v) {
      %s = arith.mulf %p, %a : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
  %d = pdg.node "d" [t] -> tensor<f32>
    case (t <= 6) (%n = %d[t + 1] : !v, %c = %h[t] : !v) {
      %s = arith.addf %n, %c : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
    default (%c = %h[t] : !v) {
      pdg.yield %c : tensor<f32>
    }
  %total = pdg.node "total" [] (%a = %d[0 : 8] : !v) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %e = tensor.extract %a[%c0] : tensor<8xf32>
    %r = tensor.from_elements %e : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "total" %total : !pdg.value<[], tensor<f32>>
}
