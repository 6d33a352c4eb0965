// pdg-incrementalize: a reduction over a finished sequence becomes a running
// accumulator over the sequence dim plus a read of its last step.
// RUN: pdg-opt %s --split-input-file --pdg-incrementalize | FileCheck %s

!x = !pdg.value<[b, t], tensor<4xf32>>

// CHECK-LABEL: pdg.graph @sum_after_the_loop
// CHECK:      %total_running = pdg.node "total_running" [b, t] -> tensor<f32>
// CHECK-NEXT:   case (t == 0) (%[[A:.*]] = %x[b, t : t + 1] : !pdg.value<[b, t], tensor<4xf32>>) {
// CHECK-NEXT:     %[[C:.*]] = tensor.cast %[[A]] : tensor<1x4xf32> to tensor<?x4xf32>
// CHECK:          linalg.generic
// CHECK:          arith.addf
// CHECK:        case (t >= 1) (%[[B:.*]] = %x[b, t : t + 1] : !pdg.value<[b, t], tensor<4xf32>>, %[[P:.*]] = %total_running[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
// CHECK:          %[[S:.*]] = linalg.generic
// CHECK:          %[[N:.*]] = arith.addf %[[P]], %[[S]] : tensor<f32>
// CHECK-NEXT:     pdg.yield %[[N]] : tensor<f32>
// CHECK:      %total = pdg.node "total" [b] (%{{.*}} = %total_running[b, T - 1] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
// CHECK:      pdg.output "total" %total
pdg.graph @sum_after_the_loop {
  pdg.dim @b < launch B
  pdg.dim @t < launch T
  %x = pdg.input "x" : !x
  %total = pdg.node "total" [b] (%s = %x[b, 0 : T] : !x) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%s : tensor<?x4xf32>) outs(%init : tensor<f32>) {
      ^bb0(%in: f32, %acc: f32):
        %sq = arith.mulf %in, %in : f32
        %n = arith.addf %sq, %acc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "total" %total : !pdg.value<[b], tensor<f32>>
}

// -----

// A max starts from -inf; a sequence dim without a batch dim reads its last
// step directly.
// CHECK-LABEL: pdg.graph @max_over_launch_dim
// CHECK: %m_running = pdg.node "m_running" [t]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: %m = pdg.node "m" [] (%{{.*}} = %m_running[T - 1] : !pdg.value<[t], tensor<f32>>)
pdg.graph @max_over_launch_dim {
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %m = pdg.node "m" [] (%s = %x[0 : T] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %ninf = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%s : tensor<?xf32>) outs(%init : tensor<f32>) {
      ^bb0(%in: f32, %acc: f32):
        %n = arith.maximumf %in, %acc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "m" %m : !pdg.value<[], tensor<f32>>
}

// -----

// Left alone: an init that is not the combiner's identity, a combiner that
// is not associative, a body that does more after the reduction (a mean),
// a slice that is not the whole sequence, and a body written for a static
// length.
// CHECK-LABEL: pdg.graph @not_incrementalizable
// CHECK-NOT: _running
// CHECK: pdg.output
pdg.graph @not_incrementalizable {
  pdg.dim @t < dynamic T max 16 until %d : !pdg.value<[t], tensor<i1>>
  pdg.dim @u < 8
  %z = pdg.input "z" : !pdg.value<[u], tensor<f32>>
  %x = pdg.input "x" : !pdg.value<[], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  %d = pdg.node "d" [t] (%a = %y[t] : !pdg.value<[t], tensor<f32>>) -> tensor<i1> {
    %z = arith.constant dense<0.0> : tensor<f32>
    %c = arith.cmpf ogt, %a, %z : tensor<f32>
    pdg.yield %c : tensor<i1>
  }
  %one = pdg.node "one" [] (%s = %y[0 : T] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c1 = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%c1 : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%s : tensor<?xf32>) outs(%init : tensor<f32>) {
      ^bb0(%in: f32, %acc: f32):
        %n = arith.addf %in, %acc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  %diff = pdg.node "diff" [] (%s = %y[0 : T] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%s : tensor<?xf32>) outs(%init : tensor<f32>) {
      ^bb0(%in: f32, %acc: f32):
        %n = arith.subf %in, %acc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  %mean = pdg.node "mean" [] (%s = %y[0 : T] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%s : tensor<?xf32>) outs(%init : tensor<f32>) {
      ^bb0(%in: f32, %acc: f32):
        %n = arith.addf %in, %acc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    %two = arith.constant dense<2.0> : tensor<f32>
    %h = arith.divf %r, %two : tensor<f32>
    pdg.yield %h : tensor<f32>
  }
  %part = pdg.node "part" [] (%s = %y[1 : T] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%s : tensor<?xf32>) outs(%init : tensor<f32>) {
      ^bb0(%in: f32, %acc: f32):
        %n = arith.addf %in, %acc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  %fixed = pdg.node "fixed" [] (%s = %z[0 : 8] : !pdg.value<[u], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%s : tensor<8xf32>) outs(%init : tensor<f32>) {
      ^bb0(%in: f32, %acc: f32):
        %n = arith.addf %in, %acc : f32
        linalg.yield %n : f32
    } -> tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "one" %one : !pdg.value<[], tensor<f32>>
  pdg.output "fixed" %fixed : !pdg.value<[], tensor<f32>>
  pdg.output "diff" %diff : !pdg.value<[], tensor<f32>>
  pdg.output "mean" %mean : !pdg.value<[], tensor<f32>>
  pdg.output "part" %part : !pdg.value<[], tensor<f32>>
}
