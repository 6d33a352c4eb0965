"""rl.GRPOTrainer, TRL's interface: a TRL GRPO script runs with only its
import line changed (on a tiny random Llama checkpoint made here with
transformers), writes TensorBoard events under TRL's metric names and
checkpoints transformers loads, and a run resumed from a checkpoint ends
bit for bit where the uninterrupted run ended. The config, the data order
and the reward functions' calling convention are checked on their own,
without compiling."""

from __future__ import annotations

import dataclasses
import json
import os
import runpy
import struct
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("datasets")
pytest.importorskip("tensorboardX")

from models import checkpoints  # noqa: E402
from pdg import models, rl  # noqa: E402
from pdg.rl.data import PromptData  # noqa: E402
from pdg.rl.rewards import RewardFunctions  # noqa: E402

# A GRPO script as written for TRL (its import line is the only change the
# test makes). The reward reads the dataset's `answer` column.
TRL_SCRIPT = """\
import sys

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

model_dir, output_dir = sys.argv[1], sys.argv[2]
resume = sys.argv[3] if len(sys.argv) > 3 else None

dataset = Dataset.from_list(
    [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(4) for b in range(3)]
)


def correct_answer(completions, answer, **kwargs):
    return [1.0 if c.strip().startswith(a) else 0.0 for c, a in zip(completions, answer)]


def brevity(completions, completion_ids, **kwargs):
    return [-0.1 * len(ids) for ids in completion_ids]


args = GRPOConfig(
    output_dir=output_dir,
    max_steps=3,
    per_device_train_batch_size=8,
    num_generations=4,
    max_completion_length=6,
    learning_rate=1e-3,
    beta=0.04,
    loss_type="grpo",
    reward_weights=[1.0, 0.5],
    logging_steps=1,
    save_steps=2,
    report_to="tensorboard",
    log_completions=True,
    seed=7,
)
trainer = GRPOTrainer(
    model=model_dir,
    reward_funcs=[correct_answer, brevity],
    args=args,
    train_dataset=dataset,
)
trainer.train(resume_from_checkpoint=resume)
"""

TRL_METRICS = (
    "loss",
    "reward",
    "reward_std",
    "rewards/correct_answer/mean",
    "rewards/brevity/mean",
    "kl",
    "entropy",
    "grad_norm",
    "completions/mean_length",
    "completions/clipped_ratio",
    "clip_ratio/region_mean",
    "learning_rate",
)


def pdg_script() -> str:
    script = TRL_SCRIPT.replace(
        "from trl import GRPOConfig, GRPOTrainer", "from pdg.rl import GRPOConfig, GRPOTrainer"
    )
    changed = [
        (a, b) for a, b in zip(TRL_SCRIPT.splitlines(), script.splitlines(), strict=True) if a != b
    ]
    assert len(changed) == 1, changed
    return script


def run_script(path: Path, *argv) -> dict:
    saved = sys.argv
    sys.argv = [str(path), *map(str, argv)]
    try:
        return runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv = saved


