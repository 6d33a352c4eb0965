// pdg-fuse's max-reads: a producer that shrinks what it reads (a sum of
// squares) is fused only while its reader then reads at most max-reads
// values, so a chain adding up one such sum per weight (a global gradient
// norm) is cut into nodes of that many reads instead of becoming one body.
// RUN: pdg-opt %s --pdg-fuse | FileCheck %s --check-prefix=ALL
// RUN: pdg-opt %s --pdg-fuse='max-reads=2' | FileCheck %s --check-prefix=CUT

!g = !pdg.value<[i], tensor<64xf32>>
!s = !pdg.value<[i], tensor<f32>>

// By default the whole chain is one node reading the three gradients.
// ALL-LABEL: pdg.graph @norm
// ALL-NOT: pdg.node "t1"
// ALL: %t2 = pdg.node "t2" [i] (%{{.*}} = %g1[i] : {{.*}}, %{{.*}} = %g2[i] : {{.*}}, %{{.*}} = %g3[i] : {{.*}}) -> tensor<f32>
// ALL-COUNT-3: linalg.reduce

// With max-reads=2, t1 (reading g1 and g2) shrinks them to one number and
// would make t2 read three values: it stays a node of its own, and t2 takes
// only q3's sum.
// CUT-LABEL: pdg.graph @norm
// CUT-NOT: pdg.node "q
// CUT: %t1 = pdg.node "t1" [i] (%{{.*}} = %g1[i] : {{.*}}, %{{.*}} = %g2[i] : {{.*}}) -> tensor<f32>
// CUT-COUNT-2: linalg.reduce
// CUT: %t2 = pdg.node "t2" [i] (%{{.*}} = %t1[i] : {{.*}}, %{{.*}} = %g3[i] : {{.*}}) -> tensor<f32>
// CUT-COUNT-1: linalg.reduce
// CUT-NOT: linalg.reduce
pdg.graph @norm {
  pdg.dim @i < 4
  %g1 = pdg.input "g1" : !g
  %g2 = pdg.input "g2" : !g
  %g3 = pdg.input "g3" : !g
  %q1 = pdg.node "q1" [i] (%p = %g1[i] : !g) -> tensor<f32> {
    %sq = arith.mulf %p, %p : tensor<64xf32>
    %z = tensor.empty() : tensor<f32>
    %c0 = arith.constant 0.0 : f32
    %init = linalg.fill ins(%c0 : f32) outs(%z : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%sq : tensor<64xf32>) outs(%init : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      }
    pdg.yield %sum : tensor<f32>
  }
  %q2 = pdg.node "q2" [i] (%p = %g2[i] : !g) -> tensor<f32> {
    %sq = arith.mulf %p, %p : tensor<64xf32>
    %z = tensor.empty() : tensor<f32>
    %c0 = arith.constant 0.0 : f32
    %init = linalg.fill ins(%c0 : f32) outs(%z : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%sq : tensor<64xf32>) outs(%init : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      }
    pdg.yield %sum : tensor<f32>
  }
  %q3 = pdg.node "q3" [i] (%p = %g3[i] : !g) -> tensor<f32> {
    %sq = arith.mulf %p, %p : tensor<64xf32>
    %z = tensor.empty() : tensor<f32>
    %c0 = arith.constant 0.0 : f32
    %init = linalg.fill ins(%c0 : f32) outs(%z : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%sq : tensor<64xf32>) outs(%init : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      }
    pdg.yield %sum : tensor<f32>
  }
  %t1 = pdg.node "t1" [i] (%a = %q1[i] : !s, %b = %q2[i] : !s) -> tensor<f32> {
    %e = arith.addf %a, %b : tensor<f32>
    pdg.yield %e : tensor<f32>
  }
  %t2 = pdg.node "t2" [i] (%a = %t1[i] : !s, %b = %q3[i] : !s) -> tensor<f32> {
    %e = arith.addf %a, %b : tensor<f32>
    pdg.yield %e : tensor<f32>
  }
  pdg.output "t2" %t2 : !s
}
