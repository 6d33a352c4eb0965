"""The artifact cache (pdg.lowering.cache): a program compiled into a cache
directory is loaded from it the next time, another program or option gets
its own entry, and without a cache the artifact goes to the work dir."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from pdg.lowering.cache import build_artifact


def scaled(factor: float) -> pf.Program:
    prog = pf.Program("scaled")
    b = prog.dim("b", launch="B")
    x = prog.input("x", (3,), "f32", domain=[b])
    prog.output("y", (x * factor).named("y"))
    return prog


def run(path, batch: int = 2) -> np.ndarray:
    x = np.arange(3 * batch, dtype=np.float32).reshape(batch, 3)
    return pdg.runtime.load(path).run({"x": x}, {"B": batch}).outputs["y"]


def test_a_program_compiles_once_per_cache(tmp_path):
    cache = tmp_path / "cache"
    first = build_artifact(scaled(2.0), "scaled", tmp_path / "a", cache)
    again = build_artifact(scaled(2.0), "scaled", tmp_path / "b", cache)
    assert not first.cached and first.seconds > 0
    assert again.cached and again.seconds == 0.0 and again.path == first.path
    assert first.path.parent == cache
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(run(again.path), 2.0 * x)
    # Nothing half-written is left beside the entries.
    assert [p.name.startswith(".") for p in cache.iterdir()] == [False]


def test_another_program_or_option_is_another_entry(tmp_path):
    cache = tmp_path / "cache"
    two = build_artifact(scaled(2.0), "scaled", tmp_path, cache)
    three = build_artifact(scaled(3.0), "scaled", tmp_path, cache)
    folded = build_artifact(scaled(2.0), "scaled", tmp_path, cache, vectorize="b")
    assert len({two.path, three.path, folded.path}) == 3
    assert not three.cached and not folded.cached
    np.testing.assert_allclose(run(three.path), 1.5 * run(two.path))
    np.testing.assert_allclose(run(folded.path), run(two.path))


def test_without_a_cache_the_artifact_is_in_the_work_dir(tmp_path):
    built = build_artifact(scaled(2.0), "scaled", tmp_path)
    assert built.path == tmp_path / "scaled.pdgx" and not built.cached
    np.testing.assert_allclose(run(built.path, 4)[3], [18.0, 20.0, 22.0])


@pytest.mark.usefixtures("no_compile_cache")  # build_library replaced
def test_a_compile_that_fails_late_leaves_nothing(tmp_path, monkeypatch):
    """A failure after the artifact's files were begun (the native build)
    leaves neither an entry nor a half-written directory."""
    import pdg.lowering.artifact as artifact

    def fails_late(module, library, support):
        library.write_bytes(b"half")
        raise artifact.CompileError("the native build failed")

    monkeypatch.setattr(artifact, "build_library", fails_late)
    with pytest.raises(artifact.CompileError, match="native build"):
        build_artifact(scaled(2.0), "scaled", tmp_path, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


@pytest.mark.parametrize("damage", ["library", "manifest", "missing library"])
def test_a_damaged_entry_is_compiled_again(tmp_path, damage):
    """A cache hit is checked (every part's sha256): a damaged entry is not
    returned as cached, but compiled again in its place."""
    cache = tmp_path / "cache"
    first = build_artifact(scaled(2.0), "scaled", tmp_path, cache)
    library, manifest = first.path / "program.so", first.path / "manifest.json"
    if damage == "library":
        library.write_bytes(library.read_bytes()[:-100] + bytes(100))
    elif damage == "manifest":
        manifest.write_text(manifest.read_text()[:40])
    else:
        library.unlink()
    again = build_artifact(scaled(2.0), "scaled", tmp_path, cache)
    assert not again.cached and again.path == first.path
    np.testing.assert_array_equal(run(again.path), 2.0 * np.arange(6).reshape(2, 3))
    assert build_artifact(scaled(2.0), "scaled", tmp_path, cache).cached
    assert [p.name for p in cache.iterdir()] == [first.path.name]


def test_the_split_program_is_its_own_entry(tmp_path):
    """split_over="b" (the data-parallel program of several ranks) is
    compiled with b split over a worker dim, under its own key, and found
    the next time (GRPOProgramTrainer(comm=, cache=) reloads it)."""
    cache = tmp_path / "cache"
    whole = build_artifact(scaled(2.0), "scaled", tmp_path, cache)
    split = build_artifact(scaled(2.0), "scaled", tmp_path, cache, split_over="b")
    again = build_artifact(scaled(2.0), "scaled", tmp_path, cache, split_over="b")
    assert not split.cached and split.path != whole.path
    assert again.cached and again.path == split.path
    abi = pdg.runtime.load(split.path).manifest["abi"]
    assert abi["symbols"] == ["W", "B"]
    assert [x["domain"] for x in abi["inputs"]] == [["w", "b"]]
    # One rank's share, with the worker dim's extent of 1 in front.
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    y = pdg.runtime.load(split.path).run({"x": x}, {"B": 2}).outputs["y"]
    np.testing.assert_array_equal(y, 2.0 * x)
