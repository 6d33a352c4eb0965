// pdg-schedule: loops over the sequential dims, and an order of nodes in a
// step; independent nodes share a stage (they may overlap).
// RUN: pdg-opt %s --pdg-schedule | FileCheck %s

// CHECK-LABEL: pdg.graph @decode
// CHECK: %wte = pdg.input "wte" {pdg.schedule = {group = 0 : i64, loops = [], order = 0 : i64, phase = "before", stage = 0 : i64}
// CHECK: %tok = pdg.node "tok" {{.*}}pdg.schedule = {group = 1 : i64, loops = ["t"], order = 5 : i64, phase = "loop", stage = 0 : i64}
// CHECK: %h = pdg.node "h" {{.*}}pdg.schedule = {group = 1 : i64, loops = ["t"], order = 6 : i64, phase = "loop", stage = 1 : i64}
// q, k and v read only h: the same stage.
// CHECK: %q = pdg.node "q" {{.*}}pdg.schedule = {group = 1 : i64, loops = ["t"], order = 7 : i64, phase = "loop", stage = 2 : i64}
// CHECK: %k = pdg.node "k" {{.*}}pdg.schedule = {group = 1 : i64, loops = ["t"], order = 8 : i64, phase = "loop", stage = 2 : i64}
// CHECK: %v = pdg.node "v" {{.*}}pdg.schedule = {group = 1 : i64, loops = ["t"], order = 9 : i64, phase = "loop", stage = 2 : i64}
// CHECK: %att = pdg.node "att" {{.*}}stage = 3 : i64
// CHECK: %logits = pdg.node "logits" {{.*}}stage = 4 : i64
// CHECK: %next = pdg.node "next" {{.*}}stage = 5 : i64
// CHECK: %done = pdg.node "done" {{.*}}stage = 6 : i64
// A reduction over the finished sequences runs after the loop.
// CHECK: %count = pdg.udf "count" {{.*}}pdg.schedule = {group = 2 : i64, loops = [], order = 15 : i64, phase = "after", stage = 0 : i64}
!tok = !pdg.value<[b, t], tensor<i64>>
!vec = !pdg.value<[b, t], tensor<32xf32>>
!mat = !pdg.value<[], tensor<32x32xf32>>
!emb = !pdg.value<[], tensor<64x32xf32>>

