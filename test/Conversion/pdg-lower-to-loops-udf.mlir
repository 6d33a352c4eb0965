// A udf (a host callback) becomes a call to an external @pdg_<graph>_udf_<k> with the
// C interface: the runtime fills table slot k (see pdg.lowering.support).
// When a callback fails, @pdg_abort is set and the dynamic loop stops.
// RUN: pdg-opt %s --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s

// CHECK-LABEL: func.func @pdg_callback(
// CHECK: scf.while
// CHECK:   %[[FLAG:.*]] = memref.get_global @pdg_abort : memref<i8>
// CHECK:   memref.load %[[FLAG]][] : memref<i8>
// CHECK:   scf.condition
// CHECK: func.call @pdg_callback_udf_0(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<f32, strided<[], offset: ?>>, memref<i1, strided<[], offset: ?>>, index) -> ()
// CHECK: func.func private @pdg_callback_udf_0(memref<f32, strided<[], offset: ?>>, memref<i1, strided<[], offset: ?>>, index) attributes {llvm.emit_c_interface}
// A second graph in the module gets its own names; the globals are declared once.
// CHECK-LABEL: func.func @pdg_second(
// CHECK: func.call @pdg_second_udf_0(
// CHECK: func.func private @pdg_second_udf_0(
// CHECK: memref.global @pdg_abort : memref<i8>
// CHECK-NOT: memref.global @pdg_abort
pdg.graph @callback {
  pdg.dim @t < dynamic T max 16 until %stop : !pdg.value<[t], tensor<i1>>
  %a = pdg.input "a" : !pdg.value<[], tensor<f32>>
  %x = pdg.node "x" [t] (%v = %a[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %stop = pdg.udf "done" [t] (%x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<i1>
  pdg.output "x" %x : !pdg.value<[t], tensor<f32>>
}

pdg.graph @second {
  pdg.dim @t < dynamic T max 8 until %stop : !pdg.value<[t], tensor<i1>>
  %a = pdg.input "a" : !pdg.value<[], tensor<f32>>
  %x = pdg.node "x" [t] (%v = %a[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %stop = pdg.udf "done" [t] (%x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<i1>
  pdg.output "x" %x : !pdg.value<[t], tensor<f32>>
}
