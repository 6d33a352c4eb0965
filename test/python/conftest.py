"""Shared fixtures for pdg's Python tests: contexts, repository paths, a
small sample program, an in-process `pdg-opt` runner and a scoped registry
of test-only Python passes."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pdg.ir
import pytest
from pdg.passes import registry

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO_ROOT / "examples"
DECODE_STEP = EXAMPLES_DIR / "decode_step.mlir"
PDG_OPT_EXE = REPO_ROOT / ".venv" / "bin" / "pdg-opt"

from sample_programs import BAD_DIM_PROGRAM, SMALL_PROGRAM  # noqa: E402,F401


@pytest.fixture
def ctx():
    """A fresh context with the pdg dialect (and upstream dialects) loaded."""
    return pdg.ir.make_context()


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def decode_step_path() -> Path:
    assert DECODE_STEP.is_file(), DECODE_STEP
    return DECODE_STEP


@pytest.fixture
def pdg_opt_exe() -> Path:
    if not PDG_OPT_EXE.exists():
        pytest.skip(f"{PDG_OPT_EXE} is not installed")
    return PDG_OPT_EXE


@pytest.fixture
def small_program() -> str:
    return SMALL_PROGRAM


@pytest.fixture
def write_file(tmp_path):
    """write_file(name, text) -> Path of a file under the test's tmp dir."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@dataclass
class OptResult:
    rc: int
    out: str
    err: str


@pytest.fixture
def opt(capfd, monkeypatch):
    """Runs `pdg.cli.opt.main(argv)` in-process; returns rc, stdout, stderr.

    Captures at the file-descriptor level (capfd) so that what the C++ side
    prints (IR dumps, the pass list) is seen too. `stdin` replaces sys.stdin.
    """
    from pdg.cli.opt import main

    def run(*argv: str, stdin: str | None = None) -> OptResult:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capfd.readouterr()  # drop anything printed before
        rc = main(list(argv))
        sys.stdout.flush()
        sys.stderr.flush()
        captured = capfd.readouterr()
        return OptResult(rc, captured.out, captured.err)

    return run


@pytest.fixture
def python_pass():
    """Registers test-only Python passes; unregisters them afterwards.

    `python_pass(name, fn, summary=...)` registers `fn(module)` under `name`
    through the public decorator and returns `fn`.
    """
    added: list[str] = []

    def add(name: str, fn, summary: str = "test-only pass"):
        assert registry.get_pass(name) is None, f"{name} already registered"
        registry.register(name, summary)(fn)
        added.append(name)
        return fn

    yield add
    for name in added:
        registry._PASSES.pop(name, None)


@pytest.fixture
def no_compile_cache(monkeypatch):
    """Compiles in this test really compile: for tests that replace the
    compiler's internals or watch its phases, which a hit in the compile
    cache that tools/test.sh shares across the run ($PDG_COMPILE_CACHE,
    pdg.lowering.compile_cache) would skip."""
    monkeypatch.delenv("PDG_COMPILE_CACHE", raising=False)
