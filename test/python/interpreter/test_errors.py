"""One test per kind of error: each is an InterpreterError saying what, where
and (mostly) how to fix it."""

from __future__ import annotations

import numpy as np
import pytest
from pdg.interpreter import InterpreterError, interpret

from .helpers import program, run


def _errors(graph: str, inputs: dict, **kwargs):
    return interpret(program("errors"), inputs, graph=graph, **kwargs)


def _scan_inputs(batch: int = 2) -> dict:
    return {"a": np.zeros(10, np.float32), "ab": np.zeros((batch, 10), np.int64)}


def test_missing_input():
    with pytest.raises(InterpreterError) as e:
        run("scan", {"a": np.zeros(10, np.float32)}, symbols={"B": 2})
    assert "missing input 'ab'" in str(e.value)
    assert "shape (B, 10)" not in str(e.value) and "shape (2, 10)" in str(e.value)


def test_unknown_input():
    with pytest.raises(InterpreterError, match="unknown input 'c'"):
        run("scan", {**_scan_inputs(), "c": np.zeros(1)}, symbols={"B": 2})


def test_wrong_input_shape():
    inputs = {**_scan_inputs(), "ab": np.zeros((2, 9), np.int64)}
    with pytest.raises(InterpreterError) as e:
        run("scan", inputs, symbols={"B": 2})
    text = str(e.value)
    assert "input 'ab' has shape (2, 9) and dtype int64" in text
    assert "expects shape (2, 10) and dtype int64" in text


def test_wrong_input_dtype():
    inputs = {**_scan_inputs(), "a": np.zeros(10, np.float64)}
    with pytest.raises(
        InterpreterError,
        match=r"input 'a' has shape \(10,\) and dtype float64.*"
        r"dtype float32",
    ):
        run("scan", inputs, symbols={"B": 2})


@pytest.mark.parametrize(
    "symbols, message",
    [
        ({"B": 0}, r"launch symbol B = 0 is out of range: 1 <= B <= 8"),
        ({"B": 9}, r"launch symbol B = 9 is out of range: 1 <= B <= 8"),
        ({}, r"missing a value for launch symbol B"),
        ({"B": 2, "C": 1}, r"unknown symbol C"),
        ({"B": 2.5}, r"launch symbol B must be an integer"),
    ],
)
def test_bad_symbol_value(symbols, message):
    with pytest.raises(InterpreterError, match=message):
        run("scan", _scan_inputs(), symbols=symbols)


def test_dynamic_symbol_is_not_given():
    inputs = {"start": np.zeros(1, np.int64), "limit": np.zeros(1, np.int64)}
    with pytest.raises(InterpreterError, match="bound of dynamic dim 't'.*\n.*max_steps"):
        run("dynamic", inputs, symbols={"B": 1, "T": 3})


def test_out_of_domain_read():
    with pytest.raises(InterpreterError) as e:
        _errors("out_of_domain", {"a": np.zeros(4, np.float32)})
    text = str(e.value)
    assert "node 'next'" in text and "(t=3)" in text  # the consumer and point
    assert "reads a[t + 1], index 4 along dim 't'" in text  # the access
    assert "outside the domain of input 'a' (0 <= t < 4)" in text  # the producer
    assert "hint:" in text


def test_read_past_a_dynamic_end():
    # last[b] reads c[b, T - 1]; reading c[b, T] would be past the end. A
    # program can only do that through an access, so build one here.
    from pdg.ir import make_context, parse_text

    text = program("dynamic").read_text().replace("%c[b, T - 1]", "%c[b, T]")
    module = parse_text(text, "dynamic_past_end.mlir", make_context())
    inputs = {"start": np.array([0, 5], np.int64), "limit": np.array([7, 5], np.int64)}
    with pytest.raises(InterpreterError) as e:
        interpret(module, inputs, symbols={"B": 2})
    text = str(e.value)
    assert "node 'last'" in text and "(b=0)" in text
    assert "reads c[b, T], index 4 along dim 't'" in text
    assert "dim 't' ended after 4 steps for (b=0)" in text


