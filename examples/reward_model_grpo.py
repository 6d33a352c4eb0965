"""GRPO whose reward is a PyTorch reward model, scored inside the compiled program.

    python examples/reward_model_grpo.py                  # 6 iterations, compiled
    python examples/reward_model_grpo.py --iterations 2 --interpret

The reward model is an ordinary torch.nn.Module: token and position
embeddings, one transformer encoder layer (multi-head self-attention with
the padding masked, a GELU MLP, pre-norm), mean pooling and a linear head.
It is first fitted in PyTorch (a few hundred Adam steps) to score a
completion by how many of its tokens are even digits, so that its scores
mean something. build_grpo(reward_model=...) imports it with torch-mlir
(pdg.nn.from_torch, in a worker process) and scores each finished
completion inside the one GRPO program: generation, the reward model,
advantages, loss, gradients and Adam run as compiled code, with no Python
between iterations. The policy is a small GPT from random weights on the
additions task's tokens; the printout is the mean in-program reward of each
iteration.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from pdg import losses, optim, rl
from pdg.nn import GPTConfig
from pdg.programs import RewardModel, build_grpo
from torch import nn


class EncoderRewardModel(nn.Module):
    """forward(ids (B, L) int64, lengths (B,) int64) -> (B,) scores; row b's
    tokens are ids[b, :lengths[b]] (pdg's reward-model contract)."""

    def __init__(self, vocab: int, d: int = 32, heads: int = 4, max_len: int = 64):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(
            nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d)
        )
        self.head = nn.Linear(d, 1)

    def forward(self, ids, lengths):
        b, n = ids.shape
        d = self.tok.embedding_dim
        valid = torch.arange(n)[None, :] < lengths[:, None]
        # Positions from arange(n), not pos.weight[:n]: n varies per call.
        x = self.tok(ids) + self.pos(torch.arange(n))[None]
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (a.reshape(b, n, self.heads, d // self.heads).transpose(1, 2) for a in (q, k, v))
        scores = q @ k.transpose(2, 3) / (d // self.heads) ** 0.5
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        att = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(att.transpose(1, 2).reshape(b, n, d))
        x = x + self.mlp(self.ln2(x))
        w = valid.to(x.dtype)[:, :, None]
        return self.head((x * w).sum(1) / w.sum(1))[:, 0]


def even_digit_share(tok, ids) -> float:
    """What the reward model learns: the share of even digits in a completion."""
    text = tok.decode([int(i) for i in ids])
    return sum(c in "02468" for c in text) / max(len(ids), 1)


def fit_reward_model(tok, max_new: int, steps: int, seed: int) -> EncoderRewardModel:
    """The reward model, fitted in PyTorch on random completions."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = EncoderRewardModel(tok.vocab)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(steps):
        lengths = rng.integers(1, max_new + 1, 32)
        ids = rng.integers(0, tok.vocab, (32, max_new))
        ids[np.arange(max_new)[None, :] >= lengths[:, None]] = 0
        target = [even_digit_share(tok, row[:n]) for row, n in zip(ids, lengths, strict=True)]
        got = model(torch.tensor(ids), torch.tensor(lengths))
        loss = ((got - torch.tensor(target, dtype=torch.float32)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"reward model fitted in PyTorch: {steps} steps, last mse {loss.item():.4f}")
    return model.eval()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--prompts", type=int, default=4, help="prompts per iteration")
    parser.add_argument("--group", type=int, default=4, help="completions per prompt")
    parser.add_argument("--max-new-tokens", type=int, default=4)
    parser.add_argument("--fit-steps", type=int, default=300)
    parser.add_argument("--lr", type=float, default=3e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--interpret", action="store_true", help="run the interpreter")
    args = parser.parse_args(argv)

    task = rl.Addition(20)
    tok = task.tokenizer
    reward_model = fit_reward_model(tok, args.max_new_tokens, args.fit_steps, args.seed)
    width = task.prompt_width
    config = GPTConfig(tok.vocab, 32, 1, 2, None, width + args.max_new_tokens)
    program = build_grpo(
        config,
        losses.GRPOAlgorithm(group=args.group, clip=0.2, beta=0.02),
        None,
        reward_model=RewardModel(reward_model),
        eos=tok.eos,
        prompt_width=width,
        max_new_tokens=args.max_new_tokens,
        optimizer=optim.Adam(args.lr),
        microbatch=args.prompts,
    )
    weights = program.policy.init_weights(seed=args.seed + 1, scale=0.5)
    rng = np.random.default_rng(args.seed)
    prompts = [
        [tok.encode(p) for p, _ in task.problems(rng, args.prompts)] for _ in range(args.iterations)
    ]
    inputs = program.inputs(weights, weights, prompts, seed=args.seed)
    symbols = program.symbols(inputs)
    start = time.perf_counter()
    if args.interpret:
        from pdg.interpreter import interpret

        outputs = interpret(program.program.build(), inputs, symbols=symbols).outputs
    else:
        import pdg.runtime
        from pdg.lowering.artifact import compile_module

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "grpo_reward_model.pdgx"
            compile_module(program.program.build(), path, gpu=False)
            compiled = time.perf_counter()
            print(f"compiled in {compiled - start:.1f} s")
            start = compiled
            outputs = pdg.runtime.load(path).run(inputs, symbols).outputs
    took = time.perf_counter() - start
    rewards = np.asarray(outputs["reward"])  # [p, i, rows]
    means = rewards.mean(axis=(0, 2))
    loss = np.asarray(outputs["loss"])  # [i]
    for it, mean in enumerate(means):
        print(f"iteration {it}: mean reward {mean:+.4f}  loss {loss[it]:+.4f}")
    print(f"{args.iterations} GRPO iterations in one program: {took:.2f} s")
    return {"rewards": rewards, "outputs": outputs}


if __name__ == "__main__":
    main()
