"""Input that is not UTF-8 is a user error located at its first bad byte
(file:line:col, with the byte and its offset), exit code 1, for every
command that reads IR: pdg-opt (file and stdin), pdg compile, pdg viz and
pdg run --interpret. It was an "internal error ... please report it"."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pdg.ir import ParseFailure
from pdg.ir.source import decode_source

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"
# Latin-1 `é` (0xe9) in a comment on line 2, column 24 (byte offset 38).
LATIN1 = "pdg.graph @g {\n  pdg.dim @t < 4 // caf\xe9\n}\n".encode("latin-1")
WHERE = "2:24: error: the input is not UTF-8 text: byte 0xe9 at byte offset 38"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    exe = BIN / args[0]
    if not exe.exists():
        pytest.skip(f"{exe} is not installed")
    return subprocess.run([str(exe), *args[1:]], input=stdin, capture_output=True, timeout=120)


def user_error(r: subprocess.CompletedProcess, location: str) -> None:
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert f"{location}:{WHERE}" in err, err
    assert "hint:" in err
    assert "internal error" not in err and "Traceback" not in err


def test_01_decode_source_locates_the_first_bad_byte():
    with pytest.raises(ParseFailure) as e:
        decode_source(LATIN1, "f.mlir")
    [d] = e.value.diagnostics
    assert d.location == "f.mlir:2:24"
    assert "byte 0xe9 at byte offset 38 (invalid continuation byte)" in d.message
    assert decode_source("caf\xe9".encode(), "ok.mlir") == "caf\xe9"


def test_02_pdg_opt_file_and_stdin(tmp_path):
    path = tmp_path / "latin1.mlir"
    path.write_bytes(LATIN1)
    user_error(run("pdg-opt", str(path)), str(path))
    user_error(run("pdg-opt", stdin=LATIN1), "<stdin>")
    user_error(run("pdg-opt", "-", "--canonicalize", stdin=LATIN1), "<stdin>")


def test_03_pdg_compile_viz_and_interpret(tmp_path):
    path = tmp_path / "latin1.mlir"
    path.write_bytes(LATIN1)
    user_error(run("pdg", "compile", str(path), "-o", str(tmp_path / "x.pdgx")), str(path))
    assert not (tmp_path / "x.pdgx").exists()
    user_error(run("pdg", "viz", str(path), "-o", str(tmp_path / "x.svg")), str(path))
    user_error(run("pdg", "run", "--interpret", str(path)), str(path))
