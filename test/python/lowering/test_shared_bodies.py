"""Bodies with the same code are one function in the library (the layers
of a model differ only in the weights they read, which are arguments),
and the windows that wrap around a circular store are read through one
function per kind of window: the lowered program does not grow with
depth (issue 26: 12 layers of window attention took 59 s to compile,
quadratic in depth). Compiled runs still match the interpreter, and an
index fault in shared code names every node that runs it."""

from __future__ import annotations

import re

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from decode_programs import small_decode
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.lowering.lower import lower_to_loops
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.passes.pipelines import optimize
from pdg.runtime import RunError

from .test_compiled_decode import BATCHES, EOS, check_against_interpreter


def _lowered(layers: int, pattern: str) -> str:
    decode = small_decode(pattern, layers=layers, vocab=16, d_model=8, max_len=24, eos=EOS)
    module = parse_text(str(decode.program.build()), "decode", make_context())
    assert run_pipeline(module, parse_pipeline(optimize())) == []
    lower_to_loops(module)
    return str(module)


def _functions(text: str) -> list[str]:
    return re.findall(r"func\.func (?:private )?@([\w$.]+)\(", text)


@pytest.mark.parametrize("pattern", ["full", "window:3"])
def test_01_functions_do_not_grow_with_depth(pattern):
    shallow, deep = _lowered(2, pattern), _lowered(5, pattern)
    assert len(_functions(shallow)) == len(_functions(deep)), (
        _functions(shallow),
        _functions(deep),
    )
    # The layers' shared wrappers are calls, never inlined copies.
    calls = re.findall(r"func\.call @([\w$.]+_into)\(", deep)
    shared = {name for name in calls if calls.count(name) > 1}
    assert shared
    for name in shared:
        header = re.search(rf"func\.func private @{re.escape(name)}\(.*", deep).group(0)
        assert '"noinline"' in header, header
    if pattern.startswith("window"):
        windows = [f for f in _functions(deep) if "_window_" in f]
        assert len(windows) == 1  # every layer's keys and values
        entry = deep[deep.index("func.func @pdg_decode(") :]
        entry = entry[: entry.index("\n  }\n")]
        assert "linalg.copy" not in entry  # the copies live in the window function


@pytest.fixture(scope="module", params=["window:3", "full"])
def deep(request, tmp_path_factory):
    decode = small_decode(
        request.param, layers=4, vocab=16, d_model=8, max_len=24, eos=EOS, prompt_width=3
    )
    text = str(decode.program.build())
    path = tmp_path_factory.mktemp("deep") / "decode.pdgx"
    compile_module(parse_text(text, "decode", make_context()), path, gpu=False)
    return decode, text, pdg.runtime.load(path)


@pytest.mark.parametrize("batch", range(len(BATCHES)))
def test_02_four_layers_sharing_bodies_match_the_interpreter(deep, batch):
    decode, text, program = deep
    check_against_interpreter(decode, text, program, BATCHES[batch])


def test_03_an_index_fault_in_shared_code_names_every_node(tmp_path):
    prog = pf.Program("lookups")
    b = prog.dim("b", launch="B")
    ids = prog.input("ids", (), "i64", domain=[b])
    first = prog.input("first_table", (8, 4), "f32")
    second = prog.input("second_table", (8, 4), "f32")
    prog.output("x", (pf.take(first, ids) * 2.0).named("first"))
    prog.output("y", (pf.take(second, ids) * 2.0).named("second"))
    path = tmp_path / "lookups.pdgx"
    compiled = compile_module(prog.build(), path, gpu=False)
    checks = compiled.manifest["index_checks"]
    assert len(checks) == 1, checks  # one function, one check site
    program = pdg.runtime.load(path)
    table = np.arange(32, dtype=np.float32).reshape(8, 4)
    inputs = {"first_table": table, "second_table": table + 1}
    out = program.run({**inputs, "ids": np.array([7, 0], np.int64)}, {"B": 2}).outputs
    np.testing.assert_array_equal(out["x"], table[[7, 0]] * 2.0)
    np.testing.assert_array_equal(out["y"], (table + 1)[[7, 0]] * 2.0)
    with pytest.raises(RunError) as e:
        program.run({**inputs, "ids": np.array([1, 9], np.int64)}, {"B": 2})
    message = str(e.value)
    assert "index 9 is out of range 0..7" in message
    assert "first" in message and "second" in message, message
    assert "at b=1" in message