def test_no_case_matches():
    with pytest.raises(InterpreterError) as e:
        _errors("no_case", {"a": np.zeros(4, np.float32)})
    text = str(e.value)
    assert "node 'gappy'" in text and "(t=1)" in text and "no case's condition holds" in text
    assert "(t == 0)" in text and "(t - 2 >= 0)" in text


def test_missing_udf():
    with pytest.raises(InterpreterError, match="missing udf 'score'.*\n.*the program calls: score"):
        run("udf", {"x": np.zeros((2, 5, 2), np.float32)}, symbols={"B": 2}, udfs={"scor": len})


def test_raising_udf():
    def score(prefix):
        raise ValueError("no reward model loaded")

    with pytest.raises(InterpreterError) as e:
        run("udf", {"x": np.zeros((2, 5, 2), np.float32)}, symbols={"B": 2}, udfs={"score": score})
    text = str(e.value)
    assert "udf 'score' at (b=0, t=0)" in text
    assert "raised ValueError: no reward model loaded" in text
    assert isinstance(e.value.__cause__, ValueError)


def test_unsupported_op():
    with pytest.raises(InterpreterError) as e:
        _errors("unsupported", {"a": np.zeros(4, np.int32)})
    text = str(e.value)
    assert "unsupported op 'math.ctlz'" in text
    assert "node 'lz'" in text and "errors.mlir:54:10" in text  # the op's file:line:col


def test_runtime_cycle():
    with pytest.raises(InterpreterError) as e:
        _errors("cycle", {"a": np.zeros(4, np.float32)})
    text = str(e.value)
    assert "dependence cycle at run time" in text
    assert "node 'y' at (t=1) -> node 'x' at (t=0) -> node 'y' at (t=1)" in text


def test_cycle_through_a_dynamic_bound():
    # done[b, t] reads c[b, T - 1]: T is only known once done was true.
    from pdg.ir import make_context, parse_text

    text = (
        program("dynamic")
        .read_text()
        .replace("%v = %c[b, t] : !bt, %l", "%v = %c[b, T - 1] : !bt, %l")
    )
    module = parse_text(text, "dynamic_cycle.mlir", make_context())
    inputs = {"start": np.array([0], np.int64), "limit": np.array([7], np.int64)}
    with pytest.raises(InterpreterError) as e:
        interpret(module, inputs, symbols={"B": 1})
    assert "dependence cycle at run time: node 'done' at (b=0, t=0) -> (to learn T(b=0)) " in str(
        e.value
    )


def test_division_by_zero_names_the_op():
    with pytest.raises(InterpreterError) as e:
        _errors("divide", {"a": np.array([1, 2, 0, 3], np.int32)})
    text = str(e.value)
    assert "node 'div'" in text and "(t=2)" in text
    assert "arith.divsi at" in text and "division by zero" in text


def test_dynamic_dim_without_max_needs_max_steps():
    with pytest.raises(InterpreterError, match="dynamic dim 't' has no max"):
        _errors("unbounded", {}, symbols={"B": 2})


def test_symbol_T_in_a_node_without_the_group_dim():
    with pytest.raises(InterpreterError) as e:
        _errors("unbounded", {}, symbols={"B": 2}, max_steps=10)
    text = str(e.value)
    assert "node 'n'" in text and "uses T" in text and "not defined over 'b'" in text


def test_unknown_graph_and_unparsable_file(tmp_path):
    with pytest.raises(InterpreterError, match="no pdg.graph named 'nope'"):
        _errors("nope", {})
    bad = tmp_path / "bad.mlir"
    bad.write_text("pdg.graph @g { pdg.dim @t < 0 }")
    with pytest.raises(InterpreterError, match="cannot parse"):
        interpret(bad, {})
