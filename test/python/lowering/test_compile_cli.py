"""`pdg compile` then `pdg run` on the artifact: phase times printed, the
same summary (checksums included) as `pdg run --interpret`, and user
mistakes as one line on stderr with exit code 1."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO_ROOT
from pdg.cli.main import main

PROGRAM = REPO_ROOT / "test" / "Conversion" / "pdg-lower-to-loops.mlir"


@pytest.mark.usefixtures("no_compile_cache")  # prints the phases of a real compile
def test_01_compile_then_run_matches_the_interpreter(tmp_path, capsys):
    artifact = tmp_path / "loops.pdgx"
    assert main(["compile", str(PROGRAM), "-o", str(artifact)]) == 0
    out = capsys.readouterr().out
    assert "lower to loops" in out and "native code" in out
    assert f"compiled {PROGRAM} -> {artifact} in" in out
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x0=np.array([0.0, 9.5, -20.0], np.float32))
    args = ["--symbols", "B=3", "--inputs", str(inputs)]
    assert main(["run", str(artifact), *args]) == 0
    compiled = capsys.readouterr().out
    assert main(["run", "--interpret", str(PROGRAM), *args]) == 0
    interpreted = capsys.readouterr().out
    summary, peak = compiled.rstrip("\n").rsplit("\n", 1)
    assert summary + "\n" == interpreted
    assert "bound T = [8, 2, 21]" in summary
    assert peak.startswith("peak memory ") and peak.endswith(" MiB)")


def test_01b_vectorized_compile_matches_too(tmp_path, capsys):
    artifact = tmp_path / "loops.pdgx"
    assert main(["compile", str(PROGRAM), "--vectorize", "-o", str(artifact)]) == 0
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x0=np.array([0.0, 9.5, -20.0], np.float32))
    args = ["--symbols", "B=3", "--inputs", str(inputs)]
    capsys.readouterr()
    assert main(["run", str(artifact), *args]) == 0
    compiled = capsys.readouterr().out
    assert main(["run", "--interpret", str(PROGRAM), *args]) == 0
    assert compiled.rstrip("\n").rsplit("\n", 1)[0] + "\n" == capsys.readouterr().out


def test_02_compile_a_python_program(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_text(
        "import pdg.frontend as pdg\n"
        "program = pdg.Program('double')\n"
        "x = program.input('x', (3,), 'f32')\n"
        "program.output('y', x + x)\n"
    )
    artifact = tmp_path / "double.pdgx"
    assert main(["compile", str(script), "-o", str(artifact)]) == 0
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.array([1, 2, 3], np.float32))
    out = tmp_path / "out.npz"
    capsys.readouterr()
    assert main(["run", str(artifact), "--inputs", str(inputs), "--out", str(out)]) == 0
    with np.load(out) as saved:
        np.testing.assert_array_equal(saved["y"], [2, 4, 6])


def test_03_mistakes_are_one_line(tmp_path, capsys):
    script = tmp_path / "noprog.py"
    script.write_text("x = 1\n")
    cases = [
        (["compile", str(script), "-o", str(tmp_path / "a")], "must define `program`"),
        (["compile", str(tmp_path / "nope.mlir"), "-o", str(tmp_path / "a")], "cannot read"),
        (["run", str(PROGRAM)], "is not an artifact directory (add --interpret"),
        (["run", str(tmp_path)], "is not a pdg artifact"),
    ]
    for args, message in cases:
        assert main(args) == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


def not_an_npz(tmp_path, kind: str):
    good = tmp_path / "good.npz"
    np.savez(good, x0=np.zeros(3, np.float32))
    path = tmp_path / f"{kind}.npz"
    if kind == "npy":
        path = tmp_path / "x0.npy"
        np.save(path, np.zeros(3, np.float32))
    elif kind == "cut":
        path.write_bytes(good.read_bytes()[:-30])
    elif kind == "garbled":
        data = bytearray(good.read_bytes())
        data[40:80] = bytes(40)
        path.write_bytes(bytes(data))
    else:
        path.write_bytes(b"")
    return path


@pytest.mark.parametrize(
    "kind, message",
    [
        ("npy", "holds one unnamed array (.npy)"),
        ("cut", "cannot read --inputs"),
        ("garbled", "cannot read --inputs"),
        ("empty", "the file is empty or cut short"),
    ],
)
def test_04_inputs_that_are_not_an_npz_are_one_line(tmp_path, capsys, kind, message):
    """A .npy, a damaged .npz or an empty file given as --inputs is the
    user's mistake: one line with what to give instead, exit code 1."""
    path = not_an_npz(tmp_path, kind)
    args = ["run", "--interpret", str(PROGRAM), "--symbols", "B=3", "--inputs", str(path)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert message in err and "numpy.savez" in err, err
    assert "internal error" not in err and len(err.strip().splitlines()) == 1, err


def test_05_a_script_that_exits_early_is_reported(tmp_path, capsys):
    """sys.exit() in a program script is reported, not passed through as
    pdg's own exit code with no message."""
    script = tmp_path / "exits.py"
    script.write_text("import sys\nsys.exit(3)\n")
    assert main(["compile", str(script), "-o", str(tmp_path / "a.pdgx")]) == 1
    err = capsys.readouterr().err
    assert f"{script} exited early (sys.exit(3)) before defining `program`" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "a.pdgx").exists()


def test_06_viz_into_a_missing_directory_is_one_line(tmp_path, capsys):
    out = tmp_path / "missing_dir" / "g.svg"
    assert main(["viz", str(PROGRAM), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"pdg: error: cannot write {out.with_suffix('.dot')}: No such file or directory "
        f"(create {out.parent} first)\n"
    )
