// Case conditions over a launch symbol, and a default case.
pdg.graph @g {
  pdg.dim @b < launch B max 8
  %x = pdg.node "x" [b] -> tensor<i64>
    case (b == B - 1) {
      %c = arith.constant dense<100> : tensor<i64>
      pdg.yield %c : tensor<i64>
    }
    default {
      %i = pdg.point @b : index
      %v = arith.index_cast %i : index to i64
      %t = tensor.from_elements %v : tensor<i64>
      pdg.yield %t : tensor<i64>
    }
  pdg.output "x" %x : !pdg.value<[b], tensor<i64>>
}
