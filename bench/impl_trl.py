"""The GRPO benchmark's iteration with Hugging Face TRL's GRPOTrainer on the
CPU: the task, model shape, initial weights and GRPO constants of
bench/grpo.py, a transformers GPT-2 holding our weights, and a character
tokenizer over the same ids. One training step of the trainer (sample,
score, reference log-probs, loss, backward, optimizer) is one iteration.

    python bench/grpo.py --impl trl --prompts 32 --group 8

prints the result as one JSON line. Generation is
TRL's _generate (tokenize, model.generate, decode) plus the rewards; the
reference is its reference model's log-prob pass; update is the rest.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
import time

import numpy as np
from grpo_common import peak_mib, setting, torch_logits

# a GPT-2 block's parameters (besides the fused c_attn) by our names: (module, weight's name)
BLOCK_NAMES = {
    "ln_1": ("ln1", "g"),
    "ln_2": ("ln2", "g"),
    "attn.c_proj": ("attn.o", "w"),
    "mlp.c_fc": ("mlp.fc", "w"),
    "mlp.c_proj": ("mlp.proj", "w"),
}


def char_tokenizer(task, vocab_size: int):
    """A fast tokenizer with one token per character, the ids of the task's
    CharTokenizer, and its EOS (id 12) as the end and padding token. A
    model vocabulary larger than the task's (--config) gets a filler token
    "<id>" for each further id: a completion holding one decodes to text
    that is never a sum, as CharTokenizer's "?" is not."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = task.tokenizer.chars
    vocab = {c: i for i, c in enumerate(chars)} | {"<eos>": task.tokenizer.eos}
    vocab |= {f"<{i}>": i for i in range(task.tokenizer.vocab, vocab_size)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<eos>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()  # characters back to back, no spaces
    return PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<eos>", pad_token="<eos>", padding_side="left"
    )