@contextmanager
def compiled_once(root: Path):
    """The artifact cache of these runs (they share one program): the
    user's $PDG_CACHE when set, else the tests' own."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PDG_CACHE", os.environ.get("PDG_CACHE") or str(root / "cache"))
        yield


@pytest.fixture(scope="module")
def trl_run(tmp_path_factory):
    """The script run straight through its 3 steps (checkpoints at 2 and 3)."""
    root = tmp_path_factory.mktemp("grpo-trainer")
    checkpoints.build("llama", root / "llama")
    script = root / "train_grpo.py"
    script.write_text(pdg_script())
    with compiled_once(root):
        run = run_script(script, root / "llama", root / "out")
    return root, script, run


def event_tags(directory: Path) -> dict[str, list[int]]:
    """tag -> the steps it was written at, from TensorBoard event files
    (TFRecord framing: length, its CRC, the Event proto, its CRC)."""
    from tensorboardX.proto import event_pb2

    tags: dict[str, list[int]] = {}
    files = sorted(directory.rglob("events.out.tfevents.*"))
    assert files, f"no event files under {directory}"
    for file in files:
        data = file.read_bytes()
        at = 0
        while at < len(data):
            (length,) = struct.unpack("<Q", data[at : at + 8])
            event = event_pb2.Event.FromString(data[at + 12 : at + 12 + length])
            at += 12 + length + 4
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(event.step)
    return tags


def test_trl_script_runs_with_only_the_import_changed(trl_run):
    root, _, run = trl_run
    out = root / "out"
    trainer = run["trainer"]
    assert trainer.global_step == 3
    tags = event_tags(out / "runs")
    for name in TRL_METRICS:
        assert tags.get(f"train/{name}") == [1, 2, 3], (name, sorted(tags))
    assert "train/completions/text_summary" in tags  # the table of samples
    lines = (out / "log.jsonl").read_text().splitlines()
    assert len(lines) == 3
    logged = [json.loads(line) for line in lines]
    vocab = trainer.model.config.vocab
    # The sampling distribution's entropy (the program's, checked against
    # PyTorch in test_grpo_program.py) and the gradients' norm before
    # clipping (max_grad_norm 1.0 by default).
    assert all(0 < m["entropy"] < np.log(vocab) for m in logged)
    assert all(m["grad_norm"] > 0 for m in logged)
    assert (out / "completions.jsonl").stat().st_size > 0


def test_checkpoints_load_in_transformers(trl_run):
    import torch
    import transformers

    root, _, run = trl_run
    trainer = run["trainer"]
    final = root / "out" / "checkpoint-3"
    assert (root / "out" / "checkpoint-2").is_dir()
    hf = transformers.AutoModelForCausalLM.from_pretrained(final, dtype=torch.float32)
    start = transformers.AutoModelForCausalLM.from_pretrained(root / "llama", dtype=torch.float32)
    trained = dict(hf.named_parameters())
    moved = [n for n, p in start.named_parameters() if not torch.equal(p, trained[n])]
    assert moved, "the checkpoint holds the starting weights"
    # transformers reads the very weights the trainer ended with.
    saved = models.load(final).weights
    for path, value in trainer.weights.items():
        np.testing.assert_array_equal(saved[path], value, err_msg=path)
    ids = torch.tensor([[0, 17, 30, 5]])
    assert torch.isfinite(hf(ids).logits).all()


def assert_same_checkpoint(got: Path, want: Path) -> None:
    """The same tensors, bit for bit, and metadata (safetensors writes the
    metadata's keys in no fixed order, so the files' bytes may differ)."""
    from safetensors import safe_open

    for name in ("model.safetensors", "trainer_state.safetensors"):
        with safe_open(got / name, "numpy") as a, safe_open(want / name, "numpy") as b:
            assert a.metadata() == b.metadata(), name
            assert sorted(a.keys()) == sorted(b.keys()), name
            for key in b.keys():
                x, y = a.get_tensor(key), b.get_tensor(key)
                assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), (name, key)


def test_resume_equals_straight_through(trl_run):
    """The straight run's second call writes the state the first returned
    in place (donated); the resumed run's call starts from the checkpoint's
    arrays, copied: the same bits."""
    root, script, run = trl_run
    assert run["trainer"].run_program.donatable_inputs
    with compiled_once(root):
        resumed = run_script(
            script, root / "llama", root / "resumed", root / "out" / "checkpoint-2"
        )
    assert resumed["trainer"].global_step == 3
    assert_same_checkpoint(root / "resumed" / "checkpoint-3", root / "out" / "checkpoint-3")
    # and the logged step 3 alike
    last = (root / "out" / "log.jsonl").read_text().splitlines()[-1]
    again = (root / "resumed" / "log.jsonl").read_text().splitlines()[-1]
    a, b = json.loads(last), json.loads(again)
    a.pop("step_seconds"), b.pop("step_seconds")
    assert a == b


def test_evaluation_logs_eval_metrics_and_changes_no_training(trl_run):
    """eval_dataset with eval_strategy="steps": at every eval_steps steps,
    TRL's metrics of the eval prompts' completions under "eval/<name>";
    the training ends bit for bit where the run without evaluation ended;
    the logged eval rewards are the reward functions' on the logged
    completions."""
    from datasets import Dataset

    root, script, run = trl_run
    namespace = run
    eval_rows = [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in (5, 6) for b in (1, 2)]
    args = dataclasses.replace(
        run["trainer"].args,
        output_dir=str(root / "with-eval"),
        eval_strategy="steps",
        eval_steps=2,
        per_device_eval_batch_size=8,
        log_completions=True,
    )
    with compiled_once(root):
        trainer = rl.GRPOTrainer(
            model=str(root / "llama"),
            reward_funcs=[namespace["correct_answer"], namespace["brevity"]],
            args=args,
            train_dataset=namespace["dataset"],
            eval_dataset=Dataset.from_list(eval_rows),
        )
        trainer.train()
        again = trainer.evaluate()
        assert again == trainer.evaluate()  # the same seed at every evaluation
    assert_same_checkpoint(root / "with-eval" / "checkpoint-3", root / "out" / "checkpoint-3")
    tags = event_tags(root / "with-eval" / "runs")
    for name in ("loss", "reward", "reward_std", "kl", "rewards/correct_answer/mean"):
        assert tags.get(f"eval/{name}") == [2], (name, sorted(tags))
    evaluation = next(
        json.loads(line)
        for line in (root / "with-eval" / "log.jsonl").read_text().splitlines()
        if "eval_reward" in line
    )
    assert evaluation["step"] == 2 and set(again) == {k for k in evaluation if k != "step"}
    samples = [
        json.loads(line)
        for line in (root / "with-eval" / "completions.jsonl").read_text().splitlines()
        if '"eval": true' in line
    ]
    assert len(samples) == len(eval_rows) * args.num_generations
    answers = {r["prompt"]: r["answer"] for r in eval_rows}
    correct = [
        1.0 if s["completion"].strip().startswith(answers[s["prompt"]]) else 0.0 for s in samples
    ]
    assert evaluation["eval_rewards/correct_answer/mean"] == pytest.approx(np.mean(correct))
    assert evaluation["eval_reward"] == pytest.approx(np.mean([s["reward"] for s in samples]))


# --- without compiling -------------------------------------------------------


def test_config_takes_trl_names_and_refuses_what_it_cannot_do():
    config = rl.GRPOConfig(per_device_train_batch_size=16, num_generations=4)
    assert config.prompts_per_step == 4
    assert (config.beta, config.epsilon, config.loss_type, config.seed) == (0.0, 0.2, "dapo", 42)
    bad = [
        dict(per_device_train_batch_size=6, num_generations=4),
        dict(loss_type="gspo"),
        dict(report_to="comet_ml"),
        dict(scale_rewards="std"),
        dict(lr_scheduler_type="cosine"),
        dict(eval_strategy="epoch"),
        dict(per_device_eval_batch_size=6, num_generations=4, per_device_train_batch_size=8),
        dict(num_generations=1, per_device_train_batch_size=1),
    ]
    for fields in bad:
        with pytest.raises(rl.TrainerConfigError) as e:
            rl.GRPOConfig(**fields)
        assert "GRPOConfig" in str(e.value)


def test_learning_rate_schedule_is_transformers():
    torch = pytest.importorskip("torch")
    import transformers

    for kind, warmup in (("linear", 0), ("linear", 3), ("constant_with_warmup", 2)):
        config = rl.GRPOConfig(
            learning_rate=0.5, lr_scheduler_type=kind, warmup_steps=warmup, max_steps=10
        )
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.5)
        sched = transformers.get_scheduler(kind, opt, warmup, 10)
        for step in range(10):
            assert config.learning_rate_at(step, 10) == pytest.approx(sched.get_last_lr()[0])
            opt.step()
            sched.step()


class Letters:
    """One token per character; 0 is EOS."""

    eos = 0

    def encode(self, text, add_special_tokens=True):
        return [ord(c) for c in text]

    def decode(self, ids):
        return "".join(chr(i) for i in ids if i)

    def apply_chat_template(self, messages, add_generation_prompt=False):
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"


def test_data_order_is_a_function_of_seed_and_step():
    rows = [{"prompt": f"p{k}", "answer": k} for k in range(10)]
    data = PromptData(rows, Letters(), shuffle=True, seed=3)
    first = [data.indices(s, 4) for s in range(5)]  # 20 prompts: two epochs
    assert first == [PromptData(rows, Letters(), True, 3).indices(s, 4) for s in range(5)]
    epoch = sum(first, [])[:10]
    assert sorted(epoch) == list(range(10)) and epoch != list(range(10))
    assert PromptData(rows, Letters(), shuffle=False, seed=3).indices(1, 4) == [4, 5, 6, 7]
    with pytest.raises(rl.TrainerConfigError, match="no 'prompt' column"):
        PromptData([{"question": "x"}], Letters(), True, 0)


def test_reward_functions_get_trl_arguments_and_combine_with_weights():
    rows = [
        {"prompt": [{"role": "user", "content": "1+1"}], "answer": "2"},
        {"prompt": [{"role": "user", "content": "2+2"}], "answer": "4"},
    ]
    tok = Letters()
    data = PromptData(rows, tok, shuffle=False, seed=0)
    assert tok.decode(data.ids[0]) == "<user>1+1<assistant>"
    seen = {}

    def exact(prompts, completions, completion_ids, answer, **kwargs):
        seen.update(prompts=prompts, completions=completions, ids=completion_ids, answer=answer)
        return [
            1.0 if c[0]["content"] == a else 0.0 for c, a in zip(completions, answer, strict=True)
        ]

    def only_first(completions, **kwargs):
        return [0.5, None, None]

    rewards = RewardFunctions([exact, only_first], [2.0, 1.0], data, tok, eos=[0])
    keys = rewards.plan([5], [[0, 1]])  # step 5 reads rows 0 and 1
    done = [[ord("2"), 0], [ord("3")], [ord("4"), 0]]
    total = rewards(keys[0] + [keys[0][1]], [data.ids[0]] * 3, done)
    assert total == [2.5, 0.0, 2.0]
    assert seen["answer"] == ["2", "4", "4"]
    assert seen["completions"][0] == [{"role": "assistant", "content": "2"}]
    assert seen["ids"] == [[50, 0], [51], [52, 0]]
    samples = rewards.take(5)
    assert [s.clipped for s in samples] == [False, True, False]
    assert np.isnan(samples[1].rewards[1])

    def wrong(completions, **kwargs):
        return [1.0]

    bad = RewardFunctions([wrong], None, data, tok, eos=[0])
    keys = bad.plan([0], [[0, 1]])
    with pytest.raises(rl.TrainerConfigError, match="'wrong' returned 1 values for 2"):
        bad(keys[0], [data.ids[0]] * 2, done[:2])


def test_pdg_train_runs_the_same_from_a_config_file(trl_run, capsys):
    """`pdg train CONFIG.yaml` with the script's model, rows, rewards and
    arguments ends with the script's checkpoint, byte for byte."""
    from pdg.cli.main import main

    root, _, run = trl_run
    work = root / "cli"
    work.mkdir()
    rows = [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(4) for b in range(3)]
    (work / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (work / "rewards.py").write_text(
        TRL_SCRIPT[TRL_SCRIPT.index("def correct_answer") : TRL_SCRIPT.index("args = ")]
    )
    args = {
        "output_dir": "out",
        "max_steps": 3,
        "per_device_train_batch_size": 8,
        "num_generations": 4,
        "max_completion_length": 6,
        "learning_rate": 1e-3,
        "beta": 0.04,
        "loss_type": "grpo",
        "reward_weights": [1.0, 0.5],
        "logging_steps": 1,
        "save_steps": 2,
        "report_to": "tensorboard",
        "log_completions": True,
        "seed": 7,
    }
    config = {
        "model": str(root / "llama"),
        "train_dataset": "rows.jsonl",
        "reward_funcs": ["rewards.py:correct_answer", "rewards.py:brevity"],
        "args": args,
    }
    (work / "train.yaml").write_text(json.dumps(config))  # JSON is YAML
    with compiled_once(root):
        assert main(["train", str(work / "train.yaml")]) == 0
    assert_same_checkpoint(work / "out" / "checkpoint-3", root / "out" / "checkpoint-3")
    capsys.readouterr()
    (work / "bad.yaml").write_text(json.dumps({**config, "args": {**args, "epochs": 2}}))
    assert main(["train", str(work / "bad.yaml")]) == 1
    err = capsys.readouterr().err
    assert "args: epochs is not a GRPOConfig field" in err and "Traceback" not in err
    no_eval = {**config, "args": {**args, "eval_strategy": "steps"}}
    (work / "no-eval.yaml").write_text(json.dumps(no_eval))
    assert main(["train", str(work / "no-eval.yaml")]) == 1
    err = capsys.readouterr().err
    assert "eval_strategy='steps' needs an eval_dataset" in err and "Traceback" not in err


# --- a streamed dataset ------------------------------------------------------


def streamed_script(width: int) -> str:
    """The script on the dataset as a datasets.IterableDataset, with the
    longest prompt it may hold given (pdg's option: a stream's prompts are
    not known when the program compiles); the same width as the script's
    makes the same program, so the runs load it from the cache."""
    script = pdg_script()
    for old, new in (
        ("train_dataset=dataset,", "train_dataset=dataset.to_iterable_dataset(num_shards=3),"),
        ("    seed=7,\n", f"    seed=7,\n    pdg_prompt_width={width},\n"),
    ):
        assert old in script
        script = script.replace(old, new)
    return script


def test_a_streamed_dataset_trains_and_resumes_bit_for_bit(trl_run):
    root, _, run = trl_run
    script = root / "train_streamed.py"
    script.write_text(streamed_script(run["trainer"].data.prompt_width))
    with compiled_once(root):
        straight = run_script(script, root / "llama", root / "streamed")
        resumed = run_script(
            script, root / "llama", root / "streamed-resumed", root / "streamed" / "checkpoint-2"
        )
    assert straight["trainer"].data.streamed
    assert straight["trainer"].global_step == resumed["trainer"].global_step == 3
    assert_same_checkpoint(
        root / "streamed-resumed" / "checkpoint-3", root / "streamed" / "checkpoint-3"
    )
    a = json.loads((root / "streamed" / "log.jsonl").read_text().splitlines()[-1])
    b = json.loads((root / "streamed-resumed" / "log.jsonl").read_text().splitlines()[-1])
    a.pop("step_seconds"), b.pop("step_seconds")
    assert a == b


def test_a_streamed_dataset_needs_max_steps(trl_run):
    from datasets import Dataset

    root, _, _ = trl_run
    stream = Dataset.from_list([{"prompt": "1+2="}] * 4).to_iterable_dataset()
    with pytest.raises(rl.TrainerConfigError, match="set max_steps"):
        rl.GRPOTrainer(
            model=str(root / "llama"),
            reward_funcs=[lambda completions, **kw: [0.0] * len(completions)],
            args=rl.GRPOConfig(
                output_dir=str(root / "unused"), num_generations=4, max_completion_length=6
            ),
            train_dataset=stream,
        )


def test_a_stream_is_read_in_a_seeded_buffer_shuffle_and_epochs():
    """RowStream: the dataset's buffer shuffle with the seed, epoch e after
    set_epoch(e) (a new shuffle), the epochs end to end; reading step k
    anew (a resumed run) gives what reading up to it gave."""
    from datasets import Dataset
    from pdg.rl.rows import RowStream

    rows = [{"prompt": f"p{k}"} for k in range(10)]
    dataset = Dataset.from_list(rows).to_iterable_dataset(num_shards=2)
    seen = []
    stream = RowStream(dataset, True, 5, seen.append)
    assert len(seen) == 1 and seen[0] in rows  # check_first saw one row
    steps = stream.read(range(5), 4)  # 20 rows: two epochs
    texts = [[stream.rows[k]["prompt"] for k in step] for step in steps]
    flat = sum(texts, [])
    first, second = flat[:10], flat[10:]
    assert sorted(first) == sorted(r["prompt"] for r in rows) == sorted(second)
    assert first != [r["prompt"] for r in rows] and first != second
    shuffled = dataset.shuffle(seed=5)
    assert first == [r["prompt"] for r in shuffled]  # the dataset's own shuffle
    assert [stream.epoch_at(s, 4) for s in range(5)] == [0.0, 0.0, 1.0, 1.0, 1.0]
    again = RowStream(dataset, True, 5, lambda row: None)
    (step3,) = again.read([3], 4)
    assert [again.rows[k]["prompt"] for k in step3] == texts[3]
    plain = RowStream(dataset, False, 5, lambda row: None)
    (step0,) = plain.read([0], 4)
    assert [plain.rows[k]["prompt"] for k in step0] == ["p0", "p1", "p2", "p3"]
    kept = RowStream(dataset, False, 5, lambda row: None, keep=lambda k, r: r["prompt"] != "p1")
    (step0,) = kept.read([0], 3)
    assert [kept.rows[k]["prompt"] for k in step0] == ["p0", "p2", "p3"]
