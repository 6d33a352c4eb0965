// pdg-fuse: a node read only by one other node, at the reader's own point,
// is computed in the reader's body.
// RUN: pdg-opt %s --split-input-file --pdg-fuse | FileCheck %s

!v = !pdg.value<[b, t], tensor<4xf32>>

// A chain a -> s -> c collapses into c: a's read of x[b, t - 1] moves into
// c's case unchanged, and both bodies run in order in c. a and s are
// guarded as the case of c that reads them.
// CHECK-LABEL: pdg.graph @chain
// CHECK-NOT: pdg.node "a"
// CHECK-NOT: pdg.node "s"
// CHECK: %c = pdg.node "c" [b, t] -> tensor<4xf32>
// CHECK-NEXT: case (t >= 1) (%[[Y:.*]] = %y[b, t] : !pdg.value<[b, t], tensor<4xf32>>, %[[X:.*]] = %x[b, t - 1] : !pdg.value<[b, t], tensor<4xf32>>) {
// CHECK-NEXT: math.exp %[[X]]
// CHECK-NEXT: math.tanh
// CHECK-NEXT: arith.addf
// CHECK: default (%{{.*}} = %y[b, t]
pdg.graph @chain {
  pdg.dim @b < launch B
  pdg.dim @t < 8
  %x = pdg.input "x" : !v
  %y = pdg.input "y" : !v
  %a = pdg.node "a" [b, t] -> tensor<4xf32>
    case (t >= 1) (%p = %x[b, t - 1] : !v) {
      %e = math.exp %p : tensor<4xf32>
      pdg.yield %e : tensor<4xf32>
    }
  %s = pdg.node "s" [b, t] -> tensor<4xf32>
    case (t >= 1) (%p = %a[b, t] : !v) {
      %e = math.tanh %p : tensor<4xf32>
      pdg.yield %e : tensor<4xf32>
    }
  %c = pdg.node "c" [b, t] -> tensor<4xf32>
    case (t >= 1) (%q = %s[b, t] : !v, %r = %y[b, t] : !v) {
      %e = arith.addf %q, %r : tensor<4xf32>
      pdg.yield %e : tensor<4xf32>
    }
    default (%r = %y[b, t] : !v) {
      pdg.yield %r : tensor<4xf32>
    }
  pdg.output "c" %c : !v
}

// -----

!v = !pdg.value<[t], tensor<f32>>

// Not fused: a read at another point (t - 1), a producer with two readers
// and an output, a producer over fewer dims, and a guarded producer read
// by a case guarded otherwise.
// CHECK-LABEL: pdg.graph @kept
// CHECK: pdg.node "shifted"
// CHECK: pdg.node "shared"
// CHECK: pdg.node "scalar"
// CHECK: pdg.node "guarded"
// CHECK: pdg.node "r1"
// CHECK: pdg.node "r2"
pdg.graph @kept {
  pdg.dim @t < 8
  %x = pdg.input "x" : !v
  %shifted = pdg.node "shifted" [t] (%p = %x[t] : !v) -> tensor<f32> {
    pdg.yield %p : tensor<f32>
  }
  %shared = pdg.node "shared" [t] (%p = %x[t] : !v) -> tensor<f32> {
    pdg.yield %p : tensor<f32>
  }
  %scalar = pdg.node "scalar" [] (%p = %x[0] : !v) -> tensor<f32> {
    pdg.yield %p : tensor<f32>
  }
  %guarded = pdg.node "guarded" [t] -> tensor<f32>
    case (t >= 2) (%p = %x[t] : !v) {
      pdg.yield %p : tensor<f32>
    }
  %r1 = pdg.node "r1" [t] -> tensor<f32>
    case (t >= 2) (%p = %shifted[t - 1] : !v, %q = %shared[t] : !v, %s = %scalar[] : !pdg.value<[], tensor<f32>>, %g = %guarded[t] : !v) {
      %e = arith.addf %p, %q : tensor<f32>
      %f = arith.addf %e, %s : tensor<f32>
      pdg.yield %f : tensor<f32>
    }
    case (t >= 1) (%g = %guarded[t] : !v) {
      pdg.yield %g : tensor<f32>
    }
    default (%q = %shared[t] : !v) {
      pdg.yield %q : tensor<f32>
    }
  %r2 = pdg.node "r2" [t] (%q = %shared[t] : !v) -> tensor<f32> {
    pdg.yield %q : tensor<f32>
  }
  pdg.output "r1" %r1 : !v
  pdg.output "r2" %r2 : !v
  pdg.output "shared" %shared : !v
}

