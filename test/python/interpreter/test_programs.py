"""The test programs are valid pdg (they parse and verify), and the API
accepts a module, a graph op or a path."""

from __future__ import annotations

import numpy as np
import pytest
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_file

from .helpers import PROGRAMS, program


@pytest.mark.parametrize("path", sorted(PROGRAMS.glob("*.mlir")), ids=lambda p: p.name)
def test_program_verifies(path):
    parse_file(path, make_context())  # raises ParseFailure on any diagnostic


def test_module_graph_op_and_path_agree():
    inputs = {"start": np.array([2], np.int64), "limit": np.array([9], np.int64)}
    module = parse_file(program("dynamic"), make_context())
    graph = module.body.operations[0]
    results = [
        interpret(p, inputs, symbols={"B": 1})
        for p in (module, graph, graph.operation, program("dynamic"), str(program("dynamic")))
    ]
    for r in results:
        np.testing.assert_array_equal(r.outputs["c"], [[2, 5, 8, 11]])


def test_graph_is_chosen_by_name():
    r = interpret(program("errors"), {"a": np.array([1, 2, 4, 5], np.int32)}, graph="divide")
    np.testing.assert_array_equal(r.outputs["x"], [100, 50, 25, 20])
