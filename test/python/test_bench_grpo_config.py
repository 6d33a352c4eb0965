"""bench/grpo.py's model shapes: --config sets the model flags, a flag that
disagrees with it is refused, --vocab reaches the fresh processes, and the
model (and TRL's tokenizer) cover the larger vocabulary with the task's
ids inside it."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import grpo_common  # noqa: E402


def parse(argv: list[str]):
    parser = argparse.ArgumentParser(prog="grpo.py")
    grpo_common.add_setting_args(parser, prompts=32, d_model=32, heads=2, new_tokens=3)
    args = parser.parse_args(argv)
    grpo_common.resolve_setting_args(parser, args)
    return args


def test_config_sets_the_model_flags():
    args = parse(["--config", "gpt2-124m"])
    assert (args.vocab, args.d_model, args.layers, args.heads) == (50257, 768, 12, 12)
    args = parse(["--config", "small-bpe", "--layers", "4"])  # agrees: accepted
    assert (args.vocab, args.d_model, args.layers, args.heads) == (8192, 512, 4, 8)


def test_without_config_the_script_defaults_and_flags_hold():
    args = parse([])
    assert (args.vocab, args.d_model, args.layers, args.heads) == (None, 32, 2, 2)
    args = parse(["--d-model", "128", "--heads", "4", "--vocab", "64"])
    assert (args.vocab, args.d_model, args.layers, args.heads) == (64, 128, 2, 4)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--config", "gpt2-124m", "--d-model", "256"], "--d-model 256 conflicts with --config"),
        (["--config", "small-bpe", "--vocab", "50257"], "--vocab 50257 conflicts with --config"),
        (["--vocab", "5"], "--vocab 5 is smaller than the task's 13 tokens"),
        (["--d-model", "30", "--heads", "4"], "--d-model 30 is not a multiple of --heads 4"),
    ],
)
def test_bad_model_flags_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        parse(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_setting_flags_leave_an_unset_vocab_out():
    args = parse(["--d-model", "64", "--heads", "4"])
    flags = grpo_common.setting_flags(args, ("vocab", "d_model", "heads"))
    assert flags == ["--d-model", "64", "--heads", "4"]
    args = parse(["--vocab", "64", "--d-model", "64", "--heads", "4"])
    assert grpo_common.setting_flags(args, ("vocab",)) == ["--vocab", "64"]


def test_the_model_covers_the_larger_vocabulary():
    args = parse(["--vocab", "64", "--d-model", "16", "--heads", "2", "--prompts", "4"])
    task, config, weights, _ = grpo_common.setting(args)
    assert config.vocab == 64
    assert weights["wte.w"].shape == (64, 16)
    assert task.tokenizer.decode([1, 40, 2]) == "1?2"  # a filler id is never a digit


def test_trl_tokenizer_covers_the_larger_vocabulary():
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from impl_trl import char_tokenizer
    from pdg import rl

    task = rl.Addition(grpo_common.LIMIT)
    tok = char_tokenizer(task, 64)
    assert len(tok) == 64
    assert tok.decode([1, 2]) == "12"
    # a filler id keeps the completion from being a sum, as "?" does
    assert tok.decode([1, 40, 2]) == "1<40>2"
    assert task.reward("5+7=", tok.decode([1, 40, 2])) == 0.0
    assert tok("17+25=")["input_ids"] == task.tokenizer.encode("17+25=")


def test_the_driver_passes_the_vocabulary_to_its_runs(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "grpo.json"
    argv = ["--vocab", "64", "--d-model", "16", "--heads", "2", "--impls", "torch",
            "--prompts", "1", "--microbatch", "1", "--group", "2", "--new-tokens", "2",
            "--iterations", "3", "--out", str(out)]  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(BENCH / "grpo.py"), *argv], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "vocab 64, d_model 16" in done.stdout
    result = json.loads(out.read_text())
    assert result["config"]["vocab"] == 64
    assert result["runs"][0]["torch"]["ms_per_iteration"] > 0


def test_native_sets_a_code_setting_and_refuses_others(monkeypatch):
    """--native NAME=VALUE (an A/B of a compile choice) sets one of
    pdg.lowering.native's code settings, which the compile cache's key
    reads; another name, or a value of another type, is refused."""
    import grpo
    from pdg.lowering import native

    monkeypatch.setattr(native, "TRANSPOSE_TILE", native.TRANSPOSE_TILE)
    grpo.set_native("TRANSPOSE_TILE=0")
    assert native.TRANSPOSE_TILE == 0
    assert "TRANSPOSE_TILE=0" in native.code_settings()
    with pytest.raises(ValueError, match="'blas_library' is not one of"):
        grpo.set_native("blas_library=None")
    with pytest.raises(ValueError, match="TRANSPOSE_TILE is of type int, not str"):
        grpo.set_native("TRANSPOSE_TILE='16'")
    with pytest.raises(ValueError, match="is not a Python literal"):
        grpo.set_native("BLAS_TILES=four")


def test_a_bad_native_setting_is_a_usage_error():
    done = subprocess.run(
        [sys.executable, str(BENCH / "grpo.py"), "--native", "NOPE=1", "--compile-only"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--native NOPE=1: 'NOPE' is not one of pdg.lowering.native's settings" in done.stderr
