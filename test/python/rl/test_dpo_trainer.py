"""rl.DPOTrainer, TRL's interface: a TRL DPO script runs with only its
import line changed (on a tiny random Llama checkpoint made here), logs
TRL's metrics, lowers the loss on a tiny preference set, and a run
resumed from a checkpoint ends bit for bit where the uninterrupted run
ended; one float64 step equals TRL's sigmoid DPO computed in PyTorch
(transformers' model, TRL's tokenization of chat pairs) on the same
weights. Tokenization, truncation and the config are checked on their
own, without compiling."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("datasets")
pytest.importorskip("tensorboardX")

from models import checkpoints  # noqa: E402
from pdg import rl  # noqa: E402
from pdg.rl.preference_data import PreferenceData  # noqa: E402

from .test_grpo_trainer import (  # noqa: E402
    Letters,
    assert_same_checkpoint,
    compiled_once,
    event_tags,
    run_script,
)

TRL_SCRIPT = """\
import sys

from datasets import Dataset
from trl import DPOConfig, DPOTrainer

model_dir, output_dir = sys.argv[1], sys.argv[2]
resume = sys.argv[3] if len(sys.argv) > 3 else None

# The sum is preferred to a near miss.
dataset = Dataset.from_list(
    [
        {"prompt": f"{a}+{b}=", "chosen": str(a + b), "rejected": str(a + b + 1)}
        for a in range(4)
        for b in range(3)
    ]
)
args = DPOConfig(
    output_dir=output_dir,
    max_steps=6,
    per_device_train_batch_size=4,
    learning_rate=3e-3,
    beta=0.1,
    max_length=32,
    logging_steps=1,
    save_steps=3,
    report_to="tensorboard",
    seed=7,
)
trainer = DPOTrainer(model=model_dir, args=args, train_dataset=dataset)
trainer.train(resume_from_checkpoint=resume)
"""

TRL_METRICS = (
    "loss",
    "grad_norm",
    "learning_rate",
    "rewards/chosen",
    "rewards/rejected",
    "rewards/accuracies",
    "rewards/margins",
    "logps/chosen",
    "logps/rejected",
)


def pdg_script() -> str:
    script = TRL_SCRIPT.replace(
        "from trl import DPOConfig, DPOTrainer", "from pdg.rl import DPOConfig, DPOTrainer"
    )
    changed = [
        (a, b) for a, b in zip(TRL_SCRIPT.splitlines(), script.splitlines(), strict=True) if a != b
    ]
    assert len(changed) == 1, changed
    return script


@pytest.fixture(scope="module")
def trl_run(tmp_path_factory):
    """The script run straight through its 6 steps (checkpoints at 3 and 6)."""
    root = tmp_path_factory.mktemp("dpo-trainer")
    checkpoints.build("llama", root / "llama")
    script = root / "train_dpo.py"
    script.write_text(pdg_script())
    with compiled_once(root):
        run = run_script(script, root / "llama", root / "out")
    return root, script, run


def test_trl_script_runs_with_only_the_import_changed(trl_run):
    root, _, run = trl_run
    out = root / "out"
    assert run["trainer"].global_step == 6
    tags = event_tags(out / "runs")
    for name in TRL_METRICS:
        assert tags.get(f"train/{name}") == [1, 2, 3, 4, 5, 6], (name, sorted(tags))
    logged = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert len(logged) == 6
    # The policy starts as the reference: every pair's loss is log 2.
    assert logged[0]["loss"] == pytest.approx(np.log(2), abs=1e-6)
    assert logged[0]["rewards/margins"] == pytest.approx(0, abs=1e-6)
    # and the preferred answers become likelier than the near misses.
    assert np.mean([m["loss"] for m in logged[3:]]) < logged[0]["loss"] - 0.02
    assert logged[-1]["rewards/margins"] > 0 and logged[-1]["rewards/accuracies"] > 0.5
    for m in logged:
        assert m["rewards/margins"] == pytest.approx(
            m["rewards/chosen"] - m["rewards/rejected"], abs=1e-6
        )
        assert m["grad_norm"] > 0
    assert (out / "checkpoint-3").is_dir() and (out / "checkpoint-6").is_dir()


def test_resume_equals_straight_through(trl_run):
    root, script, _ = trl_run
    with compiled_once(root):
        resumed = run_script(
            script, root / "llama", root / "resumed", root / "out" / "checkpoint-3"
        )
    assert resumed["trainer"].global_step == 6
    assert_same_checkpoint(root / "resumed" / "checkpoint-6", root / "out" / "checkpoint-6")
    a = json.loads((root / "out" / "log.jsonl").read_text().splitlines()[-1])
    b = json.loads((root / "resumed" / "log.jsonl").read_text().splitlines()[-1])
    a.pop("step_seconds"), b.pop("step_seconds")
    assert a == b


CHAT_PAIRS = [
    {
        "prompt": [{"role": "user", "content": f"{a} plus {b}"}],
        "chosen": [{"role": "assistant", "content": f"it is {a + b}"}],
        "rejected": [{"role": "assistant", "content": f"maybe {a * b + 7} or so"}],
    }
    for a, b in ((1, 2), (3, 4), (2, 2))
]


def torch_dpo_step(policy_dir, ref_dir, pairs, beta: float):
    """TRL's sigmoid DPO on `pairs` (chat messages) in float64, from its
    definition: TRL's tokenization (the chat template with the generation
    prompt for the prompt, without for prompt + completion, the completion
    the tokens after the prompt's), the completion tokens' summed
    log-probs under transformers' model and the reference, the loss
    -logsigmoid(beta * delta) averaged over the pairs, TRL's metrics and
    the gradient's global norm."""
    import torch
    import torch.nn.functional as F
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(policy_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(policy_dir, dtype=torch.float64)
    ref = transformers.AutoModelForCausalLM.from_pretrained(ref_dir, dtype=torch.float64)

    def ids(messages, generation_prompt):
        out = tok.apply_chat_template(
            messages, tokenize=True, add_generation_prompt=generation_prompt, return_dict=True
        )
        return list(out["input_ids"])

    def summed_logps(net, prompt, completion):
        seq = torch.tensor([prompt + completion])
        logits = net(seq).logits[0, :-1]
        logps = torch.log_softmax(logits, -1).gather(1, seq[0, 1:, None])[:, 0]
        return logps[len(prompt) - 1 :].sum()

    chosen, rejected, ref_chosen, ref_rejected = [], [], [], []
    for pair in pairs:
        prompt = ids(pair["prompt"], True)
        for kind, mine, theirs in (
            ("chosen", chosen, ref_chosen),
            ("rejected", rejected, ref_rejected),
        ):
            completion = ids(pair["prompt"] + pair[kind], False)[len(prompt) :]
            mine.append(summed_logps(model, prompt, completion))
            with torch.no_grad():
                theirs.append(summed_logps(ref, prompt, completion))
    chosen, rejected = torch.stack(chosen), torch.stack(rejected)
    ref_chosen, ref_rejected = torch.stack(ref_chosen), torch.stack(ref_rejected)
    delta = (chosen - ref_chosen) - (rejected - ref_rejected)
    loss = -F.logsigmoid(beta * delta).mean()
    loss.backward()
    norm = torch.sqrt(sum((p.grad**2).sum() for p in model.parameters() if p.grad is not None))
    c = beta * (chosen - ref_chosen).detach()
    r = beta * (rejected - ref_rejected).detach()
    metrics = {
        "loss": float(loss.detach()),
        "grad_norm": float(norm),
        "rewards/chosen": float(c.mean()),
        "rewards/rejected": float(r.mean()),
        "rewards/accuracies": float((c > r).double().mean()),
        "rewards/margins": float((c - r).mean()),
        "logps/chosen": float(chosen.detach().mean()),
        "logps/rejected": float(rejected.detach().mean()),
    }
    return metrics


def test_a_float64_step_is_trls_sigmoid_dpo(trl_run, tmp_path):
    """One step on chat pairs, with a reference of other weights (so the
    margins are not 0), equals TRL's DPO in PyTorch: the loss, each metric
    and the gradient norm, within 1e-5 (transformers' float32 RoPE angles)."""
    from datasets import Dataset

    root, _, _ = trl_run
    reference = tmp_path / "reference"
    checkpoints.build("llama", reference, seed=3)
    args = rl.DPOConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=len(CHAT_PAIRS),
        beta=0.5,
        report_to="none",
        disable_tqdm=True,
        pdg_dtype="f64",
    )
    with compiled_once(root):
        trainer = rl.DPOTrainer(
            model=str(root / "llama"),
            ref_model=str(reference),
            args=args,
            train_dataset=Dataset.from_list(CHAT_PAIRS),
        )
        trainer.train()
    got = json.loads((tmp_path / "out" / "log.jsonl").read_text())
    want = torch_dpo_step(root / "llama", reference, CHAT_PAIRS, beta=0.5)
    assert 0 < want["rewards/accuracies"] < 1 or abs(want["rewards/margins"]) > 1e-3
    # transformers computes RoPE's angles in float32 even in a float64
    # model: the log-probs agree to ~1e-8 (relative), not to float64's 1e-15.
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-5, abs=1e-5), name


