// Small graphs that fail at run time, one per kind of error.
!f = !pdg.value<[t], tensor<f32>>

// Reads one step past the end of the domain at t = 3.
pdg.graph @out_of_domain {
  pdg.dim @t < 4
  %a = pdg.input "a" : !f
  %x = pdg.node "next" [t] (%n = %a[t + 1] : !f) -> tensor<f32> {
    pdg.yield %n : tensor<f32>
  }
  pdg.output "x" %x : !f
}

// No case covers t = 1.
pdg.graph @no_case {
  pdg.dim @t < 4
  %a = pdg.input "a" : !f
  %x = pdg.node "gappy" [t] -> tensor<f32>
    case (t == 0) (%v = %a[t] : !f) {
      pdg.yield %v : tensor<f32>
    }
    case (t - 2 >= 0) (%v = %a[t] : !f) {
      pdg.yield %v : tensor<f32>
    }
  pdg.output "x" %x : !f
}

// x[0] reads y[1], which reads x[0]: a cycle only the run discovers.
pdg.graph @cycle {
  pdg.dim @t < 4
  %a = pdg.input "a" : !f
  %x = pdg.node "x" [t] -> tensor<f32>
    case (t == 0) (%v = %y[t + 1] : !f) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 1) (%v = %a[t] : !f) {
      pdg.yield %v : tensor<f32>
    }
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) (%v = %a[t] : !f) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 1) (%v = %x[t - 1] : !f) {
      pdg.yield %v : tensor<f32>
    }
  pdg.output "y" %y : !f
}

// math.ctlz has no handler.
pdg.graph @unsupported {
  pdg.dim @t < 4
  %a = pdg.input "a" : !pdg.value<[t], tensor<i32>>
  %x = pdg.node "lz" [t] (%v = %a[t] : !pdg.value<[t], tensor<i32>>) -> tensor<i32> {
    %c = math.ctlz %v : tensor<i32>
    pdg.yield %c : tensor<i32>
  }
  pdg.output "x" %x : !pdg.value<[t], tensor<i32>>
}

// Integer division by a zero read from the input.
pdg.graph @divide {
  pdg.dim @t < 4
  %a = pdg.input "a" : !pdg.value<[t], tensor<i32>>
  %x = pdg.node "div" [t] (%v = %a[t] : !pdg.value<[t], tensor<i32>>) -> tensor<i32> {
    %c = arith.constant dense<100> : tensor<i32>
    %d = arith.divsi %c, %v : tensor<i32>
    pdg.yield %d : tensor<i32>
  }
  pdg.output "x" %x : !pdg.value<[t], tensor<i32>>
}

// A dynamic dim without max, and a reader of T lacking the group dim b.
pdg.graph @unbounded {
  pdg.dim @b < launch B
  pdg.dim @t < dynamic T until %done : !pdg.value<[b, t], tensor<i1>>
  %done = pdg.node "done" [b, t] -> tensor<i1> {
    %i = pdg.point @t : index
    %c3 = arith.constant 3 : index
    %d = arith.cmpi sge, %i, %c3 : index
    %e = tensor.from_elements %d : tensor<i1>
    pdg.yield %e : tensor<i1>
  }
  %n = pdg.node "n" [] (%v = %done[0, T - 1] : !pdg.value<[b, t], tensor<i1>>) -> tensor<i1> {
    pdg.yield %v : tensor<i1>
  }
  pdg.output "done" %done : !pdg.value<[b, t], tensor<i1>>
  pdg.output "n" %n : !pdg.value<[], tensor<i1>>
}
