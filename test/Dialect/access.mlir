// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of accesses of every shape (points, affine forms, slices, symbols) and of #pdg.access.

// Points: the same point, an earlier point (guarded), a fixed point.
// CHECK-LABEL: pdg.graph @points {
// CHECK:         %y = pdg.node "y" [b, t] -> tensor<f32>
// CHECK-NEXT:      case (t == 0) (%arg0 = %x[b, t] : !pdg.value<[b, t], tensor<f32>>, %arg1 = %x[0, 3] : !pdg.value<[b, t], tensor<f32>>) {
// CHECK:           case (t >= 1) (%arg0 = %x[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "points"}> ({
// GENERIC:         accesses = [#pdg.access<(d0, d1) : [d0, d1]>, #pdg.access<(d0, d1) : [0, 3]>, #pdg.access<(d0, d1) : [d0, d1 - 1]>]
pdg.graph @points {
  pdg.dim @b < 4
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  %y = pdg.node "y" [b, t] -> tensor<f32>
    case (t == 0) (%a = %x[b, t] : !pdg.value<[b, t], tensor<f32>>, %c = %x[0, 3] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %x[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[b, t], tensor<f32>>
}

// Quasi-affine points: floordiv, mod, ceildiv by positive constants,
// products with constants, later points, and sums of dims. Expressions are
// printed in MLIR's canonical order (`2 * t` prints as `t * 2`); nested
// products and quotients are parenthesized.
// CHECK-LABEL: pdg.graph @quasi_affine {
// CHECK:         %y = pdg.node "y" [b, t] (%arg0 = %x[(t floordiv 16) * 16] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[t mod 4] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[t ceildiv 2] : !pdg.value<[t], tensor<f32>>, %arg3 = %x[t * 2] : !pdg.value<[t], tensor<f32>>, %arg4 = %x[t + 1] : !pdg.value<[t], tensor<f32>>, %arg5 = %x[b * 4 + t] : !pdg.value<[t], tensor<f32>>, %arg6 = %x[-t + 63] : !pdg.value<[t], tensor<f32>>, %arg7 = %x[(t + 1) floordiv 2] : !pdg.value<[t], tensor<f32>>, %arg8 = %x[(t mod 4) * 2] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "quasi_affine"}> ({
// GENERIC:         accesses = [#pdg.access<(d0, d1) : [(d1 floordiv 16) * 16]>, #pdg.access<(d0, d1) : [d1 mod 4]>, #pdg.access<(d0, d1) : [d1 ceildiv 2]>, #pdg.access<(d0, d1) : [d1 * 2]>, #pdg.access<(d0, d1) : [d1 + 1]>, #pdg.access<(d0, d1) : [d0 * 4 + d1]>, #pdg.access<(d0, d1) : [-d1 + 63]>, #pdg.access<(d0, d1) : [(d1 + 1) floordiv 2]>, #pdg.access<(d0, d1) : [(d1 mod 4) * 2]>]
pdg.graph @quasi_affine {
  pdg.dim @b < 4
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [b, t] (%a0 = %x[(t floordiv 16) * 16] : !pdg.value<[t], tensor<f32>>, %a1 = %x[t mod 4] : !pdg.value<[t], tensor<f32>>, %a2 = %x[t ceildiv 2] : !pdg.value<[t], tensor<f32>>, %a3 = %x[2 * t] : !pdg.value<[t], tensor<f32>>, %a4 = %x[t + 1] : !pdg.value<[t], tensor<f32>>, %a5 = %x[4 * b + t] : !pdg.value<[t], tensor<f32>>, %a6 = %x[63 - t] : !pdg.value<[t], tensor<f32>>, %a7 = %x[(t + 1) floordiv 2] : !pdg.value<[t], tensor<f32>>, %a8 = %x[t mod 4 * 2] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a0 : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[b, t], tensor<f32>>
}

// Expressions are folded as they are parsed.
// CHECK-LABEL: pdg.graph @folded {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[0] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[6] : !pdg.value<[t], tensor<f32>>, %arg3 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
pdg.graph @folded {
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[t - 2 * 3 + 6] : !pdg.value<[t], tensor<f32>>, %b = %x[t - t] : !pdg.value<[t], tensor<f32>>, %c = %x[(2 + 1) * 2] : !pdg.value<[t], tensor<f32>>, %d = %x[t floordiv 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// Slices add a leading dimension to the body argument: dynamic when the
// extent is symbolic, static when it is constant (`t - 3 : t + 1` reads 4
// points, `0 : 8` reads 8).
// CHECK-LABEL: pdg.graph @slices {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[0 : t + 1] : !pdg.value<[t], tensor<16xf32>>, %arg1 = %x[t - 3 : t + 1] : !pdg.value<[t], tensor<16xf32>>, %arg2 = %x[0 : 8] : !pdg.value<[t], tensor<16xf32>>, %arg3 = %x[t + 1 : t + 2] : !pdg.value<[t], tensor<16xf32>>) -> tensor<4x16xf32> {
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = tensor.dim %arg0, %[[C0]] : tensor<?x16xf32>
// CHECK-NEXT:      %{{.*}} = tensor.extract_slice %arg2[0, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
// CHECK-NEXT:      pdg.yield %arg1 : tensor<4x16xf32>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "slices"}> ({
// GENERIC:           ^bb0(%{{.*}}: tensor<?x16xf32>, %{{.*}}: tensor<4x16xf32>, %{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<1x16xf32>):
pdg.graph @slices {
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<16xf32>>
  %y = pdg.node "y" [t] (%pre = %x[0 : t + 1] : !pdg.value<[t], tensor<16xf32>>, %win = %x[t - 3 : t + 1] : !pdg.value<[t], tensor<16xf32>>, %head = %x[0 : 8] : !pdg.value<[t], tensor<16xf32>>, %one = %x[t + 1 : t + 2] : !pdg.value<[t], tensor<16xf32>>) -> tensor<4x16xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %pre, %c0 : tensor<?x16xf32>
    %s = tensor.extract_slice %head[0, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    pdg.yield %win : tensor<4x16xf32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<4x16xf32>>
}

// Slices over several dims, a slice next to a point, and a point type of
// rank 2: the slice dims come first, in producer dim order.
// CHECK-LABEL: pdg.graph @multi_slice {
// CHECK:         %y = pdg.node "y" [h] (%arg0 = %kv[0 : 2, h, 0 : 3] : !pdg.value<[b, h, t], tensor<4x8xbf16>>) -> tensor<2x3x4x8xbf16> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<2x3x4x8xbf16>
pdg.graph @multi_slice {
  pdg.dim @b < 2
  pdg.dim @h < 4
  pdg.dim @t < 3
  %kv = pdg.input "kv" : !pdg.value<[b, h, t], tensor<4x8xbf16>>
  %y = pdg.node "y" [h] (%a = %kv[0 : 2, h, 0 : 3] : !pdg.value<[b, h, t], tensor<4x8xbf16>>) -> tensor<2x3x4x8xbf16> {
    pdg.yield %a : tensor<2x3x4x8xbf16>
  }
  pdg.output "y" %y : !pdg.value<[h], tensor<2x3x4x8xbf16>>
}

// Slices with several bounds: `max(...)` lower bounds, `min(...)` upper
// bounds; the extent is then dynamic even when each pair is constant.
// CHECK-LABEL: pdg.graph @max_min_bounds {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[max(0, t - 63) : t + 1] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[t : min(t + 16, 512)] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[max(0, t - 3, t - 5) : min(t + 1, t + 4)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "max_min_bounds"}> ({
// GENERIC:         accesses = [#pdg.access<(d0) : [max(0, d0 - 63) : d0 + 1]>, #pdg.access<(d0) : [d0 : min(d0 + 16, 512)]>, #pdg.access<(d0) : [max(0, d0 - 3, d0 - 5) : min(d0 + 1, d0 + 4)]>]
// GENERIC:         ^bb0(%{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>):
pdg.graph @max_min_bounds {
  pdg.dim @t < 512
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%w = %x[max(0, t - 63) : t + 1] : !pdg.value<[t], tensor<f32>>, %n = %x[t : min(t + 16, 512)] : !pdg.value<[t], tensor<f32>>, %z = %x[max(0, t - 3, t - 5) : min(t + 1, t + 4)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// Symbols: the bound names of launch and dynamic dims may appear in
// accesses. The node's symbols are sorted by name, whatever the order they
// first appear in (T here, then B).
// CHECK-LABEL: pdg.graph @symbols {
// CHECK-NEXT:    pdg.dim @b < launch B
// CHECK-NEXT:    pdg.dim @t < dynamic T max 128 until %stop : !pdg.value<[t], tensor<i1>>
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
// CHECK-NEXT:    %stop = pdg.input "stop" : !pdg.value<[t], tensor<i1>>
// CHECK-NEXT:    %y = pdg.node "y" [] (%arg0 = %stop[T - 1] : !pdg.value<[t], tensor<i1>>, %arg1 = %x[0 : B, 0 : T] : !pdg.value<[b, t], tensor<f32>>, %arg2 = %x[B - 1, T - 1] : !pdg.value<[b, t], tensor<f32>>, %arg3 = %x[0 : B, max(0, T - 4) : T] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg2 : tensor<f32>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "symbols"}> ({
// GENERIC:         "pdg.node"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{accesses = [#pdg.access<()[s0, s1] : [s1 - 1]>, #pdg.access<()[s0, s1] : [0 : s0, 0 : s1]>, #pdg.access<()[s0, s1] : [s0 - 1, s1 - 1]>, #pdg.access<()[s0, s1] : [0 : s0, max(0, s1 - 4) : s1]>], conditions = [#{{.*}}], name = "y", symbols = ["B", "T"]}>
// GENERIC-NEXT:    ^bb0(%{{.*}}: tensor<i1>, %{{.*}}: tensor<?x?xf32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<?x?xf32>):
pdg.graph @symbols {
  pdg.dim @b < launch B
  pdg.dim @t < dynamic T max 128 until %stop : !pdg.value<[t], tensor<i1>>
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  %stop = pdg.input "stop" : !pdg.value<[t], tensor<i1>>
  %y = pdg.node "y" [] (%end = %stop[T - 1] : !pdg.value<[t], tensor<i1>>, %all = %x[0 : B, 0 : T] : !pdg.value<[b, t], tensor<f32>>, %last = %x[B - 1, T - 1] : !pdg.value<[b, t], tensor<f32>>, %tail = %x[0 : B, max(0, T - 4) : T] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %last : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[], tensor<f32>>
}

// Empty accesses `[]` read a value with an empty domain; a node with an empty
// domain reads fixed points or whole slices.
// CHECK-LABEL: pdg.graph @empty_domains {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %w[] : !pdg.value<[], tensor<4x4xf32>>) -> tensor<4x4xf32> {
// CHECK:         %z = pdg.node "z" [] (%arg0 = %y[2] : !pdg.value<[t], tensor<4x4xf32>>, %arg1 = %y[0 : 8] : !pdg.value<[t], tensor<4x4xf32>>, %arg2 = %w[] : !pdg.value<[], tensor<4x4xf32>>) -> tensor<4x4xf32> {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "empty_domains"}> ({
// GENERIC:         accesses = [#pdg.access<(d0) : []>]
// GENERIC:         accesses = [#pdg.access<() : [2]>, #pdg.access<() : [0 : 8]>, #pdg.access<() : []>]
// GENERIC:         ^bb0(%{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<8x4x4xf32>, %{{.*}}: tensor<4x4xf32>):
pdg.graph @empty_domains {
  pdg.dim @t < 8
  %w = pdg.input "w" : !pdg.value<[], tensor<4x4xf32>>
  %y = pdg.node "y" [t] (%a = %w[] : !pdg.value<[], tensor<4x4xf32>>) -> tensor<4x4xf32> {
    pdg.yield %a : tensor<4x4xf32>
  }
  %z = pdg.node "z" [] (%p = %y[2] : !pdg.value<[t], tensor<4x4xf32>>, %all = %y[0 : 8] : !pdg.value<[t], tensor<4x4xf32>>, %w2 = %w[] : !pdg.value<[], tensor<4x4xf32>>) -> tensor<4x4xf32> {
    pdg.yield %p : tensor<4x4xf32>
  }
  pdg.output "z" %z : !pdg.value<[], tensor<4x4xf32>>
}

// Negative constants and negated sums print back in a form that parses to the
// same expression.
// CHECK-LABEL: pdg.graph @negatives {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[-(t - 5)] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[-t : 1] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[t - 7 : -t + 9] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
pdg.graph @negatives {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[-(t - 5)] : !pdg.value<[t], tensor<f32>>, %b = %x[-t : 1] : !pdg.value<[t], tensor<f32>>, %c = %x[t - 7 : 9 - t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// #pdg.access on its own binds dims and symbols positionally, whatever their
// names; it prints with d0.. and s0... Attached here as discardable
// attributes. The standalone attribute does not check affinity: the ops that
// use an access do.
// CHECK-LABEL: pdg.graph @standalone_access
// CHECK-SAME:    pdg.point_access = #pdg.access<(d0, d1) : [d0, d1 - 1]>
// CHECK-SAME:    pdg.semi_affine = #pdg.access<(d0, d1)[s0] : [d0 * d1, d1 floordiv s0 : s0]>
// CHECK-SAME:    pdg.window = #pdg.access<(d0, d1)[s0] : [d0, max(0, d1 - 63) : d1 + 1]>
// CHECK:         %x = pdg.input "x" {pdg.empty = #pdg.access<() : []>, pdg.no_symbols = #pdg.access<(d0) : [d0]>} : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    pdg.output "x" %x {pdg.sliced = #pdg.access<(d0)[s0, s1] : [max(0, s1) : min(d0 + 1, s0)]>} : !pdg.value<[t], tensor<f32>>
pdg.graph @standalone_access attributes {
    pdg.window = #pdg.access<(d0, d1)[s0] : [d0, max(0, d1 - 63) : d1 + 1]>,
    pdg.point_access = #pdg.access<(b, t) : [b, t - 1]>,
    pdg.semi_affine = #pdg.access<(i, j)[N] : [i * j, j floordiv N : N]>} {
  pdg.dim @t < 8
  %x = pdg.input "x" {pdg.no_symbols = #pdg.access<(d0)[] : [d0]>, pdg.empty = #pdg.access<() : []>} : !pdg.value<[t], tensor<f32>>
  pdg.output "x" %x {pdg.sliced = #pdg.access<(x)[A, B] : [max(0, B) : min(x + 1, A)]>} : !pdg.value<[t], tensor<f32>>
}
