"""GRPOTrainer(peft_config=LoraConfig(...)): LoRA through TRL's interface.

On a tiny random Llama checkpoint: only the adapters train (the trainer
reports PEFT's parameter count), checkpoints hold the merged model that
transformers loads (the projections without adapters bit for bit the
starting ones), a resumed run ends bit for bit where the straight one
ended, and a checkpoint is not resumed under another LoRA setup. PEFT's
target names resolve to pdg's projections, and options pdg does not
implement are refused, without compiling."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("datasets")

from models import checkpoints  # noqa: E402
from pdg import models, rl  # noqa: E402
from pdg.models.lora import lora_spec, resolve_targets  # noqa: E402
from pdg.nn.lora import merge  # noqa: E402

from .test_grpo_trainer import assert_same_checkpoint, compiled_once  # noqa: E402

TARGETS = ["q_proj", "v_proj", "down_proj"]


def correct_answer(completions, answer, **kwargs):
    pairs = zip(completions, answer, strict=True)
    return [1.0 if c.strip().startswith(a) else 0.0 for c, a in pairs]


def parity(completions, completion_ids, **kwargs):
    """A reward that varies at random weights, so that advantages are not 0."""
    return [float(ids[0] % 2) for ids in completion_ids]


def trainer(model_dir, output_dir, steps=3, **lora):
    from datasets import Dataset

    dataset = Dataset.from_list(
        [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(4) for b in range(3)]
    )
    args = rl.GRPOConfig(
        output_dir=str(output_dir),
        max_steps=steps,
        per_device_train_batch_size=8,
        num_generations=4,
        max_completion_length=5,
        learning_rate=2e-2,
        beta=0.04,
        logging_steps=1,
        save_steps=2,
        seed=3,
        disable_tqdm=True,
    )
    config = rl.LoraConfig(
        r=lora.get("r", 4), lora_alpha=8, target_modules=lora.get("targets", TARGETS)
    )
    return rl.GRPOTrainer(
        model=str(model_dir),
        reward_funcs=[correct_answer, parity],
        args=args,
        train_dataset=dataset,
        peft_config=config,
    )


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory):
    """The run straight through its 3 steps (checkpoints at 2 and 3), and
    what it printed on stderr."""
    root = tmp_path_factory.mktemp("lora-trainer")
    checkpoints.build("llama", root / "llama")
    printed = io.StringIO()
    with compiled_once(root), contextlib.redirect_stderr(printed):
        t = trainer(root / "llama", root / "out")
        t.train()
    return root, t, printed.getvalue()


def test_only_the_adapters_train_and_the_export_is_merged(lora_run, capsys):
    import torch
    import transformers

    root, t, _ = lora_run
    assert set(t.program.training.params) == set(t.lora.adapter_paths())
    start = models.load(root / "llama").weights
    final = root / "out" / "checkpoint-3"
    saved = models.load(final).weights
    adapted = {f"{p}.w" for p in t.lora.targets}
    assert {p.rsplit(".", 1)[0].split(".", 1)[1] for p in adapted} == {
        "attn.q",
        "attn.v",
        "mlp.down",
    }
    for path, value in start.items():
        if path in adapted:
            assert not np.array_equal(saved[path], value), path  # the adapters moved it
        else:
            np.testing.assert_array_equal(saved[path], value, err_msg=path)
    merged = merge(t.lora, t.weights)
    for path in adapted:
        np.testing.assert_array_equal(saved[path], merged[path], err_msg=path)
    hf = transformers.AutoModelForCausalLM.from_pretrained(final, dtype=torch.float32)
    assert torch.isfinite(hf(torch.tensor([[0, 17, 30, 5]])).logits).all()
    t.save_model(root / "exported")
    exported = models.load(root / "exported").weights
    for path in adapted:
        np.testing.assert_array_equal(exported[path], merged[path], err_msg=path)


def test_peft_loads_the_adapters_onto_the_base_model(lora_run):
    """checkpoint-N/adapter and save_model()'s adapter/ are PEFT's format:
    peft puts them on the starting model, whose logits are then the merged
    checkpoint's (float32, 1e-5)."""
    peft = pytest.importorskip("peft")
    import torch
    import transformers

    root, t, _ = lora_run
    ids = torch.tensor([[0, 17, 30, 5, 9, 2]])
    merged = transformers.AutoModelForCausalLM.from_pretrained(
        root / "out" / "checkpoint-3", dtype=torch.float32
    )
    want = merged(ids).logits
    config = json.loads(
        (root / "out" / "checkpoint-3" / "adapter" / "adapter_config.json").read_text()
    )
    assert config["base_model_name_or_path"] == str((root / "llama").resolve())
    exported = t.save_model(root / "exported-for-peft")
    for adapter in (root / "out" / "checkpoint-3" / "adapter", exported / "adapter"):
        base = transformers.AutoModelForCausalLM.from_pretrained(
            root / "llama", dtype=torch.float32
        )
        model = peft.PeftModel.from_pretrained(base, adapter)
        adapted = {n for n, _ in model.named_modules() if n.endswith("lora_A")}
        assert len(adapted) == len(t.lora.targets)
        with torch.no_grad():
            assert (model(ids).logits - want).abs().max().item() <= 1e-5
            with model.disable_adapter():  # and without them, the starting model
                assert (model(ids).logits - want).abs().max().item() > 1e-4


