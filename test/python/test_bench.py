"""The decode benchmark stays runnable: a small grid with pdg and PyTorch
(JAX is a bench-only dependency) through `pdg bench decode`; pdg's tokens
equal PyTorch's and the results are written."""

from __future__ import annotations

import json

import pytest
from pdg.cli.main import main

pytest.importorskip("torch")


def test_01_small_decode_benchmark(tmp_path, capfd):
    args = [
        "--lengths",
        "24",
        "40",
        "--attention",
        "window",
        "--impls",
        "pdg",
        "torch",
        "--d-model",
        "32",
        "--heads",
        "2",
        "--vocab",
        "64",
        "--window",
        "8",
        "--out",
        str(tmp_path),
    ]
    assert main(["bench", "decode", *args]) == 0
    out = capfd.readouterr().out
    assert "[met] window T=24: tokens identical to PyTorch's" in out
    assert "[met] window T=40: tokens identical to PyTorch's" in out
    rows = [json.loads(line) for line in (tmp_path / "decode.jsonl").read_text().splitlines()]
    pdg_rows = [r for r in rows if r["config"]["impl"] == "pdg"]
    assert len(pdg_rows) == 2 and all(r["ms_per_token"] > 0 for r in pdg_rows)
    assert all(r["tokens"] == r["config"]["length"] for r in pdg_rows)