# --- without compiling -------------------------------------------------------


def hf_tokenizer(tmp_path):
    import transformers

    checkpoints.train_tokenizer(tmp_path / "tok")
    return transformers.AutoTokenizer.from_pretrained(tmp_path / "tok")


def test_text_pairs_are_tokenized_as_trl_tokenizes_them(tmp_path):
    """TRL: the prompt with the special tokens; prompt + completion + the
    EOS text; the completion the tokens after the prompt's."""
    from pdg.models.tokenizer import Tokenizer

    hf = hf_tokenizer(tmp_path)
    ours = Tokenizer(tmp_path / "tok")
    rows = [
        {"prompt": "The compiler reads", "chosen": " the whole program", "rejected": " a loop"},
        {"prompt": "Tokens flow", "chosen": " from the prompt</s>", "rejected": " away"},
    ]
    data = PreferenceData(rows, ours, ours.eos, rl.DPOConfig(shuffle_dataset=False), 128)
    for k, row in enumerate(rows):
        prompt = hf(text=row["prompt"])["input_ids"]
        want = [prompt]
        for c in ("chosen", "rejected"):
            text = row[c] if row[c].endswith(hf.eos_token) else row[c] + hf.eos_token
            want.append(hf(text=row["prompt"] + text)["input_ids"][len(prompt) :])
        assert [list(x) for x in data.pairs[k]] == want