pdg.graph @decode {
  pdg.dim @b < launch B max 64
  pdg.dim @t < dynamic T max 256 until %done : !pdg.value<[b, t], tensor<i1>>

  %wte = pdg.input "wte" : !emb
  %wq = pdg.input "wq" : !mat
  %wk = pdg.input "wk" : !mat
  %wv = pdg.input "wv" : !mat
  %prompt = pdg.input "prompt" : !pdg.value<[b], tensor<i64>>

  // The token fed at step t: the prompt first, then the previous choice.
  %tok = pdg.node "tok" [b, t] -> tensor<i64>
    case (t == 0) (%p = %prompt[b] : !pdg.value<[b], tensor<i64>>) {
      pdg.yield %p : tensor<i64>
    }
    case (t >= 1) (%n = %next[b, t - 1] : !tok) {
      pdg.yield %n : tensor<i64>
    }

  %h = pdg.node "h" [b, t] (%e = %wte[] : !emb, %id = %tok[b, t] : !tok) -> tensor<32xf32> {
    %i64 = tensor.extract %id[] : tensor<i64>
    %i = arith.index_cast %i64 : i64 to index
    %row = tensor.extract_slice %e[%i, 0] [1, 32] [1, 1] : tensor<64x32xf32> to tensor<32xf32>
    pdg.yield %row : tensor<32xf32>
  }

  %q = pdg.node "q" [b, t] (%x = %h[b, t] : !vec, %w = %wq[] : !mat) -> tensor<32xf32> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<32xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<32xf32>) -> tensor<32xf32>
    %r = linalg.vecmat ins(%x, %w : tensor<32xf32>, tensor<32x32xf32>) outs(%acc : tensor<32xf32>) -> tensor<32xf32>
    pdg.yield %r : tensor<32xf32>
  }
  %k = pdg.node "k" [b, t] (%x = %h[b, t] : !vec, %w = %wk[] : !mat) -> tensor<32xf32> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<32xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<32xf32>) -> tensor<32xf32>
    %r = linalg.vecmat ins(%x, %w : tensor<32xf32>, tensor<32x32xf32>) outs(%acc : tensor<32xf32>) -> tensor<32xf32>
    pdg.yield %r : tensor<32xf32>
  }
  %v = pdg.node "v" [b, t] (%x = %h[b, t] : !vec, %w = %wv[] : !mat) -> tensor<32xf32> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<32xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<32xf32>) -> tensor<32xf32>
    %r = linalg.vecmat ins(%x, %w : tensor<32xf32>, tensor<32x32xf32>) outs(%acc : tensor<32xf32>) -> tensor<32xf32>
    pdg.yield %r : tensor<32xf32>
  }

  // Sliding-window attention: the keys and values of the last 16 steps.
  %att = pdg.node "att" [b, t] (%qq = %q[b, t] : !vec,
                                %kw = %k[b, max(0, t - 15) : t + 1] : !vec,
                                %vw = %v[b, max(0, t - 15) : t + 1] : !vec) -> tensor<32xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %kw, %c0 : tensor<?x32xf32>
    %zero = arith.constant 0.0 : f32
    %s0 = tensor.empty(%n) : tensor<?xf32>
    %s1 = linalg.fill ins(%zero : f32) outs(%s0 : tensor<?xf32>) -> tensor<?xf32>
    %scores = linalg.matvec ins(%kw, %qq : tensor<?x32xf32>, tensor<32xf32>) outs(%s1 : tensor<?xf32>) -> tensor<?xf32>
    %p0 = tensor.empty(%n) : tensor<?xf32>
    %p = linalg.softmax dimension(0) ins(%scores : tensor<?xf32>) outs(%p0 : tensor<?xf32>) -> tensor<?xf32>
    %o0 = tensor.empty() : tensor<32xf32>
    %o1 = linalg.fill ins(%zero : f32) outs(%o0 : tensor<32xf32>) -> tensor<32xf32>
    %o = linalg.vecmat ins(%p, %vw : tensor<?xf32>, tensor<?x32xf32>) outs(%o1 : tensor<32xf32>) -> tensor<32xf32>
    pdg.yield %o : tensor<32xf32>
  }

  %logits = pdg.node "logits" [b, t] (%a = %att[b, t] : !vec, %e = %wte[] : !emb) -> tensor<64xf32> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<64xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<64xf32>) -> tensor<64xf32>
    %r = linalg.matvec ins(%e, %a : tensor<64x32xf32>, tensor<32xf32>) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
    pdg.yield %r : tensor<64xf32>
  }

  // Greedy choice: the index of the largest logit.
  %next = pdg.node "next" [b, t] (%l = %logits[b, t] : !pdg.value<[b, t], tensor<64xf32>>) -> tensor<i64> {
    %ninf = arith.constant 0xFF800000 : f32
    %c0 = arith.constant 0 : i64
    %m0 = tensor.empty() : tensor<f32>
    %m = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<f32>) -> tensor<f32>
    %i0 = tensor.empty() : tensor<i64>
    %i = linalg.fill ins(%c0 : i64) outs(%i0 : tensor<i64>) -> tensor<i64>
    %best:2 = linalg.generic {
        indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>],
        iterator_types = ["reduction"]}
        ins(%l : tensor<64xf32>) outs(%m, %i : tensor<f32>, tensor<i64>) {
      ^bb0(%x: f32, %bm: f32, %bi: i64):
        %idx = linalg.index 0 : index
        %id = arith.index_cast %idx : index to i64
        %gt = arith.cmpf ogt, %x, %bm : f32
        %nm = arith.select %gt, %x, %bm : f32
        %ni = arith.select %gt, %id, %bi : i64
        linalg.yield %nm, %ni : f32, i64
    } -> (tensor<f32>, tensor<i64>)
    pdg.yield %best#1 : tensor<i64>
  }

  // A sequence is done once it emits EOS (token 0).
  %done = pdg.node "done" [b, t] (%n = %next[b, t] : !tok) -> tensor<i1> {
    %eos = arith.constant dense<0> : tensor<i64>
    %d = arith.cmpi eq, %n, %eos : tensor<i64>
    pdg.yield %d : tensor<i1>
  }

  // Dead code for pdg-dce to remove: a value nothing reads.
  %unused = pdg.node "unused" [b, t] (%x = %h[b, t] : !vec) -> tensor<32xf32> {
    %y = arith.addf %x, %x : tensor<32xf32>
    pdg.yield %y : tensor<32xf32>
  }

  %count = pdg.udf "count" [b] (%next[b, 0 : T] : !tok) -> tensor<i64>
  pdg.output "tokens" %next : !tok
  pdg.output "count" %count : !pdg.value<[b], tensor<i64>>
  pdg.output "logits" %logits : !pdg.value<[b, t], tensor<64xf32>>
}