def test_trainable_parameter_count_is_reported(lora_run):
    _, t, printed = lora_run
    line = next(x for x in printed.splitlines() if "trainable params" in x)
    c = t.model.config
    kv = (c.n_kv_heads or c.n_heads) * c.attention_head_dim
    per_layer = c.d_model + c.n_heads * c.attention_head_dim  # q_proj: d -> heads * head_dim
    per_layer += c.d_model + kv  # v_proj: d -> kv heads * head_dim
    per_layer += c.mlp_hidden + c.d_model  # down_proj: hidden -> d
    count = 4 * c.n_layers * per_layer  # rank 4
    total = sum(int(v.size) for v in models.load(t.model.source.directory).weights.values())
    assert f"trainable params: {count:,} || all params: {total + count:,} ||" in line


def test_resume_equals_straight_through_and_needs_the_same_lora(lora_run):
    root, _, _ = lora_run
    with compiled_once(root):
        resumed = trainer(root / "llama", root / "resumed")
        resumed.train(resume_from_checkpoint=str(root / "out" / "checkpoint-2"))
        assert_same_checkpoint(root / "resumed" / "checkpoint-3", root / "out" / "checkpoint-3")
    # Another LoRA setup is refused before anything runs (the setup
    # changed on a built trainer: a second program would only cost a compile).
    other = copy.copy(resumed)
    other.lora = dataclasses.replace(resumed.lora, rank=2)
    with pytest.raises(rl.TrainerConfigError, match="saved with LoRA rank=4"):
        other.train(resume_from_checkpoint=str(root / "out" / "checkpoint-2"))


def test_pdg_train_takes_peft_config(lora_run, capsys):
    """`pdg train` with a peft_config mapping ends with the script's LoRA
    checkpoint, bit for bit; a field LoraConfig lacks is one line, exit 1."""
    import inspect

    from pdg.cli.main import main

    root, t, _ = lora_run
    work = root / "cli"
    work.mkdir()
    rows = [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(4) for b in range(3)]
    (work / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (work / "rewards.py").write_text(inspect.getsource(correct_answer) + inspect.getsource(parity))
    a = t.args
    args = {
        "output_dir": "out",
        "max_steps": a.max_steps,
        "per_device_train_batch_size": a.per_device_train_batch_size,
        "num_generations": a.num_generations,
        "max_completion_length": a.max_completion_length,
        "learning_rate": a.learning_rate,
        "beta": a.beta,
        "logging_steps": 1,
        "save_steps": a.save_steps,
        "seed": a.seed,
        "disable_tqdm": True,
    }
    config = {
        "model": str(root / "llama"),
        "train_dataset": "rows.jsonl",
        "reward_funcs": ["rewards.py:correct_answer", "rewards.py:parity"],
        "args": args,
        "peft_config": {"r": 4, "lora_alpha": 8, "target_modules": TARGETS},
    }
    (work / "train.yaml").write_text(json.dumps(config))  # JSON is YAML
    with compiled_once(root):
        assert main(["train", str(work / "train.yaml")]) == 0
    assert_same_checkpoint(work / "out" / "checkpoint-3", root / "out" / "checkpoint-3")
    capsys.readouterr()
    bad = {**config, "peft_config": {"rank": 4}}
    (work / "bad.yaml").write_text(json.dumps(bad))
    assert main(["train", str(work / "bad.yaml")]) == 1
    err = capsys.readouterr().err
    assert "peft_config: rank is not a LoraConfig field" in err and "Traceback" not in err


# --- without compiling -------------------------------------------------------


@pytest.mark.parametrize(
    "layout, targets, want",
    [
        ("llama", None, ["h0.attn.q", "h0.attn.v", "h1.attn.q", "h1.attn.v"]),
        ("llama", ["self_attn.o_proj", "h1.mlp.up"], ["h0.attn.o", "h1.attn.o", "h1.mlp.up"]),
        ("llama", r"model\.layers\.1\..*_proj", None),  # every projection of layer 1
        ("gpt2", ["c_attn"], ["h0.attn.q", "h0.attn.k", "h0.attn.v", "h1.attn.q"]),
        ("gpt2", ["c_proj"], ["h0.attn.o", "h0.mlp.proj", "h1.attn.o", "h1.mlp.proj"]),
    ],
)
def test_peft_target_names_resolve_to_projections(layout, targets, want):
    from pdg.nn import DecoderConfig

    llama = layout == "llama"
    config = DecoderConfig(
        vocab=40,
        d_model=16,
        n_layers=2,
        n_heads=2,
        positions="rotary" if llama else "learned",
        norm="rmsnorm" if llama else "layernorm",
        gated_mlp=llama,
        activation="silu" if llama else "gelu_tanh",
        qkv_bias=not llama,
        o_bias=not llama,
        mlp_bias=not llama,
    )
    got = list(resolve_targets(targets, config, layout))
    if want is None:
        assert got == [f"h1.{p}" for p in ("attn.q", "attn.k", "attn.v", "attn.o")] + [
            f"h1.mlp.{p}" for p in ("gate", "up", "down")
        ]
    elif layout == "gpt2" and targets == ["c_attn"]:
        assert got[:4] == want and len(got) == 6
    else:
        assert got == want
    everything = resolve_targets("all-linear", config, layout)
    assert len(everything) == 2 * (7 if llama else 6)


def test_unsupported_lora_options_are_refused():
    from pdg.nn import DecoderConfig

    config = DecoderConfig(vocab=40, d_model=16, n_layers=1, n_heads=2)
    refused = [
        (dict(lora_dropout=0.05), "lora_dropout=0.05 is not supported"),
        (dict(bias="all"), "bias='all' is not supported"),
        (dict(target_modules=["qkv_proj"]), "'qkv_proj' is not a projection"),
        (dict(target_modules="lm_head"), "matches no projection"),
        (dict(r=0), "rank must be a positive integer"),
    ]
    for fields, message in refused:
        with pytest.raises(models.ModelError, match=message):
            lora_spec(rl.LoraConfig(**fields), config, "gpt2")
