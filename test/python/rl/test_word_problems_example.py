"""examples/word_problems.py end to end at a tiny budget: it generates the
problems, trains a BPE tokenizer, writes a Llama-shaped model directory,
warms it up with pdg's train_lm program, runs pdg.rl.GRPOTrainer and
prints held-out accuracy before and after; every model directory it
writes loads in transformers with its tokenizer."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("datasets")
pytest.importorskip("tensorboardX")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "word_problems.py"
ACCURACY = re.compile(
    r"held-out accuracy: SFT (\d\.\d{3}) -> GRPO (\d\.\d{3}) \(([-+]\d\.\d{3})\) on (\d+) problems"
)
TINY = [
    "--steps", "2",
    "--sft-steps", "3",
    "--train-size", "64",
    "--eval-size", "8",
    "--d-model", "32",
    "--layers", "1",
    "--heads", "2",
    "--prompts", "2",
    "--generations", "2",
    "--seed", "5",
]  # fmt: skip


def load_example():
    spec = importlib.util.spec_from_file_location("word_problems_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The example's output directory and what it printed."""
    root = tmp_path_factory.mktemp("word-problems")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PDG_CACHE", os.environ.get("PDG_CACHE") or str(root / "cache"))
        env.setenv("HF_HUB_OFFLINE", "1")
        out = root / "out"
        import contextlib
        import io

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            load_example().main([*TINY, "--output-dir", str(out)])
    return out, printed.getvalue()


def test_prints_held_out_accuracy_before_and_after(run):
    _, printed = run
    [(before, after, gain, count)] = ACCURACY.findall(printed)
    assert int(count) == 8
    assert 0.0 <= float(before) <= 1.0 and 0.0 <= float(after) <= 1.0
    assert float(gain) == pytest.approx(float(after) - float(before), abs=1.5e-3)
    assert re.search(r"held-out accuracy after SFT: (\d\.\d{3})", printed).group(1) == before
    assert re.search(r"SFT: 3 steps in .* loss \d+\.\d+ -> \d+\.\d+", printed)


def test_the_tokenizer_is_byte_level_bpe_with_digits_split(run):
    out, _ = run
    spec = json.loads((out / "final" / "tokenizer.json").read_text())
    assert spec["model"]["type"] == "BPE" and spec["model"]["merges"]
    tok = transformers.AutoTokenizer.from_pretrained(out / "final")
    ids = tok("Ann has 125 apples.")["input_ids"]
    assert tok.convert_ids_to_tokens(ids)[-5:] == ["1", "2", "5", "Ġapples", "."]
    assert tok.decode(ids) == "Ann has 125 apples."
    assert tok.eos_token == "<|endoftext|>"
    assert 100 < tok.vocab_size <= 1000


@pytest.mark.parametrize("name", ["init", "sft", "final"])
def test_every_model_directory_loads_in_transformers(run, name):
    out, _ = run
    model = transformers.AutoModelForCausalLM.from_pretrained(out / name, dtype=torch.float32)
    assert type(model).__name__ == "LlamaForCausalLM"
    config = model.config
    assert (config.hidden_size, config.num_hidden_layers, config.hidden_act) == (32, 1, "silu")
    assert not config.tie_word_embeddings
    generation = transformers.GenerationConfig.from_pretrained(out / name)
    tok = transformers.AutoTokenizer.from_pretrained(out / name)
    assert generation.eos_token_id == tok.eos_token_id
    with torch.no_grad():
        logits = model(torch.tensor([tok("Question: Ann has 3 apples.")["input_ids"]])).logits
    assert logits.shape[-1] == config.vocab_size and torch.isfinite(logits).all()


def test_training_changed_the_weights_at_each_stage(run):
    from pdg import models

    out, _ = run
    init, sft, final = (models.load(out / n).weights for n in ("init", "sft", "final"))
    assert init.keys() == sft.keys() == final.keys()
    assert any(not np.array_equal(init[k], sft[k]) for k in init)
    # GRPO's log of its steps, with the reward of each.
    rows = [json.loads(line) for line in (out / "grpo" / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "reward" in r][-1] == 2
    # GRPO moves the weights exactly where it had a gradient. This tiny model
    # answers no problem, so every reward is 0, the advantages are 0, and
    # the KL's gradient at the reference (the SFT weights) is 0 but for the
    # last bits of rounding; Adam with a zero gradient leaves the weights.
    moved = any(not np.array_equal(sft[k], final[k]) for k in sft)
    assert moved == any(r["grad_norm"] > 0 for r in rows if "grad_norm" in r)


def test_a_used_output_directory_is_refused(tmp_path, capsys):
    (tmp_path / "old.txt").write_text("keep me")
    with pytest.raises(SystemExit) as stop:
        load_example().main([*TINY, "--output-dir", str(tmp_path)])
    assert stop.value.code == 2
    assert "is not empty; give a new directory" in capsys.readouterr().err
    assert (tmp_path / "old.txt").read_text() == "keep me"


def test_a_limit_the_task_refuses_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as stop:
        load_example().main([*TINY, "--limit", "3", "--output-dir", str(out)])
    assert (
        stop.value.code == "word_problems.py: error: limit must be an integer of at least 4, got 3"
    )
    assert not out.exists()
