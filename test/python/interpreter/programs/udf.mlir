// A host callback scoring each row's prefix, and a node using its result.
!bt = !pdg.value<[b, t], tensor<2xf32>>

pdg.graph @scored {
  pdg.dim @b < launch B max 4
  pdg.dim @t < 5
  %x = pdg.input "x" : !bt
  %score = pdg.udf "score" [b, t] (%x[b, 0 : t + 1] : !bt) -> tensor<f32>
  %twice = pdg.node "twice" [b, t] (%s = %score[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    %d = arith.addf %s, %s : tensor<f32>
    pdg.yield %d : tensor<f32>
  }
  pdg.output "score" %score : !pdg.value<[b, t], tensor<f32>>
  pdg.output "twice" %twice : !pdg.value<[b, t], tensor<f32>>
}
