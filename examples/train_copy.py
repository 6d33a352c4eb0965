"""Trains a small GPT-style decoder to copy, as one compiled pdg program,
then decodes with the trained weights.

    python examples/train_copy.py                            # 300 iterations
    python examples/train_copy.py --iterations 100 --checkpoint ckpt.npz
    python examples/train_copy.py --iterations 100 --resume ckpt.npz
    python examples/train_copy.py --emit-ir train.mlir       # the program, for pdg-opt

Each sequence is 4 random tokens repeated (a b c d a b c d); the model
learns to predict the repeat. The training program (pdg/programs/
train_lm.py) holds every iteration: forward pass, gradients (pdg.autodiff.grad),
global-norm clipping and the AdamW update, `w[i + 1] = update(w[i],
grad[i])`. It is compiled once and run for any number of iterations. A
checkpoint holds the weights, the optimizer state and the step; resuming
from it continues the same run bit for bit.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pdg.runtime
from pdg import optim
from pdg.lowering.artifact import compile_module
from pdg.nn import AttentionPattern, GPTConfig
from pdg.programs import build_decode, build_train_lm, copy_batches

VOCAB, HALF = 12, 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--attention", default="full", help="full | window:W | block:S")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", type=Path, help="save the final state here")
    parser.add_argument("--resume", type=Path, help="continue from this checkpoint")
    parser.add_argument("--emit-ir", metavar="FILE.mlir", help="write the pdg.graph and stop")
    args = parser.parse_args()

    length = 2 * HALF
    config = GPTConfig(
        vocab=VOCAB,
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=args.heads,
        max_positions=length,
        pattern=AttentionPattern.parse(args.attention),
    )
    train = build_train_lm(
        config, args.batch, length, optim.AdamW(args.lr, weight_decay=0.01), clip_norm=1.0
    )
    if args.emit_ir:
        Path(args.emit_ir).write_text(train.program.to_mlir())
        print(f"wrote {args.emit_ir}")
        return
    work = Path(tempfile.mkdtemp(prefix="pdg-train-"))
    start = time.perf_counter()
    compile_module(train.program.build(), work / "train.pdgx", gpu=False)
    print(f"compiled the training program in {time.perf_counter() - start:.1f} s")
    program = pdg.runtime.load(work / "train.pdgx")

    if args.resume:
        weights, state, step = train.training.load(args.resume)
        print(f"resuming at step {step} from {args.resume}")
    else:
        weights, state, step = train.model.init_weights(seed=args.seed, scale=0.2), None, 0
    tokens, targets = copy_batches(
        args.iterations, args.batch, 2 * HALF, VOCAB, seed=args.seed, start=step
    )
    inputs = train.inputs(weights, tokens, targets, state=state, start_step=step)
    start = time.perf_counter()
    result = program.run(inputs, symbols={"I": args.iterations})
    elapsed = time.perf_counter() - start
    losses = np.asarray(result.outputs["loss"])
    every = max(1, args.iterations // 10)
    for k in range(0, args.iterations, every):
        print(f"  step {step + k:5d}  loss {losses[k]:.4f}")
    print(
        f"{args.iterations} iterations in {elapsed:.2f} s "
        f"({1e3 * elapsed / args.iterations:.2f} ms each); "
        f"loss {losses[:10].mean():.3f} -> {losses[-10:].mean():.3f}"
    )
    if args.checkpoint:
        train.training.save(args.checkpoint, result.outputs, next_step=step + args.iterations)
        print(f"saved the weights and optimizer state to {args.checkpoint}")

    trained, _ = train.training.final_state(result.outputs)
    accuracy = copy_accuracy(config, trained, work)
    print(f"copy accuracy of the trained model (greedy): {accuracy:.0%}")


def copy_accuracy(config: GPTConfig, weights: dict, work: Path) -> float:
    """Decodes the second half of held-out sequences from their first half."""
    decode = build_decode(config, eos=-1, max_len=2 * HALF - 1, prompt_width=HALF)
    compile_module(decode.program.build(), work / "decode.pdgx", gpu=False)
    rng = np.random.default_rng(12345)
    prompts = rng.integers(1, VOCAB, size=(16, HALF))
    result = pdg.runtime.load(work / "decode.pdgx").run(
        decode.inputs(weights, [list(p) for p in prompts]), symbols={"B": len(prompts)}
    )
    predicted = np.stack([np.asarray(s) for s in result.outputs["tokens"]])
    return float((predicted[:, HALF - 1 :] == prompts).mean())


if __name__ == "__main__":
    main()
