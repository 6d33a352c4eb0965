// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of dynamic pdg.dim with `until` (and `max`).

// A dynamic dim ends after the first point where `until` holds. The
// condition may be defined later in the (graph) region.
// CHECK-LABEL: pdg.graph @dynamic_until {
// CHECK-NEXT:    pdg.dim @t < dynamic T until %stop : !pdg.value<[t], tensor<i1>>
// CHECK-NEXT:    %stop = pdg.input "stop" : !pdg.value<[t], tensor<i1>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "dynamic_until"}> ({
// GENERIC-NEXT:    "pdg.dim"(%[[STOP:.*]]) <{bound = "T", kind = #pdg<bound dynamic>, sym_name = "t"}> : (!pdg.value<[t], tensor<i1>>) -> ()
// GENERIC-NEXT:    %[[STOP]] = "pdg.input"() <{name = "stop"}> : () -> !pdg.value<[t], tensor<i1>>
pdg.graph @dynamic_until {
  pdg.dim @t < dynamic T until %stop : !pdg.value<[t], tensor<i1>>
  %stop = pdg.input "stop" : !pdg.value<[t], tensor<i1>>
}

// `max` and `until` together; the condition is defined over more dims than
// the one it ends.
// CHECK-LABEL: pdg.graph @dynamic_max_until {
// CHECK-NEXT:    pdg.dim @b < launch B max 8
// CHECK-NEXT:    pdg.dim @t < dynamic T max 512 until %done : !pdg.value<[b, t], tensor<i1>>
// CHECK-NEXT:    %done = pdg.node "done" [b, t] -> tensor<i1> {
// CHECK-NEXT:      %[[C:.*]] = arith.constant dense<true> : tensor<i1>
// CHECK-NEXT:      pdg.yield %[[C]] : tensor<i1>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
pdg.graph @dynamic_max_until {
  pdg.dim @b < launch B max 8
  pdg.dim @t < dynamic T max 512 until %done : !pdg.value<[b, t], tensor<i1>>
  %done = pdg.node "done" [b, t] -> tensor<i1> {
    %true = arith.constant dense<true> : tensor<i1>
    pdg.yield %true : tensor<i1>
  }
}
