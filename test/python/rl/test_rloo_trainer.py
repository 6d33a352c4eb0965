"""rl.RLOOTrainer, TRL's interface: a TRL RLOO script runs with only its
import line changed and logs TRL's RLOO metrics. The algorithm itself
(the leave-one-out advantages, the KL penalty in the reward, the loss on
the summed log-probs) is checked against PyTorch in test_grpo_program.py
(test_rloo_matches_trl_rloo_in_pytorch)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("datasets")
pytest.importorskip("tensorboardX")

from models import checkpoints  # noqa: E402
from pdg import rl  # noqa: E402

from .test_grpo_trainer import compiled_once, event_tags, run_script  # noqa: E402

TRL_SCRIPT = """\
import sys

from datasets import Dataset
from trl import RLOOConfig, RLOOTrainer

model_dir, output_dir = sys.argv[1], sys.argv[2]

dataset = Dataset.from_list(
    [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(4) for b in range(3)]
)


def correct_answer(completions, answer, **kwargs):
    return [1.0 if c.strip().startswith(a) else 0.0 for c, a in zip(completions, answer)]


def first_token_parity(completion_ids, **kwargs):  # varies at random weights
    return [float(ids[0] % 2) for ids in completion_ids]


args = RLOOConfig(
    output_dir=output_dir,
    max_steps=2,
    per_device_train_batch_size=8,
    num_generations=4,
    max_completion_length=6,
    learning_rate=1e-3,
    beta=0.05,
    logging_steps=1,
    report_to="tensorboard",
    seed=3,
)
trainer = RLOOTrainer(
    model=model_dir,
    reward_funcs=[correct_answer, first_token_parity],
    args=args,
    train_dataset=dataset,
)
trainer.train()
"""

TRL_METRICS = (
    "loss",
    "grad_norm",
    "reward",
    "reward_std",
    "rewards/correct_answer/mean",
    "kl",
    "entropy",
    "completions/mean_length",
    "clip_ratio/region_mean",
    "learning_rate",
)


def test_trl_script_runs_with_only_the_import_changed(tmp_path):
    script = TRL_SCRIPT.replace(
        "from trl import RLOOConfig, RLOOTrainer", "from pdg.rl import RLOOConfig, RLOOTrainer"
    )
    assert (
        sum(a != b for a, b in zip(TRL_SCRIPT.splitlines(), script.splitlines(), strict=True)) == 1
    )
    checkpoints.build("llama", tmp_path / "llama")
    (tmp_path / "train_rloo.py").write_text(script)
    with compiled_once(tmp_path):
        run = run_script(tmp_path / "train_rloo.py", tmp_path / "llama", tmp_path / "out")
    trainer = run["trainer"]
    assert trainer.global_step == 2
    tags = event_tags(tmp_path / "out" / "runs")
    for name in TRL_METRICS:
        assert tags.get(f"train/{name}") == [1, 2], (name, sorted(tags))
    logged = [
        json.loads(line) for line in (tmp_path / "out" / "log.jsonl").read_text().splitlines()
    ]
    for m in logged:
        # The leave-one-out advantages of a group sum to 0, and the ratio to
        # the sampling policy is 1: TRL's RLOO loss is 0 (its gradient is not).
        assert abs(m["loss"]) < 1e-6 and m["grad_norm"] > 0
        assert 0 < m["entropy"] < np.log(trainer.model.config.vocab)
        assert "frac_reward_zero_std" not in m  # TRL's is of the KL-shaped rewards
    assert (tmp_path / "out" / "checkpoint-2").is_dir()


def test_config_has_trls_rloo_defaults_and_refuses_the_rest():
    config = rl.RLOOConfig()
    assert (config.num_generations, config.beta, config.learning_rate) == (2, 0.05, 1e-6)
    for fields in (dict(loss_type="grpo"), dict(normalize_advantages=True)):
        with pytest.raises(rl.TrainerConfigError) as e:
            rl.RLOOConfig(**fields)
        assert "RLOOConfig" in str(e.value)
    with pytest.raises(rl.TrainerConfigError, match="must be an RLOOConfig"):
        rl.RLOOTrainer(model="unused", reward_funcs=[len], args=rl.GRPOConfig())
