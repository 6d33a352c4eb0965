"""`pdg compile` then `pdg run` on the artifact: phase times printed, the
same summary (checksums included) as `pdg run --interpret`, and user
mistakes as one line on stderr with exit code 1."""

from __future__ import annotations

import numpy as np
from conftest import REPO_ROOT
from pdg.cli.main import main

PROGRAM = REPO_ROOT / "test" / "Passes" / "pdg-lower-to-loops.mlir"


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
