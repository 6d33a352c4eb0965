"""`pdg memory` and CompiledProgram.plan: the planned peak store by store.
The placements add up to the manifest's peak, returned outputs have no
bytes of their own, and mistakes are one line with exit code 1."""

from __future__ import annotations

import json

from pdg.cli.main import main
from pdg.lowering.artifact import compile_module
from pdg.runtime import load
from pdg.runtime.formula import evaluate, from_json

from .test_returned_slots import ITERS, fit_program


def artifact(tmp_path):
    prog, _, _ = fit_program()
    out = tmp_path / "fit.pdgx"
    compile_module(prog.build(), out, gpu=False)
    return out


def test_the_placements_add_up_to_the_planned_peak(tmp_path):
    out = artifact(tmp_path)
    plan = load(out).plan({"I": ITERS})
    manifest = json.loads((out / "manifest.json").read_text())
    assert plan.peak == evaluate(from_json(manifest["memory"]["peak"]), {"I": ITERS})
    assert sum(plan.by_placement().values()) == plan.peak
    returned = [s for s in plan.stores if s.placed == "returned"]
    assert len(returned) == 6 and all(s.bytes == 0 for s in returned)
    inputs = sum(s.bytes for s in plan.stores if s.placed == "input")
    # w (6), m (2 x 3), their four moments, a (I x 4 x 6), y (I x 4) in
    # float64, and the step Adam starts at (8 bytes).
    assert inputs == 8 * (3 * 6 + 3 * 6 + ITERS * 4 * 6 + ITERS * 4) + 8
    # What the block's stores would take apart (this plan's are small:
    # 64-byte alignment makes the block larger than that sum).
    in_block = [s.bytes for s in plan.stores if s.placed == "block"]
    assert in_block and plan.block_apart == sum(in_block) and plan.block > 0
    assert [s.bytes for s in plan.stores] == sorted((s.bytes for s in plan.stores), reverse=True)


def test_the_command_lists_the_largest_stores(tmp_path, capsys):
    out = artifact(tmp_path)
    assert main(["memory", str(out), "--symbols", f"I={ITERS}", "--top", "3"]) == 0
    text = capsys.readouterr().out
    plan = load(out).plan({"I": ITERS})
    assert f"at I={ITERS}: {plan.peak / 2**20:.1f} MiB" in text
    assert "6 outputs returned as the slot they copy" in text
    rows = [line for line in text.splitlines() if " x [" in line]
    assert len(rows) == 3 and plan.stores[0].value in rows[0]


def test_mistakes_are_one_line(tmp_path, capsys):
    out = artifact(tmp_path)
    assert main(["memory", str(out)]) == 1
    assert "missing a value for launch symbol I" in capsys.readouterr().err
    assert main(["memory", str(out), "--symbols", "I=2", "--symbols", "J=1"]) == 1
    assert "unknown symbol J" in capsys.readouterr().err
    assert main(["memory", str(tmp_path / "none.pdgx"), "--symbols", "I=2"]) == 1
    err = capsys.readouterr().err
    assert "not a pdg artifact" in err and len(err.strip().splitlines()) == 1
