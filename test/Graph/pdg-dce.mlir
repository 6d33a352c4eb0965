// RUN: pdg-opt %s --split-input-file --pdg-dce | FileCheck %s --check-prefixes=CHECK,DCE
// RUN: pdg-opt %s --split-input-file --canonicalize='region-simplify=disabled' | FileCheck %s --check-prefixes=CHECK,PATTERNS
// RUN: pdg-opt %s --split-input-file --canonicalize | FileCheck %s --check-prefixes=CHECK,CANON
// RUN: pdg-opt %s --split-input-file --pass-pipeline='builtin.module(pdg-dce,canonicalize)' | FileCheck %s --check-prefixes=CHECK,DCE
// pdg-dce: what outputs, udfs, inputs and dynamic dims' `until` need is kept; everything else goes, dead cycles included.

// Two nodes that only read each other (one of them at the previous step)
// form a dead cycle. pdg-dce removes it. Canonicalization patterns alone
// keep it: the cycle has users, and EraseSelfOnlyNode only removes a node
// whose single reader is itself. The default canonicalize pass removes it too,
// through the upstream region simplification (dead code elimination of the
// graph region), which handles cycles of pure ops.
// CHECK-LABEL:   pdg.graph @dead_cycle {
// CHECK-NEXT:      pdg.dim @t < 8
// CHECK-NEXT:      %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// PATTERNS-NEXT:   %a = pdg.node "a" [t] -> tensor<f32>
// PATTERNS:          case (t >= 1) (%arg0 = %b[t - 1] : !pdg.value<[t], tensor<f32>>) {
// PATTERNS:        %b = pdg.node "b" [t] (%arg0 = %a[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// PATTERNS:        }
// CHECK-NEXT:      pdg.output "x" %x : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    }
pdg.graph @dead_cycle {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %a = pdg.node "a" [t] -> tensor<f32>
    case (t == 0) (%v = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 1) (%v = %b[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
  %b = pdg.node "b" [t] (%v = %a[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  pdg.output "x" %x : !pdg.value<[t], tensor<f32>>
}

// -----

// A dead cycle of three, next to a live chain: input -> h -> y -> output.
// CHECK-LABEL:   pdg.graph @dead_cycle_and_live_chain {
// CHECK-NEXT:      pdg.dim @t < 8
// CHECK-NEXT:      %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:      %h = pdg.node "h" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK:           %y = pdg.node "y" [t] (%arg0 = %h[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// PATTERNS:        %c1 = pdg.node "c1"
// PATTERNS:        %c2 = pdg.node "c2"
// PATTERNS:        %c3 = pdg.node "c3"
// CHECK:           pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    }
pdg.graph @dead_cycle_and_live_chain {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %h = pdg.node "h" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %s = arith.addf %v, %v : tensor<f32>
    pdg.yield %s : tensor<f32>
  }
  %y = pdg.node "y" [t] (%v = %h[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %c1 = pdg.node "c1" [t] -> tensor<f32>
    case (t == 0) (%v = %h[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 1) (%v = %c3[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
  %c2 = pdg.node "c2" [t] (%v = %c1[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %c3 = pdg.node "c3" [t] (%v = %c2[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// -----

// A udf is a root (host callbacks may have effects): it and what it reads
// stay, even though nothing reads the udf. Unused inputs stay as well.
// CHECK-LABEL:   pdg.graph @udf_is_live {
// CHECK-NEXT:      pdg.dim @b < launch B
// CHECK-NEXT:      pdg.dim @t < launch T
// CHECK-NEXT:      %x = pdg.input "x" : !pdg.value<[b, t], tensor<i64>>
// CHECK-NEXT:      %unused = pdg.input "unused" : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:      %tok = pdg.node "tok" [b, t] (%arg0 = %x[b, t] : !pdg.value<[b, t], tensor<i64>>) -> tensor<i64> {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:      %reward = pdg.udf "reward" [b] (%tok[b, 0 : T] : !pdg.value<[b, t], tensor<i64>>) -> tensor<f32>
// CHECK-NEXT:    }
pdg.graph @udf_is_live {
  pdg.dim @b < launch B
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<i64>>
  %unused = pdg.input "unused" : !pdg.value<[], tensor<f32>>
  %tok = pdg.node "tok" [b, t] (%v = %x[b, t] : !pdg.value<[b, t], tensor<i64>>) -> tensor<i64> {
    pdg.yield %v : tensor<i64>
  }
  %dead = pdg.node "dead" [b, t] (%v = %tok[b, t] : !pdg.value<[b, t], tensor<i64>>) -> tensor<i64> {
    pdg.yield %v : tensor<i64>
  }
  %r = pdg.udf "reward" [b] (%tok[b, 0 : T] : !pdg.value<[b, t], tensor<i64>>) -> tensor<f32>
}

// -----

// The `until` of a dynamic dim is a root: the condition and the recurrence
// it reads stay, with no output at all.
// CHECK-LABEL:   pdg.graph @until_is_live {
// CHECK-NEXT:      pdg.dim @t < dynamic T max 16 until %done : !pdg.value<[t], tensor<i1>>
// CHECK-NEXT:      %n = pdg.node "n" [t] -> tensor<i64>
// CHECK:           %done = pdg.node "done" [t] (%arg0 = %n[t] : !pdg.value<[t], tensor<i64>>) -> tensor<i1> {
// CHECK:           }
// CHECK-NEXT:    }
pdg.graph @until_is_live {
  pdg.dim @t < dynamic T max 16 until %done : !pdg.value<[t], tensor<i1>>
  %n = pdg.node "n" [t] -> tensor<i64>
    case (t == 0) {
      %z = arith.constant dense<0> : tensor<i64>
      pdg.yield %z : tensor<i64>
    }
    case (t >= 1) (%p = %n[t - 1] : !pdg.value<[t], tensor<i64>>) {
      %one = arith.constant dense<1> : tensor<i64>
      %s = arith.addi %p, %one : tensor<i64>
      pdg.yield %s : tensor<i64>
    }
  %done = pdg.node "done" [t] (%v = %n[t] : !pdg.value<[t], tensor<i64>>) -> tensor<i1> {
    %ten = arith.constant dense<10> : tensor<i64>
    %d = arith.cmpi sge, %v, %ten : tensor<i64>
    pdg.yield %d : tensor<i1>
  }
  %unused = pdg.node "unused" [t] (%v = %n[t] : !pdg.value<[t], tensor<i64>>) -> tensor<i64> {
    pdg.yield %v : tensor<i64>
  }
}

// -----

// Liveness flows through every kind of access (earlier points, slices, fixed
// points) and through the cases of a node; a node read only by a dead node
// is dead as well.
// CHECK-LABEL:   pdg.graph @live_through_accesses {
// CHECK:           %a = pdg.node "a"
// CHECK:           %b = pdg.node "b"
// CHECK:           %c = pdg.node "c"
// CHECK:           %out = pdg.node "out" [t] -> tensor<f32>
// CHECK-NEXT:        case (t == 0) (%arg0 = %a[3] : !pdg.value<[t], tensor<f32>>) {
// CHECK:             case (t >= 1) (%arg0 = %b[t - 1] : !pdg.value<[t], tensor<f32>>, %arg1 = %c[0 : t] : !pdg.value<[t], tensor<f32>>) {
// CHECK-NOT:       pdg.node
// CHECK:           pdg.output "out" %out : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    }
pdg.graph @live_through_accesses {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %a = pdg.node "a" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %b = pdg.node "b" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %c = pdg.node "c" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %out = pdg.node "out" [t] -> tensor<f32>
    case (t == 0) (%v = %a[3] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 1) (%p = %b[t - 1] : !pdg.value<[t], tensor<f32>>, %w = %c[0 : t] : !pdg.value<[t], tensor<f32>>) {
      %z = arith.constant 0 : index
      %e = tensor.extract_slice %w[%z] [1] [1] : tensor<?xf32> to tensor<f32>
      %s = arith.addf %p, %e : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
  %d1 = pdg.node "d1" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %d2 = pdg.node "d2" [t] (%v = %d1[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  pdg.output "out" %out : !pdg.value<[t], tensor<f32>>
}

// -----

// Every graph of the module is processed.
// CHECK-LABEL:   pdg.graph @first {
// CHECK-NEXT:      %w = pdg.input "w" : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:    }
// CHECK-LABEL:   pdg.graph @second {
// CHECK-NEXT:      %w = pdg.input "w" : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:      pdg.output "w" %w : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:    }
pdg.graph @first {
  %w = pdg.input "w" : !pdg.value<[], tensor<f32>>
  %d = pdg.node "d" [] (%v = %w[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
}
pdg.graph @second {
  %w = pdg.input "w" : !pdg.value<[], tensor<f32>>
  %d = pdg.node "d" [] (%v = %w[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  pdg.output "w" %w : !pdg.value<[], tensor<f32>>
}
