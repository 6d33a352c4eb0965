// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of pdg.graph and pdg.dim (static, launch, dynamic; max, until) and of !pdg.value.

// An empty graph is a valid (if useless) program.
// CHECK-LABEL: pdg.graph @empty {
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "empty"}> ({
// GENERIC-NEXT:  ^bb0:
// GENERIC-NEXT:  }) : () -> ()
pdg.graph @empty {
}


// Discardable attributes on the graph go after the `attributes` keyword.
// CHECK-LABEL: pdg.graph @with_attrs attributes {pdg.note = "decoder", pdg.version = 2 : i64} {
// CHECK-NEXT:    pdg.dim @i < 1
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "with_attrs"}> ({
// GENERIC-NEXT:    "pdg.dim"() <{kind = #pdg<bound static>, size = 1 : i64, sym_name = "i"}> : () -> ()
// GENERIC-NEXT:  }) {pdg.note = "decoder", pdg.version = 2 : i64} : () -> ()
pdg.graph @with_attrs attributes {pdg.version = 2, pdg.note = "decoder"} {
  pdg.dim @i < 1
}


// CHECK-LABEL: pdg.graph @static_dims {
// CHECK-NEXT:    pdg.dim @i < 100
// CHECK-NEXT:    pdg.dim @j < 9223372036854775807
// CHECK-NEXT:    pdg.dim @k < 1 {pdg.hint = "unrolled"}
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "static_dims"}> ({
// GENERIC-NEXT:    "pdg.dim"() <{kind = #pdg<bound static>, size = 100 : i64, sym_name = "i"}> : () -> ()
// GENERIC-NEXT:    "pdg.dim"() <{kind = #pdg<bound static>, size = 9223372036854775807 : i64, sym_name = "j"}> : () -> ()
// GENERIC-NEXT:    "pdg.dim"() <{kind = #pdg<bound static>, size = 1 : i64, sym_name = "k"}> {pdg.hint = "unrolled"} : () -> ()
pdg.graph @static_dims {
  pdg.dim @i < 100
  pdg.dim @j < 9223372036854775807
  pdg.dim @k < 1 {pdg.hint = "unrolled"}
}


// CHECK-LABEL: pdg.graph @launch_dims {
// CHECK-NEXT:    pdg.dim @b < launch B
// CHECK-NEXT:    pdg.dim @h < launch NumHeads max 64
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "launch_dims"}> ({
// GENERIC-NEXT:    "pdg.dim"() <{bound = "B", kind = #pdg<bound launch>, sym_name = "b"}> : () -> ()
// GENERIC-NEXT:    "pdg.dim"() <{bound = "NumHeads", kind = #pdg<bound launch>, size = 64 : i64, sym_name = "h"}> : () -> ()
pdg.graph @launch_dims {
  pdg.dim @b < launch B
  pdg.dim @h < launch NumHeads max 64
}


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


// !pdg.value: an empty domain (one point), scalars, ranked and dynamic point
// tensors, and dims listed in any order.
// CHECK-LABEL: pdg.graph @value_types {
// CHECK-NEXT:    pdg.dim @b < 4
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %scalar = pdg.input "scalar" : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:    %matrix = pdg.input "matrix" : !pdg.value<[], tensor<1024x256xbf16>>
// CHECK-NEXT:    %ragged = pdg.input "ragged" : !pdg.value<[b], tensor<?x16xi8>>
// CHECK-NEXT:    %tb = pdg.input "tb" : !pdg.value<[t, b], tensor<2x3xi64>>
// CHECK-NEXT:  }
pdg.graph @value_types {
  pdg.dim @b < 4
  pdg.dim @t < 8
  %scalar = pdg.input "scalar" : !pdg.value<[], tensor<f32>>
  %matrix = pdg.input "matrix" : !pdg.value<[], tensor<1024x256xbf16>>
  %ragged = pdg.input "ragged" : !pdg.value<[b], tensor<?x16xi8>>
  %tb = pdg.input "tb" : !pdg.value<[t, b], tensor<2x3xi64>>
}


// Type aliases of !pdg.value are expanded when printing.
!vec = !pdg.value<[t], tensor<32xf32>>
// CHECK-LABEL: pdg.graph @type_alias {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[t], tensor<32xf32>>
// CHECK-NEXT:    pdg.output "x" %x : !pdg.value<[t], tensor<32xf32>>
// CHECK-NEXT:  }
pdg.graph @type_alias {
  pdg.dim @t < 8
  %x = pdg.input "x" : !vec
  pdg.output "x" %x : !vec
}


// The bound kind attribute on its own.
// CHECK-LABEL: pdg.graph @bound_kind_attr attributes {pdg.kinds = [#pdg<bound static>, #pdg<bound launch>, #pdg<bound dynamic>]} {
pdg.graph @bound_kind_attr attributes {pdg.kinds = [#pdg<bound static>, #pdg<bound launch>, #pdg<bound dynamic>]} {
}
