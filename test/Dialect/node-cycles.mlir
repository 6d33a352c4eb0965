// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of cycles between nodes that read another point (the decode loop, slices, later points).

// The generic form holds the conditions as affine sets over the node's dims
// and (sorted) symbols.
// GENERIC-DAG: #[[LAST:set[0-9]*]] = affine_set<(d0, d1)[s0] : (d1 - (s0 - 1) == 0)>
// GENERIC-DAG: #[[ALWAYS_S:set[0-9]*]] = affine_set<(d0, d1)[s0] : (0 >= 0)>

// The token loop of a decoder: two values that read each other, one of them
// at the previous step; a condition on the last step uses a launch bound.
// CHECK-LABEL: pdg.graph @decode_loop {
// CHECK-NEXT:    pdg.dim @b < launch B max 64
// CHECK-NEXT:    pdg.dim @t < launch T
// CHECK-NEXT:    %prompt = pdg.input "prompt" : !pdg.value<[b], tensor<i64>>
// CHECK-NEXT:    %tok = pdg.node "tok" [b, t] -> tensor<i64>
// CHECK-NEXT:      case (t == 0) (%arg0 = %prompt[b] : !pdg.value<[b], tensor<i64>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:      case (t >= 1) (%arg0 = %next[b, t - 1] : !pdg.value<[b, t], tensor<i64>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:    %next = pdg.node "next" [b, t] -> tensor<i64>
// CHECK-NEXT:      case (t == T - 1) {
// CHECK-NEXT:        %[[EOS:.*]] = arith.constant dense<0> : tensor<i64>
// CHECK-NEXT:        pdg.yield %[[EOS]] : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:      default (%arg0 = %tok[b, t] : !pdg.value<[b, t], tensor<i64>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:    pdg.output "tokens" %next : !pdg.value<[b, t], tensor<i64>>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "decode_loop"}> ({
// GENERIC:         "pdg.node"(%{{.*}}) <{accesses = [#pdg.access<(d0, d1)[s0] : [d0, d1]>], conditions = [#[[LAST]], #[[ALWAYS_S]]], name = "next", symbols = ["T"]}> ({
pdg.graph @decode_loop {
  pdg.dim @b < launch B max 64
  pdg.dim @t < launch T
  %prompt = pdg.input "prompt" : !pdg.value<[b], tensor<i64>>
  %tok = pdg.node "tok" [b, t] -> tensor<i64>
    case (t == 0) (%p = %prompt[b] : !pdg.value<[b], tensor<i64>>) {
      pdg.yield %p : tensor<i64>
    }
    case (t >= 1) (%n = %next[b, t - 1] : !pdg.value<[b, t], tensor<i64>>) {
      pdg.yield %n : tensor<i64>
    }
  %next = pdg.node "next" [b, t] -> tensor<i64>
    case (t == T - 1) {
      %eos = arith.constant dense<0> : tensor<i64>
      pdg.yield %eos : tensor<i64>
    }
    default (%x = %tok[b, t] : !pdg.value<[b, t], tensor<i64>>) {
      pdg.yield %x : tensor<i64>
    }
  pdg.output "tokens" %next : !pdg.value<[b, t], tensor<i64>>
}

// Cycles are fine when one read in them is of another point: an earlier
// point, a slice ending at t, or later points (whether reading the future is
// legal is for the analysis passes, not the verifier).
// CHECK-LABEL: pdg.graph @cycles_through_other_points {
// CHECK:         %a = pdg.node "a" [t] (%arg0 = %b[t + 1 : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK:         %b = pdg.node "b" [t] (%arg0 = %a[t] : !pdg.value<[t], tensor<f32>>, %arg1 = %c[max(0, t - 2) : t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK:         %c = pdg.node "c" [t] (%arg0 = %b[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
pdg.graph @cycles_through_other_points {
  pdg.dim @t < 8
  %a = pdg.node "a" [t] (%later = %b[t + 1 : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
  %b = pdg.node "b" [t] (%v = %a[t] : !pdg.value<[t], tensor<f32>>, %w = %c[max(0, t - 2) : t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %c = pdg.node "c" [t] (%v = %b[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  pdg.output "c" %c : !pdg.value<[t], tensor<f32>>
}