def test_truncation_and_the_sequences():
    rows = [
        {"prompt": "abcdef", "chosen": "xy", "rejected": "zzzz"},
        {"prompt": "abcdefghij", "chosen": "q", "rejected": "r"},
    ]
    letters = [ord(c) for c in "abcdefghij"]
    # max_length keeps prompt + completion's first 8 tokens; the second
    # prompt alone fills them: TRL drops the pair.
    data = PreferenceData(rows, Letters(), 0, rl.DPOConfig(max_length=8, seed=1), 64)
    assert data.size == 1
    assert data.pairs[0] == (letters[:6], [ord("x"), ord("y")], [ord("z")] * 2)
    # max_prompt_length keeps the prompt's last tokens first.
    args = rl.DPOConfig(max_length=8, max_prompt_length=5, shuffle_dataset=False)
    data = PreferenceData(rows, Letters(), 0, args, 64)
    assert data.size == 2
    prompt, chosen, rejected = data.pairs[0]
    assert prompt == letters[1:6]
    assert chosen == [ord("x"), ord("y"), 0]  # EOS added
    assert rejected == [ord("z")] * 3  # cut at 8 tokens
    assert data.pairs[1] == (letters[5:10], [ord("q"), 0], [ord("r"), 0])
    seqs = data.sequences([[0, 1]], np.float64)
    assert data.positions == 7 and seqs["tokens"].shape == (2, 1, 2, 7)
    mask = seqs["mask"][0, 0]
    assert [int(t) for t in seqs["targets"][0, 0, 0][mask[0] > 0]] == chosen
    assert [int(t) for t in seqs["targets"][0, 0, 1][mask[1] > 0]] == rejected
    assert [int(t) for t in seqs["tokens"][0, 0, 0][:7]] == prompt + chosen[:2]


