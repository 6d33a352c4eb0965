"""Where `pdg compile -o OUT` (compile_module) writes: nothing that pdg did
not make is ever replaced (".", "", a directory of files, a file, a link,
an artifact holding other files), an artifact is replaced in one step (a
failed or interrupted compile keeps the old one), and a killed compile's
scratch is removed by the next compile into the same directory."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pdg.runtime
import pytest
from leftovers import dead_pid, leftover
from pdg import __version__, atomic_files
from pdg.cli.main import main
from pdg.lowering import artifact
from pdg.runtime.manifest import read_manifest


def scaled_script(directory, factor: float):
    script = directory / f"times{factor:g}.py"
    script.write_text(
        "import pdg.frontend as pdg\n"
        "program = pdg.Program('scaled')\n"
        "x = program.input('x', (3,), 'f32')\n"
        f"program.output('y', x * {factor})\n"
    )
    return script


def compile_script(script, out) -> int:
    return main(["compile", str(script), "--no-gpu", "-o", str(out)])


def output_of(path):
    """y for x = [1, 2, 3], run from a copy of the artifact: a process that
    loaded a library keeps getting it from dlopen for the same path, even
    after the file was replaced."""
    read_manifest(path, __version__)  # every part as compiled
    copy = Path(tempfile.mkdtemp()) / "copy.pdgx"
    shutil.copytree(path, copy)
    try:
        y = pdg.runtime.load(copy).run({"x": np.array([1, 2, 3], np.float32)}).outputs["y"]
    finally:
        shutil.rmtree(copy.parent)
    return y.tolist()


def snapshot(directory) -> list:
    """Every path under `directory` with its kind, target or bytes."""
    found = []
    for p in sorted(directory.rglob("*")):
        if p.is_symlink():
            found.append((str(p), "link", os.readlink(p)))
        elif p.is_file():
            found.append((str(p), "file", p.read_bytes()))
        else:
            found.append((str(p), "dir", None))
    return found


def one_line_error(err: str, message: str) -> None:
    assert message in err, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("target", [".", ""])
def test_the_current_directory_is_refused_and_kept(tmp_path, monkeypatch, capsys, target):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "notes.txt").write_text("mine")
    (work / "sub" / "data.bin").write_bytes(b"\0\1")
    script = scaled_script(work, 2)
    before = snapshot(work)
    monkeypatch.chdir(work)
    assert compile_script(script.name, target) == 1
    one_line_error(capsys.readouterr().err, "names an existing directory ('', '.' or '..')")
    assert snapshot(work) == before


def test_a_directory_of_other_files_is_refused_and_kept(tmp_path, capsys):
    out = tmp_path / "results"
    out.mkdir()
    (out / "run1.csv").write_text("1,2\n")
    (out / "manifest.json").write_text('{"name": "a web app"}')  # not a pdg manifest
    script = scaled_script(tmp_path, 2)
    before = snapshot(tmp_path)
    assert compile_script(script, out) == 1
    one_line_error(capsys.readouterr().err, "is a directory that is not a pdg artifact")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("kind", ["file", "link to an artifact", "dangling link"])
def test_a_file_or_a_link_is_refused_and_kept(tmp_path, capsys, kind):
    script = scaled_script(tmp_path, 2)
    out = tmp_path / "out.pdgx"
    if kind == "file":
        out.write_text("my notes")
        message = "is a file, not a pdg artifact"
    else:
        real = tmp_path / "real.pdgx"
        if kind == "link to an artifact":
            assert compile_script(script, real) == 0
        out.symlink_to(real)
        message = "is a symbolic link"
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert compile_script(script, out) == 1
    one_line_error(capsys.readouterr().err, message)
    assert snapshot(tmp_path) == before


def test_an_artifact_holding_other_files_is_refused_and_kept(tmp_path, capsys):
    out = tmp_path / "out.pdgx"
    assert compile_script(scaled_script(tmp_path, 2), out) == 0
    (out / "my_results.npz").write_bytes(b"precious")
    script = scaled_script(tmp_path, 3)
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert compile_script(script, out) == 1
    one_line_error(capsys.readouterr().err, "also holds other files (my_results.npz)")
    assert snapshot(tmp_path) == before


def test_a_path_under_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert compile_script(scaled_script(tmp_path, 2), tmp_path / "file" / "out.pdgx") == 1
    one_line_error(capsys.readouterr().err, "is not a directory")


def test_an_empty_directory_or_new_nested_path_takes_the_artifact(tmp_path):
    script = scaled_script(tmp_path, 2)
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "empty", tmp_path / "new" / "deeper" / "a.pdgx"):
        assert compile_script(script, out) == 0
        assert output_of(out) == [2, 4, 6]


def test_recompiling_replaces_the_artifact_and_leaves_nothing_beside(tmp_path):
    out = tmp_path / "art" / "out.pdgx"
    assert compile_script(scaled_script(tmp_path, 2), out) == 0
    assert output_of(out) == [2, 4, 6]
    assert compile_script(scaled_script(tmp_path, 3), out) == 0
    assert output_of(out) == [3, 6, 9]
    assert [p.name for p in out.parent.iterdir()] == ["out.pdgx"]


@pytest.mark.usefixtures("no_compile_cache")  # build_library replaced
@pytest.mark.parametrize("failure", [artifact.CompileError("the native build failed"), OSError])
def test_a_compile_that_fails_while_writing_keeps_the_old_artifact(
    tmp_path, monkeypatch, capsys, failure
):
    out = tmp_path / "out.pdgx"
    assert compile_script(scaled_script(tmp_path, 2), out) == 0
    script = scaled_script(tmp_path, 3)
    before = snapshot(tmp_path)
    real = artifact.build_library

    def fails_late(module, library, support):
        real(module, library, support)
        raise failure

    monkeypatch.setattr(artifact, "build_library", fails_late)
    capsys.readouterr()
    assert compile_script(script, out) == 1
    assert snapshot(tmp_path) == before  # nothing half-written beside it either
    read_manifest(out, __version__)
    assert output_of(out) == [2, 4, 6]


@pytest.mark.usefixtures("no_compile_cache")  # build_library replaced
def test_ctrl_c_while_writing_keeps_the_old_artifact(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out.pdgx"
    assert compile_script(scaled_script(tmp_path, 2), out) == 0
    script = scaled_script(tmp_path, 3)
    before = snapshot(tmp_path)

    def interrupted(module, library, support):
        library.write_bytes(b"half a library")
        raise KeyboardInterrupt

    monkeypatch.setattr(artifact, "build_library", interrupted)
    capsys.readouterr()
    assert compile_script(script, out) == 130
    assert capsys.readouterr().err.strip() == "pdg: interrupted"  # after a blank line
    assert snapshot(tmp_path) == before
    assert output_of(out) == [2, 4, 6]


def test_a_dead_compiles_scratch_is_removed_by_the_next_compile(tmp_path):
    out = tmp_path / "out.pdgx"
    dead = leftover(tmp_path, "out.pdgx", "scratch", dead_pid())
    live = leftover(tmp_path, "out.pdgx", "scratch", os.getppid())
    assert compile_script(scaled_script(tmp_path, 2), out) == 0
    assert not dead.exists() and live.exists()
    shutil.rmtree(live)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.pdgx", "times2.py"]


def test_without_an_exchange_the_artifact_is_still_replaced(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic_files, "_EXCHANGE", None)
    out = tmp_path / "out.pdgx"
    assert compile_script(scaled_script(tmp_path, 2), out) == 0
    assert compile_script(scaled_script(tmp_path, 3), out) == 0
    assert output_of(out) == [3, 6, 9]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.pdgx", "times2.py", "times3.py"]
