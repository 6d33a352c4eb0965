"""`pdg run --interpret`: summaries, saved outputs, and errors without tracebacks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from pdg.cli.main import main

from .helpers import program


def _dynamic_inputs(tmp_path):
    path = tmp_path / "in.npz"
    np.savez(path, start=np.array([0, 5], np.int64), limit=np.array([7, 5], np.int64))
    return path


def test_run_prints_summary_and_saves_ragged_outputs(tmp_path, capsys):
    out = tmp_path / "out.npz"
    rc = main(
        [
            "run",
            "--interpret",
            str(program("dynamic")),
            "--symbols",
            "B=2",
            "--inputs",
            str(_dynamic_inputs(tmp_path)),
            "--out",
            str(out),
        ]
    )
    stdout = capsys.readouterr().out
    assert rc == 0
    assert "output c: ragged, 2 groups of shapes [[4], [1]], int64, checksum" in stdout
    assert "output total: shape [2], int64, checksum" in stdout
    assert "bound T = [4, 1]" in stdout
    with np.load(out) as saved:
        assert sorted(saved.files) == sorted(["c/0", "c/1", "done/0", "done/1", "total", "last"])
        np.testing.assert_array_equal(saved["c/0"], [0, 3, 6, 9])
        np.testing.assert_array_equal(saved["total"], [18, 5])


def test_run_with_udfs_from_a_file(tmp_path, capsys):
    udfs = tmp_path / "my_udfs.py"
    udfs.write_text("UDFS = {'score': lambda prefix: prefix.sum()}\n")
    inputs = tmp_path / "x.npz"
    np.savez(inputs, x=np.ones((2, 5, 2), np.float32))
    rc = main(
        [
            "run",
            "--interpret",
            str(program("udf")),
            "--symbols",
            "B=2",
            "--inputs",
            str(inputs),
            "--udfs",
            f"{udfs}:UDFS",
        ]
    )
    assert rc == 0
    assert "output score: shape [2, 5], float32" in capsys.readouterr().out


def test_errors_are_one_message_and_exit_1(tmp_path, capsys):
    inputs = str(_dynamic_inputs(tmp_path))
    cases = [
        (["run", str(program("dynamic")), "--symbols", "B=2"], "add --interpret"),
        (["run", "--interpret", str(program("dynamic")), "--inputs", inputs], "launch symbol B"),
        (
            ["run", "--interpret", str(program("dynamic")), "--symbols", "B=x"],
            "'x' is not an integer",
        ),
        (["run", "--interpret", "nowhere.mlir"], "cannot read program file"),
        (
            ["run", "--interpret", str(program("dynamic")), "--symbols", "B=9", "--inputs", inputs],
            "B = 9 is out of range",
        ),
        (["run", "--interpret", str(program("udf")), "--udfs", "nomodule_xyz:U"], "--udfs"),
    ]
    for argv, message in cases:
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.startswith("pdg: error:") and message in err, (argv, err)
        assert "Traceback" not in err


def test_installed_script(tmp_path):
    script = [sys.executable, "-m", "pdg.cli.main"]
    ok = subprocess.run(
        script
        + ["run", "--interpret", str(program("dynamic")), "--symbols", "B=2", "--inputs"]
        + [str(_dynamic_inputs(tmp_path))],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and "bound T = [4, 1]" in ok.stdout
    bad = subprocess.run(
        script + ["run", "--interpret", str(program("dynamic"))], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and "pdg: error:" in bad.stderr
