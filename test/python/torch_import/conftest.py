"""Fixtures of the torch-import tests: torch-mlir must be installed (it is
never imported here: it runs in pdg's worker process), one import cache
per test session, and running a program both ways (interpreted, compiled)."""

from __future__ import annotations

import importlib.util
import platform
import sys

import numpy as np
import pytest

SUPPORTED = (
    sys.platform == "linux" and platform.machine() == "x86_64" and (sys.version_info[:2] == (3, 11))
)


@pytest.fixture(autouse=True)
def _needs_torch_mlir():
    """Skipped only where torch-mlir has no wheel; missing elsewhere, a failure."""
    if importlib.util.find_spec("torch_mlir") is not None:
        return
    if not SUPPORTED:
        pytest.skip("torch-mlir has no wheel for this platform (Linux x86_64, CPython 3.11 only)")
    pytest.fail("torch-mlir is not installed: pip install -e '.[test]' installs it")


@pytest.fixture(scope="session")
def import_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("torch-import-cache")


def run_both(program, inputs, symbols, tmp_path, name="prog"):
    """The outputs of `program` interpreted and compiled (CPU)."""
    import pdg.runtime
    from pdg.interpreter import interpret
    from pdg.ir import make_context, parse_text
    from pdg.lowering.artifact import compile_module

    module = program.build()
    interpreted = interpret(module, inputs, symbols=symbols).outputs
    path = tmp_path / f"{name}.pdgx"
    compile_module(parse_text(str(module), name, make_context()), path, gpu=False)
    compiled = pdg.runtime.load(path).run(inputs, symbols).outputs
    return interpreted, compiled


def assert_close(actual, expected, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=0, atol=atol)