// -----

!ids = !pdg.value<[b, t], tensor<8xi64>>
!v = !pdg.value<[b, t], tensor<8x64xf32>>

// A producer with several readers is computed in each of them when it
// spreads small reads over a value at least 4x their size, element by
// element: the one-hot of eight ids over 64 entries (8 + 64 elements read,
// 512 written) is read by the step and by its gradient. `twice` (as large
// as what it reads) keeps its store.
// CHECK-LABEL: pdg.graph @recomputed
// CHECK-NOT: pdg.node "hot"
// CHECK: pdg.node "twice"
// CHECK: %logp = pdg.node "logp" [b, t] (%{{.*}} = %x[b, t] : !pdg.value<[b, t], tensor<8x64xf32>>, %{{.*}} = %twice[b, t] : !pdg.value<[b, t], tensor<8x64xf32>>, %{{.*}} = %ids[b, t] : !pdg.value<[b, t], tensor<8xi64>>, %{{.*}} = %vocab[] : !pdg.value<[], tensor<64xi64>>)
// CHECK: linalg.generic
// CHECK: arith.cmpi eq
// CHECK: %grad = pdg.node "grad" [b, t] (%{{.*}} = %twice[b, t] : !pdg.value<[b, t], tensor<8x64xf32>>, %{{.*}} = %ids[b, t] : !pdg.value<[b, t], tensor<8xi64>>, %{{.*}} = %vocab[] : !pdg.value<[], tensor<64xi64>>)
// CHECK: arith.cmpi eq
pdg.graph @recomputed {
  pdg.dim @b < launch B
  pdg.dim @t < 8
  %x = pdg.input "x" : !v
  %ids = pdg.input "ids" : !ids
  %vocab = pdg.input "vocab" : !pdg.value<[], tensor<64xi64>>
  %hot = pdg.node "hot" [b, t] (%i = %ids[b, t] : !ids, %w = %vocab[] : !pdg.value<[], tensor<64xi64>>) -> tensor<8x64xf32> {
    %e = tensor.empty() : tensor<8x64xf32>
    %h = linalg.generic {indexing_maps = [affine_map<(r, v) -> (r)>, affine_map<(r, v) -> (v)>, affine_map<(r, v) -> (r, v)>], iterator_types = ["parallel", "parallel"]} ins(%i, %w : tensor<8xi64>, tensor<64xi64>) outs(%e : tensor<8x64xf32>) {
    ^bb0(%a: i64, %c: i64, %o: f32):
      %same = arith.cmpi eq, %a, %c : i64
      %one = arith.uitofp %same : i1 to f32
      linalg.yield %one : f32
    } -> tensor<8x64xf32>
    pdg.yield %h : tensor<8x64xf32>
  }
  %twice = pdg.node "twice" [b, t] (%p = %x[b, t] : !v) -> tensor<8x64xf32> {
    %e = arith.addf %p, %p : tensor<8x64xf32>
    pdg.yield %e : tensor<8x64xf32>
  }
  %logp = pdg.node "logp" [b, t] (%p = %x[b, t] : !v, %h = %hot[b, t] : !v, %q = %twice[b, t] : !v) -> tensor<8x64xf32> {
    %e = arith.mulf %p, %h : tensor<8x64xf32>
    %f = arith.addf %e, %q : tensor<8x64xf32>
    pdg.yield %f : tensor<8x64xf32>
  }
  %grad = pdg.node "grad" [b, t] (%q = %twice[b, t] : !v, %h = %hot[b, t] : !v) -> tensor<8x64xf32> {
    %e = arith.mulf %q, %h : tensor<8x64xf32>
    pdg.yield %e : tensor<8x64xf32>
  }
  pdg.output "logp" %logp : !v
  pdg.output "grad" %grad : !v
}