def gpt2_from(task, shape, weights):
    """A GPT2LMHeadModel of the benchmark's shape holding our weights."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    eos = task.tokenizer.eos
    config = GPT2Config(
        vocab_size=shape.vocab,
        n_positions=shape.max_positions,
        n_embd=shape.d_model,
        n_layer=shape.n_layers,
        n_head=shape.n_heads,
        activation_function="gelu_new",
        layer_norm_epsilon=1e-5,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        tie_word_embeddings=True,
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=eos,
    )
    model = GPT2LMHeadModel(config)
    names = {"wte.weight": "wte.w", "wpe.weight": "wpe.w"}
    names |= {"ln_f.weight": "ln_f.g", "ln_f.bias": "ln_f.b"}
    for i in range(shape.n_layers):
        for theirs, (mine, w) in BLOCK_NAMES.items():
            names[f"h.{i}.{theirs}.weight"] = f"h{i}.{mine}.{w}"
            names[f"h.{i}.{theirs}.bias"] = f"h{i}.{mine}.b"
    sd = {f"transformer.{theirs}": weights[mine] for theirs, mine in names.items()}
    # Conv1D keeps (in, out) weights as ours do: q, k, v side by side
    for i in range(shape.n_layers):
        at = f"transformer.h.{i}.attn.c_attn."
        sd[at + "weight"] = np.concatenate([weights[f"h{i}.attn.{n}.w"] for n in "qkv"], axis=1)
        sd[at + "bias"] = np.concatenate([weights[f"h{i}.attn.{n}.b"] for n in "qkv"])
    state = {k: torch.tensor(np.asarray(v, np.float32)) for k, v in sd.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or set(missing) - {"lm_head.weight"}:
        raise RuntimeError(f"weight mapping: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    model.eval()
    _check_same_model(model, shape, weights)
    return model


def _check_same_model(model, shape, weights) -> None:
    """GPT-2's logits with our weights equal bench/grpo.py's PyTorch model's
    on random ids: the same model is timed. Compared in float64, so that a
    deep model's float32 rounding (1e-2 in the logits at gpt2-124m's 12
    layers) is not taken for a wrong mapping."""
    import copy

    import torch

    ids = torch.tensor(np.random.default_rng(1).integers(0, shape.vocab, (3, shape.max_positions)))
    valid = torch.ones_like(ids, dtype=torch.bool)
    exact = {k: torch.tensor(np.asarray(v, np.float64)) for k, v in weights.items()}
    with torch.no_grad():
        theirs = copy.deepcopy(model).double()(ids).logits
        ours = torch_logits(exact, ids, valid, shape)
    gap = float((theirs - ours).abs().max())
    if gap > 1e-9 * max(1.0, float(ours.abs().max())):
        raise RuntimeError(f"the GPT-2 weight mapping is wrong: logits differ by {gap:.2e}")


def run_trl(args) -> dict:
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(2)
    task, model_config, weights, grpo = setting(args)
    rows = task.problems(np.random.default_rng(0), args.prompts * args.iterations)
    data = Dataset.from_dict({"prompt": [p for p, _ in rows]})

    def reward(prompts, completions, **_):
        return [task.reward(p, c) for p, c in zip(prompts, completions, strict=True)]

    tokenizer = char_tokenizer(task, model_config.vocab)
    tmp = tempfile.TemporaryDirectory(prefix="trl-grpo-")
    config = GRPOConfig(
        output_dir=f"{tmp.name}/out",
        use_cpu=True,
        bf16=False,
        fp16=False,
        seed=0,
        loss_type="grpo",
        num_generations=args.group,
        per_device_train_batch_size=args.prompts * args.group,
        gradient_accumulation_steps=1,
        num_iterations=1,
        max_completion_length=args.new_tokens,
        temperature=grpo.temperature,
        beta=grpo.beta,
        epsilon=grpo.clip,
        learning_rate=3e-4,  # AdamW (fused, weight decay 0), constant as the others
        lr_scheduler_type="constant",
        max_grad_norm=1.0,
        max_steps=args.iterations,
        use_vllm=False,
        report_to="none",
        logging_steps=10**6,
        save_strategy="no",
        eval_strategy="no",
        dataloader_num_workers=0,
        disable_tqdm=True,
        # TRL's default is on (recomputation: slower); the others have none
        gradient_checkpointing=False,
        model_init_kwargs={"dtype": torch.float32},
    )
    # the reference model is loaded from the policy's path: save ours there
    path = f"{tmp.name}/model"
    gpt2_from(task, model_config, weights).save_pretrained(path)
    tokenizer.save_pretrained(path)
    trainer = GRPOTrainer(
        model=path,
        reward_funcs=reward,
        args=config,
        train_dataset=data,
        processing_class=tokenizer,
    )

    clock = {"generation": 0.0, "generate": 0.0, "reference": 0.0}
    steps = {k: [] for k in ("total", "generation", "generate", "reference", "loop")}

    def timed(fn, key, when=lambda *a, **k: True):
        def wrapper(*a, **k):
            start = time.perf_counter()
            out = fn(*a, **k)
            if when(*a, **k):
                clock[key] += time.perf_counter() - start
            return out

        return wrapper

    # instance attributes shadow the trainer's methods (and the model's generate)
    trainer._generate = timed(trainer._generate, "generation")
    trainer._calculate_rewards = timed(trainer._calculate_rewards, "generation")
    model = trainer.accelerator.unwrap_model(trainer.model)
    model.generate = timed(model.generate, "generate")
    trainer._get_per_token_logps_and_entropies = timed(
        trainer._get_per_token_logps_and_entropies,
        "reference",
        when=lambda m, *a, **k: m is trainer.ref_model,
    )

    class Steps(TrainerCallback):
        begin = end = None

        def on_step_begin(self, *_, **__):
            clock.update(dict.fromkeys(clock, 0.0))
            self.begin = time.perf_counter()

        def on_step_end(self, *_, **__):
            now = time.perf_counter()
            steps["total"].append(now - self.begin)
            for key, value in clock.items():
                steps[key].append(value)
            if self.end is not None:
                steps["loop"].append(now - self.end)
            self.end = now

    trainer.add_callback(Steps())
    with contextlib.redirect_stdout(sys.stderr):  # the trainer prints its logs
        trainer.train()
    tmp.cleanup()
    if len(steps["total"]) != args.iterations:
        raise RuntimeError(f"ran {len(steps['total'])} steps, expected {args.iterations}")

    def ms(key, warm=2):
        return 1e3 * statistics.median(steps[key][warm:])

    total, gen, ref = ms("total"), ms("generation"), ms("reference")
    return {
        "ms_per_iteration": total,
        "generation_ms": gen,
        "update_ms": total - gen - ref,
        "reference_ms": ref,
        "generate_call_ms": ms("generate"),
        "loop_ms_per_iteration": ms("loop", warm=1),
        "peak_rss_mib": peak_mib(),
    }
