"""Graph, node, input and output names may hold any character (quotes,
braces, backslashes, line breaks): a program so named compiles, runs and
agrees with the interpreter. An input named "a}" or 'w"q' once broke the
lowered text's parse (an internal error, found by the fuzzer)."""

from __future__ import annotations

import numpy as np
import pdg.runtime
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module

PROGRAM = r"""
pdg.graph @"g}\"\0Ah" {
  pdg.dim @b < launch B
  pdg.dim @t < 3
  %w = pdg.input "w}\"\0Aq" : !pdg.value<[b], tensor<2xf32>>
  %v = pdg.input "v\\{" : !pdg.value<[], tensor<2xf32>>
  %x = pdg.node "x}\"y" [b, t] -> tensor<2xf32>
    case (t == 0) (%a = %w[b] : !pdg.value<[b], tensor<2xf32>>) {
      pdg.yield %a : tensor<2xf32>
    }
    case (t >= 1) (%p = %x[b, t - 1] : !pdg.value<[b, t], tensor<2xf32>>,
                   %c = %v[] : !pdg.value<[], tensor<2xf32>>) {
      %s = arith.addf %p, %c : tensor<2xf32>
      pdg.yield %s : tensor<2xf32>
    }
  pdg.output "out}\"" %x : !pdg.value<[b, t], tensor<2xf32>>
}
"""


def test_01_odd_names_compile_run_and_match_the_interpreter(tmp_path):
    inputs = {
        'w}"\nq': np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32),
        "v\\{": np.array([0.5, -1.0], dtype=np.float32),
    }
    path = tmp_path / "odd.pdgx"
    compile_module(parse_text(PROGRAM, "odd.mlir", make_context()), path, gpu=False)
    got = pdg.runtime.load(path).run(inputs, {"B": 2}).outputs
    want = interpret(parse_text(PROGRAM, "odd.mlir", make_context()), inputs, symbols={"B": 2})
    assert list(got) == ['out}"']
    np.testing.assert_array_equal(got['out}"'], want.outputs['out}"'])
    np.testing.assert_array_equal(got['out}"'][1, 2], [4.0, 2.0])