def test_bad_datasets_and_options_are_refused():
    with pytest.raises(rl.TrainerConfigError, match="no 'chosen', 'rejected' column"):
        PreferenceData([{"prompt": "a"}], Letters(), 0, rl.DPOConfig(), 64)
    mixed = [{"prompt": "a", "chosen": [{"role": "assistant", "content": "b"}], "rejected": "c"}]
    with pytest.raises(rl.TrainerConfigError, match="'chosen' is a list"):
        PreferenceData(mixed, Letters(), 0, rl.DPOConfig(), 64)
    long = [{"prompt": "a" * 10, "chosen": "b" * 10, "rejected": "c"}]
    with pytest.raises(rl.TrainerConfigError, match="set DPOConfig's max_length"):
        PreferenceData(long, Letters(), 0, rl.DPOConfig(), 8)
    config = rl.DPOConfig(loss_type="ipo", label_smoothing=0.1)
    assert (config.learning_rate, config.beta, config.loss) == (1e-6, 0.1, "ipo")
    bad = [
        dict(loss_type="exo_pair"),
        dict(loss_type=["sigmoid", "sft"]),
        dict(beta=0.0),
        dict(label_smoothing=0.5),
        dict(f_divergence_type="js_divergence"),
        dict(precompute_ref_log_probs=True),
        dict(max_length=1),
    ]
    for fields in bad:
        with pytest.raises(rl.TrainerConfigError) as e:
            rl.DPOConfig(**fields)
        assert "DPOConfig" in str(e.value)
    with pytest.raises(TypeError, match="rpo_alpha"):
        rl.DPOConfig(rpo_alpha=0.5)  # a TRL option pdg does not have: named


def test_a_streamed_dataset_trains_and_resumes_bit_for_bit(trl_run):
    """The script on a datasets.IterableDataset: max_length (the compiled
    sequences' length, as a stream's pairs are not known when it compiles)
    set to the materialized run's longest pair gives the same program,
    loaded from the cache."""
    root, _, run = trl_run
    length = run["trainer"].data.positions + 1
    script = pdg_script()
    for old, new in (
        ("train_dataset=dataset)", "train_dataset=dataset.to_iterable_dataset(num_shards=2))"),
        ("max_length=32,", f"max_length={length},"),
    ):
        assert old in script
        script = script.replace(old, new)
    path = root / "train_streamed.py"
    path.write_text(script)
    with compiled_once(root):
        straight = run_script(path, root / "llama", root / "streamed")
        resumed = run_script(
            path, root / "llama", root / "streamed-resumed", root / "streamed" / "checkpoint-3"
        )
    assert straight["trainer"].data.streamed and straight["trainer"].data.positions == length - 1
    assert resumed["trainer"].global_step == 6
    assert_same_checkpoint(
        root / "streamed-resumed" / "checkpoint-6", root / "streamed" / "checkpoint-6"
    )
    logged = [json.loads(x) for x in (root / "streamed" / "log.jsonl").read_text().splitlines()]
    assert logged[0]["loss"] == pytest.approx(np.log(2), abs=1e-6)
