// pdg-plan-storage after pdg-schedule: a window whose oldest step is read
// earlier in the step than the value is written keeps one step fewer (the
// slot of step t - back is read, then overwritten by step t). Alone, the
// pass keeps today's windows (ALONE).
// RUN: pdg-opt %s --split-input-file --pdg-schedule --pdg-plan-storage | FileCheck %s
// RUN: pdg-opt %s --split-input-file --pdg-plan-storage | FileCheck %s --check-prefix=ALONE
// The memory report shows the smaller stores (planned by the pass, or by
// the report itself from the attached schedule).
// RUN: pdg-opt %s --split-input-file --pdg-schedule --pdg-plan-storage --pdg-memory-report | FileCheck %s --check-prefix=REPORT
// RUN: pdg-opt %s --split-input-file --pdg-schedule --pdg-memory-report | FileCheck %s --check-prefix=REPORT
// RUN: pdg-opt %s --split-input-file --pdg-memory-report | FileCheck %s --check-prefix=REPORT-ALONE

!it = !pdg.value<[i], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// An optimizer's moment: m[i] takes new[i - 1] at the start of iteration i,
// new[i] is written at its end. One slot of `new` suffices.
// CHECK-LABEL: pdg.graph @moment
// CHECK: %m = pdg.node "m" {{.*}}#pdg.store<point, [1]>
// CHECK: %g = pdg.node "g" {{.*}}#pdg.store<full, [I]>
// CHECK: %new = pdg.node "new" {{.*}}#pdg.store<point, [1]>
// ALONE-LABEL: pdg.graph @moment
// ALONE: %new = pdg.node "new" {{.*}}#pdg.store<window, [2]>
// REPORT-LABEL: memory report for @moment
// REPORT: new {{ +}}point {{ +}}[1] {{ +}}16 {{ +}}16
// REPORT: working set: 48 + 16 * I
// REPORT-ALONE-LABEL: memory report for @moment
// REPORT-ALONE: new {{ +}}window {{ +}}[2] {{ +}}32 {{ +}}32
// REPORT-ALONE: working set: 64 + 16 * I
pdg.graph @moment {
  pdg.dim @i < launch I
  %m0 = pdg.input "m0" : !w
  %x = pdg.input "x" : !it
  %m = pdg.node "m" [i] -> tensor<4xf32>
    case (i == 0) (%a = %m0[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1) (%a = %new[i - 1] : !it) {
      pdg.yield %a : tensor<4xf32>
    }
  %g = pdg.node "g" [i] (%a = %m[i] : !it, %b = %x[i] : !it) -> tensor<4xf32> {
    %s = arith.mulf %a, %b : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  %new = pdg.node "new" [i] (%a = %m[i] : !it, %b = %g[i] : !it) -> tensor<4xf32> {
    %s = arith.addf %a, %b : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  pdg.output "g" %g : !it
}

// -----

!it = !pdg.value<[i], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// A recurrence reads its own previous step: reading and writing one slot in
// one body would clobber its input. The window stays.
// CHECK-LABEL: pdg.graph @self_read
// CHECK: %x = pdg.node "x" {{.*}}#pdg.store<window, [2]>
pdg.graph @self_read {
  pdg.dim @i < launch I
  %x0 = pdg.input "x0" : !w
  %x = pdg.node "x" [i] -> tensor<4xf32>
    case (i == 0) (%a = %x0[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1) (%a = %x[i - 1] : !it) {
      %s = arith.addf %a, %a : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
  %y = pdg.node "y" [i] (%a = %x[i] : !it) -> tensor<4xf32> {
    pdg.yield %a : tensor<4xf32>
  }
  pdg.output "y" %y : !it
}

// -----

!it = !pdg.value<[i], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// c reads p[i - 1] and p[i]: it runs after p in the step, when the slot
// already holds step i. The window stays.
// CHECK-LABEL: pdg.graph @consumer_after
// CHECK: %p = pdg.node "p" {{.*}}#pdg.store<window, [2]>
pdg.graph @consumer_after {
  pdg.dim @i < launch I
  %x = pdg.input "x" : !it
  %x0 = pdg.input "x0" : !w
  %p = pdg.node "p" [i] (%a = %x[i] : !it) -> tensor<4xf32> {
    %s = arith.addf %a, %a : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  %c = pdg.node "c" [i] -> tensor<4xf32>
    case (i == 0) (%a = %x0[] : !w, %b = %p[i] : !it) {
      %s = arith.addf %a, %b : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
    case (i >= 1) (%a = %p[i - 1] : !it, %b = %p[i] : !it) {
      %s = arith.subf %a, %b : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
  pdg.output "c" %c : !it
}

// -----

!it = !pdg.value<[i], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// Two steps back: `late` reads p[i - 2] after p is written (it reads p[i]
// too), so the oldest slot is gone when it looks; `early` reading p[i - 1]
// before p does not help. The window of 3 stays.
// CHECK-LABEL: pdg.graph @two_back_late
// CHECK: %p = pdg.node "p" {{.*}}#pdg.store<window, [3]>
pdg.graph @two_back_late {
  pdg.dim @i < launch I
  %x = pdg.input "x" : !it
  %x0 = pdg.input "x0" : !w
  %early = pdg.node "early" [i] -> tensor<4xf32>
    case (i == 0) (%a = %x0[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1) (%a = %p[i - 1] : !it) {
      pdg.yield %a : tensor<4xf32>
    }
  %p = pdg.node "p" [i] (%a = %x[i] : !it, %b = %early[i] : !it) -> tensor<4xf32> {
    %s = arith.addf %a, %b : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  %late = pdg.node "late" [i] -> tensor<4xf32>
    case (i <= 1) (%a = %p[i] : !it) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 2) (%a = %p[i - 2] : !it, %b = %p[i] : !it) {
      %s = arith.subf %a, %b : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
  pdg.output "late" %late : !it
}

// -----

!it = !pdg.value<[i], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// The mirror: p[i - 2] read before p is written, p[i - 1] after it (a read
// nearer than the oldest may come at any time). Two slots: the oldest is
// read, then overwritten.
// CHECK-LABEL: pdg.graph @two_back_early
// CHECK: %p = pdg.node "p" {{.*}}#pdg.store<window, [2]>
// ALONE-LABEL: pdg.graph @two_back_early
// ALONE: %p = pdg.node "p" {{.*}}#pdg.store<window, [3]>
pdg.graph @two_back_early {
  pdg.dim @i < launch I
  %x = pdg.input "x" : !it
  %x0 = pdg.input "x0" : !w
  %early = pdg.node "early" [i] -> tensor<4xf32>
    case (i <= 1) (%a = %x0[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 2) (%a = %p[i - 2] : !it) {
      pdg.yield %a : tensor<4xf32>
    }
  %p = pdg.node "p" [i] (%a = %x[i] : !it, %b = %early[i] : !it) -> tensor<4xf32> {
    %s = arith.addf %a, %b : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  %late = pdg.node "late" [i] -> tensor<4xf32>
    case (i == 0) (%a = %p[i] : !it) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1) (%a = %p[i - 1] : !it, %b = %p[i] : !it) {
      %s = arith.subf %a, %b : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
  pdg.output "late" %late : !it
}

// -----

!it = !pdg.value<[i], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// c reads p[i - 1] before p in the step, but both read only inputs: one
// stage, which pdg-schedule allows to overlap. The window stays.
// CHECK-LABEL: pdg.graph @same_stage
// CHECK: %c = pdg.node "c" {{.*}}stage = 0 : i64{{.*}}#pdg.store<full, [I]>
// CHECK: %p = pdg.node "p" {{.*}}stage = 0 : i64{{.*}}#pdg.store<window, [2]>
pdg.graph @same_stage {
  pdg.dim @i < launch I
  %x = pdg.input "x" : !it
  %x0 = pdg.input "x0" : !w
  %c = pdg.node "c" [i] -> tensor<4xf32>
    case (i == 0) (%a = %x0[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1) (%a = %p[i - 1] : !it) {
      pdg.yield %a : tensor<4xf32>
    }
  %p = pdg.node "p" [i] (%a = %x[i] : !it) -> tensor<4xf32> {
    %s = arith.addf %a, %a : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  pdg.output "c" %c : !it
}

// -----

!it = !pdg.value<[i], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// A read after the loop keeps the last steps it reads: new[5], the last
// step, fits the one slot; old[4] needs two.
// CHECK-LABEL: pdg.graph @after_loop
// CHECK: %new = pdg.node "new" {{.*}}#pdg.store<point, [1]>
// CHECK: %old = pdg.node "old" {{.*}}#pdg.store<window, [2]>
pdg.graph @after_loop {
  pdg.dim @i < 6
  %m0 = pdg.input "m0" : !w
  %x = pdg.input "x" : !it
  %m = pdg.node "m" [i] -> tensor<4xf32>
    case (i == 0) (%a = %m0[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1) (%a = %new[i - 1] : !it, %b = %old[i - 1] : !it) {
      %s = arith.addf %a, %b : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
  %new = pdg.node "new" [i] (%a = %m[i] : !it, %b = %x[i] : !it) -> tensor<4xf32> {
    %s = arith.addf %a, %b : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  %old = pdg.node "old" [i] (%a = %m[i] : !it, %b = %x[i] : !it) -> tensor<4xf32> {
    %s = arith.subf %a, %b : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  %last = pdg.node "last" [] (%a = %new[5] : !it, %b = %old[4] : !it) -> tensor<4xf32> {
    %s = arith.addf %a, %b : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  pdg.output "last" %last : !w
}

// -----

!it = !pdg.value<[i], tensor<4xf32>>
!st = !pdg.value<[i, t], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// A consumer in a nest of its own inside the training loop: h runs over t
// reading p[i - 1], all before p (which reads h's last step). One slot.
// CHECK-LABEL: pdg.graph @inner_nest_before
// CHECK: %h = pdg.node "h" {{.*}}loops = ["i", "t"]
// CHECK: %p = pdg.node "p" {{.*}}#pdg.store<point, [1]>
pdg.graph @inner_nest_before {
  pdg.dim @i < launch I
  pdg.dim @t < 4
  %p0 = pdg.input "p0" : !w
  %h = pdg.node "h" [i, t] -> tensor<4xf32>
    case (i == 0) (%a = %p0[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1, t == 0) (%a = %p[i - 1] : !it) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1, t >= 1) (%a = %p[i - 1] : !it, %b = %h[i, t - 1] : !st) {
      %s = arith.addf %a, %b : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
  %p = pdg.node "p" [i] (%a = %h[i, 3] : !st) -> tensor<4xf32> {
    %s = arith.addf %a, %a : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  pdg.output "h" %h : !st
}

// -----

!it = !pdg.value<[i], tensor<4xf32>>
!st = !pdg.value<[i, t], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// The inner nest runs after q, which it reads at step i as well: q[i - 1]
// would be read after the slot holds step i. The window stays.
// CHECK-LABEL: pdg.graph @inner_nest_after
// CHECK: %q = pdg.node "q" {{.*}}loops = ["i"]{{.*}}#pdg.store<window, [2]>
// CHECK: %h = pdg.node "h" {{.*}}loops = ["i", "t"]
pdg.graph @inner_nest_after {
  pdg.dim @i < launch I
  pdg.dim @t < 4
  %x0 = pdg.input "x0" : !w
  %q = pdg.node "q" [i] -> tensor<4xf32>
    case (i == 0) (%a = %x0[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (i >= 1) (%a = %h[i - 1, 3] : !st) {
      pdg.yield %a : tensor<4xf32>
    }
  %h = pdg.node "h" [i, t] -> tensor<4xf32>
    case (i == 0, t == 0) (%b = %q[i] : !it) {
      pdg.yield %b : tensor<4xf32>
    }
    case (i >= 1, t == 0) (%a = %q[i - 1] : !it, %b = %q[i] : !it) {
      %s = arith.addf %a, %b : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
    case (t >= 1) (%a = %h[i, t - 1] : !st) {
      %s = arith.mulf %a, %a : tensor<4xf32>
      pdg.yield %s : tensor<4xf32>
    }
  pdg.output "h" %h : !st
}

// -----

!s = !pdg.value<[t], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>

// A backward nest (the gradient of a recurrence): c[t] takes p[t + 1] at
// the start of step t, p[t] is written at its end. The mirror image: one
// slot.
// CHECK-LABEL: pdg.graph @backward
// CHECK: %c = pdg.node "c" {{.*}}reverse = ["t"]
// CHECK: %p = pdg.node "p" {{.*}}reverse = ["t"]{{.*}}#pdg.store<point, [1]>
// ALONE-LABEL: pdg.graph @backward
// ALONE: %p = pdg.node "p" {{.*}}#pdg.store<window, [2]>
pdg.graph @backward {
  pdg.dim @t < 8
  %x = pdg.input "x" : !s
  %seed = pdg.input "seed" : !w
  %c = pdg.node "c" [t] -> tensor<4xf32>
    case (t == 7) (%a = %seed[] : !w) {
      pdg.yield %a : tensor<4xf32>
    }
    case (t <= 6) (%a = %p[t + 1] : !s) {
      pdg.yield %a : tensor<4xf32>
    }
  %p = pdg.node "p" [t] (%a = %c[t] : !s, %b = %x[t] : !s) -> tensor<4xf32> {
    %s = arith.mulf %a, %b : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
  pdg.output "c" %c : !s
}
