"""GRPO on GSM8K-style word problems: a small Llama-shaped model with a BPE
tokenizer, trained end to end by pdg.

    python examples/word_problems.py                   # defaults: a few minutes on 2 cores
    python examples/word_problems.py --steps 100 --sft-steps 200 --output-dir out

1. The data: pdg.rl.tasks.WordProblems generates the problems ("Ann has 7
   apples. She buys 5 more. ...", solved as "7+5=12. #### 12"); the train
   and held-out sets share no (template, numbers) combination.
2. A byte-level BPE tokenizer (digits split one by one, as Llama's are)
   trained on the training text with the `tokenizers` library, and a
   random Llama-shaped model (RMSNorm, rotary positions, gated SiLU MLP,
   untied head), saved as a Hugging Face directory (`init/`).
3. A supervised warm-up with pdg's train_lm program (the loss on the
   solution only), so the policy writes solutions in the format at all;
   saved as `sft/`.
4. GRPO with pdg.rl.GRPOTrainer (TRL's interface) from the warm-up model,
   rewarded 1.0 where the number after '####' equals the dataset's
   `answer` column; the final policy is saved as `final/`.

Held-out accuracy (greedy decoding, exact answer) is printed after the
warm-up and after GRPO, as one line:
    held-out accuracy: SFT 0.xxx -> GRPO 0.yyy (+0.zzz) on N problems
Every directory written loads with transformers' from_pretrained.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# What every model directory carries beside config.json and the weights.
EOS = "<|endoftext|>"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "generation_config.json")
MAX_POSITIONS = 128  # the model's context: a prompt and its completion


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=80, help="GRPO optimizer steps")
    parser.add_argument("--sft-steps", type=int, default=300, help="supervised warm-up steps")
    parser.add_argument("--output-dir", type=Path, default=Path("word_problems"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-size", type=int, default=20000, help="training problems")
    parser.add_argument("--eval-size", type=int, default=256, help="held-out problems")
    parser.add_argument("--limit", type=int, default=10, help="the largest number drawn")
    parser.add_argument(
        "--held-out",
        choices=["story", "numbers"],
        default="story",
        help="what held-out problems never share with training: the cast of the story, "
        "or the numbers of the template (see pdg.rl.tasks.word_problems)",
    )
    parser.add_argument("--vocab-size", type=int, default=1000, help="BPE's upper bound")
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--sft-batch", type=int, default=32)
    parser.add_argument("--sft-lr", type=float, default=3e-3)
    parser.add_argument("--lr", type=float, default=1e-4, help="GRPO's learning rate")
    parser.add_argument("--prompts", type=int, default=16, help="GRPO prompts per step")
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt")
    parser.add_argument("--beta", type=float, default=0.04, help="KL coefficient")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument(
        "--lora-rank",
        type=int,
        default=0,
        help="GRPO trains LoRA adapters of this rank on every projection (0: full fine-tuning)",
    )
    args = parser.parse_args(argv)
    positive = ("steps", "sft_steps", "train_size", "eval_size", "prompts", "sft_batch")
    for name in positive:
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.generations < 2:
        parser.error("--generations must be at least 2 (GRPO compares completions in a group)")
    if args.output_dir.exists() and any(args.output_dir.iterdir()):
        parser.error(f"--output-dir {args.output_dir} is not empty; give a new directory")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    from pdg.rl.tasks import WordProblems

    try:
        task = WordProblems(limit=args.limit, split_by=args.held_out)
        train = task.problems("train", args.train_size, seed=args.seed)
        held_out = task.problems("held_out", args.eval_size, seed=args.seed, unique=True)
    except ValueError as e:  # e.g. more distinct held-out problems than the limit allows
        sys.exit(f"word_problems.py: error: {e}")
    out = args.output_dir
    out.mkdir(parents=True, exist_ok=True)
    print(f"{len(train)} training and {len(held_out)} held-out problems, e.g.")
    print(f"  {task.prompt(train[0])} {train[0].solution}")

    tokenizer = train_tokenizer(
        [f"{task.prompt(p)} {p.solution}" for p in train], args.vocab_size, out / "tokenizer"
    )
    args.length, args.max_new_tokens = sequence_lengths(tokenizer, task, train + held_out)
    config = llama_config(args, tokenizer.get_vocab_size())
    weights = random_weights(config, args.seed)
    save_model(out / "init", weights, config, out / "tokenizer")
    count = sum(w.size for w in weights.values())
    print(
        f"BPE tokenizer: {tokenizer.get_vocab_size()} tokens; Llama-shaped model: "
        f"{count / 1e6:.2f}M parameters, {config.n_layers} layers, d_model {config.d_model}"
    )

    start = time.perf_counter()
    weights, losses = warm_up(args, config, weights, tokenizer, task, train)
    save_model(out / "sft", weights, config, out / "tokenizer")
    print(
        f"SFT: {args.sft_steps} steps in {time.perf_counter() - start:.1f} s (compile included), "
        f"loss {losses[:5].mean():.3f} -> {losses[-5:].mean():.3f}"
    )
    before = accuracy(out / "sft", task, held_out, args.max_new_tokens)
    print(f"held-out accuracy after SFT: {before:.3f}")

    from datasets import Dataset
    from pdg.rl import GRPOTrainer
    from pdg.rl.tasks import correct_answer

    start = time.perf_counter()
    trainer = GRPOTrainer(
        **trainer_kwargs(args, out, Dataset.from_list(task.dataset_rows(train)), correct_answer)
    )
    trainer.train()
    trainer.save_model(out / "final")
    print(f"GRPO: {args.steps} steps in {time.perf_counter() - start:.1f} s (compile included)")
    after = accuracy(out / "final", task, held_out, args.max_new_tokens)
    print(
        f"held-out accuracy: SFT {before:.3f} -> GRPO {after:.3f} ({after - before:+.3f}) "
        f"on {len(held_out)} problems"
    )
    print(f"wrote {out / 'final'} (a Hugging Face model directory) and {out / 'grpo'} (logs)")


def trainer_kwargs(args, out: Path, dataset, reward) -> dict:
    """GRPOTrainer's arguments: the warm-up model, the reward, the data, the
    GRPOConfig and, with --lora-rank, LoRA's peft_config."""
    from pdg.rl import GRPOConfig

    config = GRPOConfig(
        output_dir=str(out / "grpo"),
        max_steps=args.steps,
        per_device_train_batch_size=args.prompts * args.generations,
        num_generations=args.generations,
        max_completion_length=args.max_new_tokens,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        beta=args.beta,
        temperature=args.temperature,
        logging_steps=10,
        save_steps=args.steps,  # one checkpoint, at the end
        seed=args.seed,
    )
    kwargs = {
        "model": str(out / "sft"),
        "reward_funcs": [reward],
        "train_dataset": dataset,
        "args": config,
    }
    if args.lora_rank:
        from pdg.rl import LoraConfig

        kwargs["peft_config"] = LoraConfig(
            r=args.lora_rank, lora_alpha=2 * args.lora_rank, target_modules="all-linear"
        )
    return kwargs


