"""The compile cache ($PDG_COMPILE_CACHE, pdg.lowering.compile_cache): a
module compiled once is copied, not compiled, the next time (by any
process); another module or option is another entry; a damaged or partial
entry is compiled again; two processes compiling one module at once
compile it once."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pdg.lowering.artifact as artifact
import pytest
from pdg.lowering import compile_cache
from pdg.lowering.artifact import compile_module

from .test_artifact_cache import run, scaled


def files(path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory as $PDG_COMPILE_CACHE, and a count of the
    compiles that really ran."""
    directory = tmp_path / "cache"
    monkeypatch.setenv(compile_cache.ENV, str(directory))
    compiles = []
    real = artifact._compile

    def counted(*args, **kwargs):
        compiles.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(artifact, "_compile", counted)
    return directory, compiles


def entries(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith("."))


def test_a_module_compiled_once_is_copied_the_next_time(tmp_path, cache):
    directory, compiles = cache
    first = compile_module(scaled(2.0).build(), tmp_path / "a.pdgx", gpu=False)
    again = compile_module(scaled(2.0).build(), tmp_path / "b.pdgx", gpu=False)
    assert compiles == [tmp_path / "a.pdgx"]  # the second one compiled nothing
    assert not first.cached and first.seconds
    assert again.cached and again.seconds == {} and again.manifest == first.manifest
    assert files(tmp_path / "b.pdgx") == files(tmp_path / "a.pdgx")
    np.testing.assert_array_equal(run(tmp_path / "b.pdgx"), 2.0 * np.arange(6).reshape(2, 3))
    assert len(entries(directory)) == 1
    # Nothing half-written is left: only the entry and its lock.
    assert all(p.name.endswith(".lock") for p in directory.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize(
    "change",
    [
        {"factor": 3.0},
        {"vectorize": "b"},
        {"check_indices": False},
        {"gpu": True},
    ],
)
def test_another_module_or_option_is_another_entry(tmp_path, cache, change):
    directory, compiles = cache
    compile_module(scaled(2.0).build(), tmp_path / "a.pdgx", gpu=False)
    options = {"gpu": False, **change}
    factor = options.pop("factor", 2.0)
    other = compile_module(scaled(factor).build(), tmp_path / "b.pdgx", **options)
    assert not other.cached and len(compiles) == 2
    assert len(entries(directory)) == 2
    np.testing.assert_allclose(run(tmp_path / "b.pdgx"), factor * np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("setting", ["blas threshold", "split in loop"])
def test_the_native_settings_are_in_the_key(tmp_path, cache, monkeypatch, setting):
    """What decides the native code without changing the module (the size
    from which products call a BLAS; whether products in the driver's
    loop are split over the threads, which test_matvec_split and
    `bench/scale.py --impls pdg-unsplit` turn off) gives another key."""
    import pdg.lowering.native as native

    directory, compiles = cache
    compile_module(scaled(2.0).build(), tmp_path / "a.pdgx", gpu=False)
    if setting == "blas threshold":
        monkeypatch.setattr(native, "BLAS_MIN_FLOPS", native.BLAS_MIN_FLOPS + 1)
        monkeypatch.setattr(native, "blas_library", lambda: tmp_path / "libscipy_openblas.so")
    else:
        monkeypatch.setattr(native, "SPLIT_IN_LOOP_MIN_WORK", -1)
    assert not compile_module(scaled(2.0).build(), tmp_path / "b.pdgx", gpu=False).cached
    assert len(compiles) == 2


@pytest.mark.parametrize("damage", ["library", "manifest", "missing library", "empty"])
def test_a_damaged_or_partial_entry_is_compiled_again(tmp_path, cache, damage):
    directory, compiles = cache
    compile_module(scaled(2.0).build(), tmp_path / "a.pdgx", gpu=False)
    (entry,) = [directory / name for name in entries(directory)]
    library, manifest = entry / "program.so", entry / "manifest.json"
    if damage == "library":
        library.write_bytes(library.read_bytes()[:-100] + bytes(100))
    elif damage == "manifest":
        manifest.write_text(manifest.read_text()[:40])
    elif damage == "missing library":
        library.unlink()
    else:  # a directory with nothing in it yet
        library.unlink()
        manifest.unlink()
    again = compile_module(scaled(2.0).build(), tmp_path / "b.pdgx", gpu=False)
    assert not again.cached and len(compiles) == 2
    np.testing.assert_array_equal(run(tmp_path / "b.pdgx"), 2.0 * np.arange(6).reshape(2, 3))
    # The entry was replaced by a whole one, which the next compile copies.
    assert entries(directory) == [entry.name]
    assert compile_module(scaled(2.0).build(), tmp_path / "c.pdgx", gpu=False).cached


def test_a_failed_compile_leaves_no_entry(tmp_path, cache, monkeypatch):
    directory, _ = cache

    def fails_late(module, library, support):
        library.write_bytes(b"half")
        raise artifact.CompileError("the native build failed")

    monkeypatch.setattr(artifact, "build_library", fails_late)
    with pytest.raises(artifact.CompileError, match="native build"):
        compile_module(scaled(2.0).build(), tmp_path / "a.pdgx", gpu=False)
    assert entries(directory) == []
    assert not (tmp_path / "a.pdgx").exists()


CHILD = textwrap.dedent(
    """
    import sys
    import pdg.frontend as pf
    from pdg.lowering.artifact import compile_module

    prog = pf.Program("scaled")
    b = prog.dim("b", launch="B")
    x = prog.input("x", (3,), "f32", domain=[b])
    prog.output("y", (x * 5.0).named("y"))
    print(compile_module(prog.build(), sys.argv[1], gpu=False).cached)
    """
)


def test_two_processes_at_once_compile_once(tmp_path, monkeypatch):
    """Two processes (MPI ranks, xdist workers) compiling one module at the
    same time: one compiles, the other waits for it and copies."""
    monkeypatch.setenv(compile_cache.ENV, str(tmp_path / "cache"))
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    children = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / f"{i}.pdgx")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    results = [child.communicate(timeout=600) for child in children]
    for child, (_, err) in zip(children, results, strict=True):
        assert child.returncode == 0, err
    assert sorted(out.strip() for out, _ in results) == ["False", "True"]
    assert files(tmp_path / "0.pdgx") == files(tmp_path / "1.pdgx")
    assert len(entries(tmp_path / "cache")) == 1
