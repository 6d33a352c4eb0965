// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Inputs the mutation fuzzer found aborting pdg-opt: each must be an error.

// A forward reference outside a node is never resolved by a value defined in
// the node's (isolated) body, even when the node fails to parse.
pdg.graph @g {
  %x = pdg.input "x" : !pdg.value<[], tensor<4xf32>>
  %u = arith.addf %s, %s : tensor<4xf32>
  // expected-error @+1 {{use of value '%x' expects different type than prior uses}}
  %y = pdg.node "y" [] (%a = %x[] : !pdg.value<[z], tensor<4xf32>>) -> tensor<4xf32> {
    %s = arith.addf %a, %a : tensor<4xf32>
    pdg.yield %s : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'pdg' is a dialect, not an operation: a generic op name is 'dialect.op', e.g. "pdg.node"}}
"pdg"() : () -> ()

// -----

// The same with a trailing dot (found by the fuzzer's lowering mode).
// expected-error @+1 {{'arith.' is a dialect, not an operation}}
"arith."() : () -> ()

// -----

func.func @f(%x: tensor<?xf32>, %init: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'dimensions' must list 64-bit integers, got 'x'}}
  %s = linalg.reduce ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) dimensions = [x]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}

// -----

func.func @f(%x: tensor<?xf32>, %init: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'dimensions' must list 64-bit integers, got '1000000000000000000000000000000'}}
  %s = linalg.reduce ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) dimensions = [1000000000000000000000000000000]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %o: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'permutation =' must be followed by a list of integers in '[...]'}}
  %r = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%o : tensor<3x2xf32>) permutation = @1]
  return %r : tensor<3x2xf32>
}

// -----

// A bound symbol must be a plain identifier (isl and the frontend use it).
pdg.graph @g {
  // expected-error @+1 {{dim 'b' needs a bound symbol name that is an identifier}}
  pdg.dim @b < launch pdg.dim max 4
}

// -----

// A dim missing its (required) name, seen by an earlier op's verifier
// before its own: no crash (found by the fuzzer's lowering mode).
pdg.graph @nameless_dim {
  // expected-error @+1 {{uses unknown dim 't'}}
  %d = pdg.input "d" : !pdg.value<[t], tensor<i1>>
  "pdg.dim"(%d) <{kind = #pdg<bound static>, size = 8 : i64, bound = "t"}> : (!pdg.value<[t], tensor<i1>>) -> ()
}

// -----

// The same for a dim missing its kind.
pdg.graph @kindless_dim {
  // expected-error @+1 {{uses unknown dim 't'}}
  %d = pdg.input "d" : !pdg.value<[t], tensor<i1>>
  "pdg.dim"() <{size = 8 : i64, sym_name = "t"}> : () -> ()
}

// -----

// tensor.expand_shape verifies with a static output_shape entry that its
// result type contradicts; bufferized in the lowering, its memref twin then
// failed to verify: an internal error (seed 6, lowering mode).
func.func @f(%r: tensor<?xf32>, %n: index) -> tensor<1x?xf32> {
  // expected-error @+1 {{'tensor.expand_shape' op output_shape entry #0 is -1, but the result type's size there is 1}}
  %m = tensor.expand_shape %r [[0, 1]] output_shape [-1, %n] : tensor<?xf32> into tensor<1x?xf32>
  return %m : tensor<1x?xf32>
}

// -----

func.func @f(%r: tensor<?xf32>, %n: index) -> tensor<4x?xf32> {
  // expected-error @+1 {{output_shape entry #1 is 8, but the result type's size there is '?' (give an SSA value for it)}}
  %m = tensor.expand_shape %r [[0, 1]] output_shape [4, 8] : tensor<?xf32> into tensor<4x?xf32>
  return %m : tensor<4x?xf32>
}

// -----

// Consistent entries are fine.
func.func @f(%r: tensor<?xf32>, %n: index) -> tensor<1x?xf32> {
  %m = tensor.expand_shape %r [[0, 1]] output_shape [1, %n] : tensor<?xf32> into tensor<1x?xf32>
  return %m : tensor<1x?xf32>
}

// -----

// A reassociation index outside the expanded shape aborted the upstream
// verifier ("willBeValidAffineMap"); -1 is 0xFFFFFFFFFFFFFFFF, as the
// fuzzer wrote it (seed 6).
func.func @f(%r: tensor<?xf32>, %n: index) -> tensor<1x?xf32> {
  // expected-error @+1 {{'tensor.expand_shape' op reassociation index -1 is not a dim of the expanded shape, which has rank 2 (indices 0 to 1)}}
  %m = tensor.expand_shape %r [[0xFFFFFFFFFFFFFFFF, 1]] output_shape [1, %n] : tensor<?xf32> into tensor<1x?xf32>
  return %m : tensor<1x?xf32>
}

// -----

// 2^32 was wrapped to 0 and accepted.
func.func @f(%r: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'tensor.collapse_shape' op reassociation index 4294967296 is not a dim}}
  %m = tensor.collapse_shape %r [[4294967296, 1]] : tensor<2x3xf32> into tensor<6xf32>
  return %m : tensor<6xf32>
}

// -----

// The generic form reaches the same verifier.
func.func @f(%r: memref<2x3xf32>) -> memref<6xf32> {
  // expected-error @+1 {{'memref.collapse_shape' op reassociation index 4294967295 is not a dim}}
  %m = "memref.collapse_shape"(%r) <{reassociation = [[0, 4294967295]]}> : (memref<2x3xf32>) -> memref<6xf32>
  return %m : memref<6xf32>
}

// -----

// A dense array of index aborted upstream's parser (it asks index for a bit
// width); the fuzzer's mutant renamed `array<i32: 0, 0>` in a generic op.
// expected-error @+1 {{a dense array's elements are integers or floats ('array<i64: ...>'), not 'index'}}
func.func @f() attributes {a = array<index: 0>} {
  return
}

// -----

// expected-error @+1 {{not 'index'}}
"memref.alloc"() <{operandSegmentSizes = array< index>}> : () -> memref<4xi1>
