"""Every interpreter test program (test/python/interpreter/programs),
compiled and run on seeded random inputs: the outputs and bounds equal the
interpreter's (float outputs to 1e-6 relative; f16 to 1e-3)."""

from __future__ import annotations

import numpy as np
import pdg.runtime
import pytest
from conftest import REPO_ROOT
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_file
from pdg.lowering.artifact import compile_module
from pdg.runtime.memref import ELEMENTS


def program(name: str):
    return REPO_ROOT / "test" / "python" / "interpreter" / "programs" / f"{name}.mlir"


# Programs with a udf (interpreted only) or made to fail are left out.
PROGRAMS = ["scan", "windows", "cases", "dynamic", "linalg", "scalars"]
SYMBOLS = {"B": 3}


def _random_inputs(manifest: dict, symbols: dict, rng) -> dict:
    extents = {s["dim"]: symbols.get(s["name"]) for s in manifest["symbols"]}
    inputs = {}
    for spec in manifest["abi"]["inputs"]:
        rank = len(spec["domain"])
        shape = [
            extents[d] if n is None else n
            for d, n in zip(spec["domain"], spec["shape"][:rank], strict=True)
        ] + spec["shape"][rank:]
        dtype = np.dtype(ELEMENTS[spec["element"]])
        if dtype.kind == "f":
            inputs[spec["name"]] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            inputs[spec["name"]] = rng.random(shape) < 0.5
        else:
            inputs[spec["name"]] = rng.integers(1, 6, shape).astype(dtype)
    return inputs


def _close(ref, got, name: str) -> None:
    if isinstance(ref, list):
        assert isinstance(got, list) and len(ref) == len(got), name
        for a, b in zip(ref, got, strict=True):
            _close(a, b, name)
        return
    ref, got = np.asarray(ref), np.asarray(got)
    assert ref.shape == got.shape and ref.dtype == got.dtype, name
    if ref.dtype.kind == "f":
        rtol = 1e-3 if ref.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, ref, err_msg=name)


@pytest.mark.parametrize("name", PROGRAMS)
def test_01_compiled_program_equals_interpreted(name, tmp_path):
    path = tmp_path / f"{name}.pdgx"
    compiled = compile_module(parse_file(str(program(name)), make_context()), path)
    runner = pdg.runtime.load(path)
    symbols = {s: v for s, v in SYMBOLS.items() if s in runner.launch_symbols}
    for seed in range(2):
        inputs = _random_inputs(compiled.manifest, symbols, np.random.default_rng(seed))
        ref = interpret(program(name), inputs, symbols=symbols)
        got = runner.run(inputs, symbols)
        assert ref.outputs.keys() == got.outputs.keys()
        for out in ref.outputs:
            _close(ref.outputs[out], got.outputs[out], f"{name}:{out}")
        for bound, value in ref.bounds.items():
            np.testing.assert_array_equal(np.asarray(value), np.asarray(got.bounds[bound]))
