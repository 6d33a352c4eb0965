// Slice accesses: a sliding window, a block prefix and a full prefix.
!f = !pdg.value<[t], tensor<f32>>

pdg.graph @windows {
  pdg.dim @t < 11
  %a = pdg.input "a" : !f

  // The sum of the last 4 values.
  %w = pdg.node "window" [t] (%x = %a[max(0, t - 3) : t + 1] : !f) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %s = linalg.reduce ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      }
    pdg.yield %s : tensor<f32>
  }

  // The sum since the start of t's block of 4.
  %k = pdg.node "block" [t] (%x = %a[(t floordiv 4) * 4 : t + 1] : !f) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) {
      ^bb0(%in: f32, %acc: f32):
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
    } -> tensor<f32>
    pdg.yield %s : tensor<f32>
  }

  // The running maximum and the number of values read.
  %m = pdg.node "prefix_max" [t] (%x = %a[0 : t + 1] : !f) -> tensor<2xf32> {
    %ninf = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %s = linalg.reduce ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %r = arith.maximumf %in, %acc : f32
        linalg.yield %r : f32
      }
    %mx = tensor.extract %s[] : tensor<f32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %r = tensor.from_elements %mx, %nf : tensor<2xf32>
    pdg.yield %r : tensor<2xf32>
  }

  // The sum of the values strictly before t: an empty slice at t = 0.
  %before = pdg.node "before" [t] (%x = %a[0 : t] : !f) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %s = linalg.reduce ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      }
    pdg.yield %s : tensor<f32>
  }

  pdg.output "window" %w : !f
  pdg.output "before" %before : !f
  pdg.output "block" %k : !f
  pdg.output "prefix_max" %m : !pdg.value<[t], tensor<2xf32>>
}