def train_tokenizer(texts: list[str], vocab_size: int, directory: Path):
    """A byte-level BPE tokenizer trained on `texts`, digits split one by
    one, EOS its only special token; written to `directory` as the files
    a Hugging Face model directory carries (tokenizer.json,
    tokenizer_config.json, generation_config.json)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    eos = tok.token_to_id(EOS)
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": EOS,
        "pad_token": EOS,
        "model_max_length": MAX_POSITIONS,
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))
    generation = {"eos_token_id": eos, "pad_token_id": eos}
    (directory / "generation_config.json").write_text(json.dumps(generation, indent=2))
    return tok


def sequence_lengths(tokenizer, task, problems) -> tuple[int, int]:
    """(the warm-up's sequence length, the tokens a completion may take):
    64 and 32, or more where the problems need it (a larger --limit)."""
    prompts = max(len(tokenizer.encode(task.prompt(p)).ids) for p in problems)
    answers = max(len(tokenizer.encode(" " + p.solution).ids) for p in problems)
    new_tokens = max(32, answers + 1)  # and EOS
    length = max(64, prompts + answers)  # the last token (EOS) is only a target
    if max(length, prompts + new_tokens) > MAX_POSITIONS:
        sys.exit(
            f"word_problems.py: error: the problems take up to {prompts} + {answers} tokens, "
            f"more than the model's {MAX_POSITIONS} positions; use a smaller --limit"
        )
    return length, new_tokens


def llama_config(args, vocab: int):
    from pdg.nn import DecoderConfig

    return DecoderConfig(
        vocab=vocab,
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=args.heads,
        d_ff=(8 * args.d_model // 3 + 7) // 8 * 8,  # Llama's 8/3 d, rounded
        max_positions=MAX_POSITIONS,
        positions="rotary",
        norm="rmsnorm",
        norm_eps=1e-5,
        activation="silu",
        gated_mlp=True,
        qkv_bias=False,
        o_bias=False,
        mlp_bias=False,
        tie_embeddings=False,
    )


def random_weights(config, seed: int) -> dict:
    import pdg.frontend as pf
    from pdg.nn import GPT

    prog = pf.Program("init")
    return GPT(prog, config).init_weights(seed=seed, scale=0.1)


def save_model(directory: Path, weights: dict, config, tokenizer_dir: Path) -> None:
    """A Hugging Face directory: config.json and model.safetensors from
    pdg.models.save, the tokenizer's files beside them."""
    from pdg import models

    models.save(directory, weights, config)
    for name in TOKENIZER_FILES:
        (directory / name).write_bytes((tokenizer_dir / name).read_bytes())


def sequences(tokenizer, task, problems, length: int):
    """(tokens, targets, loss mask), each (len(problems), length): the prompt
    and its solution then EOS, the mask on the solution and EOS."""
    eos = tokenizer.token_to_id(EOS)
    n = len(problems)
    tokens = np.full((n, length), eos, np.int64)
    targets = np.full((n, length), eos, np.int64)
    mask = np.zeros((n, length), np.float32)
    for k, p in enumerate(problems):
        prompt = tokenizer.encode(task.prompt(p)).ids
        seq = prompt + tokenizer.encode(" " + p.solution).ids + [eos]
        if len(seq) > length + 1:
            raise ValueError(f"problem {k} has {len(seq)} tokens, more than {length + 1}")
        tokens[k, : len(seq) - 1] = seq[:-1]
        targets[k, : len(seq) - 1] = seq[1:]
        mask[k, len(prompt) - 1 : len(seq) - 1] = 1.0
    return tokens, targets, mask


def warm_up(args, config, weights, tokenizer, task, train):
    """Supervised steps on the worked solutions (pdg's train_lm program, all
    steps in one call); the weights after, and the loss per step."""
    import pdg.runtime
    from pdg import optim
    from pdg.lowering.cache import build_artifact, default_cache
    from pdg.programs import build_train_lm

    tokens, targets, mask = sequences(tokenizer, task, train, args.length)
    rng = np.random.default_rng([args.seed, 1])
    rows = rng.integers(0, len(train), size=(args.sft_steps, args.sft_batch))
    # Cosine decay to a tenth: the last steps settle what the first ones found.
    rate = optim.cosine(
        args.sft_lr, args.sft_steps, warmup=args.sft_steps // 10, floor=args.sft_lr / 10
    )
    program = build_train_lm(
        config, args.sft_batch, args.length, optim.AdamW(rate, weight_decay=0.0), 1.0, masked=True
    )
    work = Path(tempfile.mkdtemp(prefix="pdg-word-problems-"))
    built = build_artifact(program.program, "word_problems_sft", work, default_cache())
    result = pdg.runtime.load(built.path).run(
        program.inputs(weights, tokens[rows], targets[rows], loss_mask=mask[rows]),
        symbols={"I": args.sft_steps},
    )
    weights, _ = program.training.final_state(result.outputs)
    return weights, np.asarray(result.outputs["loss"])


def accuracy(model_dir: Path, task, problems, max_new_tokens: int) -> float:
    """Greedy decoding of each held-out prompt; the share whose final
    answer is exact."""
    from pdg import models
    from pdg.lowering.cache import default_cache
    from pdg.models.generate import Generator
    from pdg.rl.tasks import correct_answer

    model = models.load(model_dir)
    generator = Generator(model, temperature=0.0, cache=default_cache())
    prompts = [model.tokenizer.encode(task.prompt(p)) for p in problems]
    completions = [c.text for c in generator.generate(prompts, max_new_tokens)]
    scores = correct_answer(completions, [p.answer for p in problems])
    return float(np.mean(scores))


if __name__ == "__main__":
    sys.exit(main())
