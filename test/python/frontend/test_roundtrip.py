"""Programs built by the frontend verify and round-trip through pdg-opt
(custom and generic forms), with node locations at the user's lines."""

from __future__ import annotations

import subprocess
import sys

import pytest
from decode_programs import small_decode
from pdg.nn import GPTConfig
from pdg.programs import build_decode

PDG_OPT = [sys.executable, "-m", "pdg.cli.opt"]


def opt(text: str, *args: str) -> str:
    r = subprocess.run([*PDG_OPT, *args], input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("pattern", ["full", "window:4", "block:4"])
def test_01_decode_program_round_trips_through_pdg_opt(pattern):
    module = small_decode(pattern).program.build()
    printed = str(module)
    assert opt(printed) == printed
    generic = opt(printed, "--mlir-print-op-generic")
    assert opt(generic) == printed


def test_02_nodes_carry_the_users_source_lines():
    cfg = GPTConfig(vocab=32, d_model=16, n_layers=1, n_heads=2, max_positions=8)
    decode = build_decode(cfg, eos=0, max_len=8)  # BUILD
    module = decode.program.build()
    text = module.operation.get_asm(enable_debug_info=True)
    line = next(n for n, s in enumerate(open(__file__), 1) if s.rstrip().endswith("# BUILD"))
    # Library code (pdg.nn, pdg.programs) is skipped: every node points at
    # the line of user code that created it.
    assert f'loc("{__file__}":{line}:1)' in text
    assert "/pdg/nn/" not in text and "/pdg/programs/" not in text
