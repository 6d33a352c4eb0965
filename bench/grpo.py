"""GRPO benchmark: one iteration (sample a group of completions per prompt,
score them, update the policy) of the same model on the same task, with
pdg (compiled sampling and update, rl.GRPOTrainer) and with a plain PyTorch
loop written as a user would (batched, left-padded prompts, float32, 2
threads). Reports time per iteration (median after warm-up) split into
generation and update, and each process's peak memory; prints a table and
writes results/grpo.json.

    python bench/grpo.py                          # 32 prompts x 8 completions
    python bench/grpo.py --prompts 8 --iterations 10

TRL's GRPOTrainer is not in this comparison yet.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
D_MODEL, LAYERS, HEADS, LIMIT = 32, 2, 2, 20


def setting(prompts: int, group: int):
    from pdg import rl
    from pdg.frontend import Program
    from pdg.nn import GPT, GPTConfig

    task = rl.Addition(LIMIT)
    length = task.prompt_width + task.answer_width
    config = GPTConfig(task.tokenizer.vocab, D_MODEL, LAYERS, HEADS, None, length)
    weights = GPT(Program("w"), config).init_weights(seed=0, scale=0.3)
    return task, config, weights, rl.GRPOConfig(group=group)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_pdg(args) -> dict:
    from pdg import rl

    task, config, weights, grpo = setting(args.prompts, args.group)
    trainer = rl.GRPOTrainer(
        config, grpo, task.reward, task.tokenizer, task.prompt_width, task.answer_width, lr=3e-4
    )
    state = trainer.start(weights)
    rng = np.random.default_rng(0)
    gen, upd = [], []
    for _ in range(args.iterations):
        prompts = [p for p, _ in task.problems(rng, args.prompts)]
        state, stats = trainer.step(state, prompts)
        gen.append(stats.seconds["generation"])
        upd.append(stats.seconds["update"])
    return summary(gen, upd) | {"compile_s": sum(trainer.compile_seconds.values())}


def run_torch(args) -> dict:
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)
    task, config, weights, grpo = setting(args.prompts, args.group)
    tok = task.tokenizer
    w = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    ref = {k: torch.tensor(v) for k, v in weights.items()}
    opt = torch.optim.Adam(list(w.values()), lr=3e-4)
    hd = D_MODEL // HEADS
    task.prompt_width + task.answer_width

    def forward(p, ids, valid):
        """Logits (B, L, V) for left-padded ids; `valid` marks real tokens."""
        n = ids.shape[1]
        pos = (valid.long().cumsum(1) - 1).clamp(min=0)
        x = p["wte.w"][ids] + p["wpe.w"][pos]
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        # a padding position attends to itself only (no row without keys)
        allowed = (causal[None] & valid[:, None, :]) | torch.eye(n, dtype=torch.bool)[None]
        for i in range(LAYERS):
            q = f"h{i}."
            a = F.layer_norm(x, (D_MODEL,), p[q + "ln1.g"], p[q + "ln1.b"], eps=1e-5)

            def heads(name, a=a, q=q):
                y = a @ p[q + f"attn.{name}.w"] + p[q + f"attn.{name}.b"]
                return y.view(ids.shape[0], n, HEADS, hd)

            s = torch.einsum("bthd,bshd->bhts", heads("q"), heads("k")) / math.sqrt(hd)
            s = s.masked_fill(~allowed[:, None], float("-inf"))
            att = torch.einsum("bhts,bshd->bthd", s.softmax(-1), heads("v"))
            x = x + att.reshape(ids.shape[0], n, D_MODEL) @ p[q + "attn.o.w"] + p[q + "attn.o.b"]
            m = F.layer_norm(x, (D_MODEL,), p[q + "ln2.g"], p[q + "ln2.b"], eps=1e-5)
            m = F.gelu(m @ p[q + "mlp.fc.w"] + p[q + "mlp.fc.b"], approximate="tanh")
            x = x + m @ p[q + "mlp.proj.w"] + p[q + "mlp.proj.b"]
        x = F.layer_norm(x, (D_MODEL,), p["ln_f.g"], p["ln_f.b"], eps=1e-5)
        return x @ p["wte.w"].T

    rng = np.random.default_rng(0)
    gen, upd = [], []
    for _ in range(args.iterations):
        start = time.perf_counter()
        problems = [p for p, _ in task.problems(rng, args.prompts)]
        prompts = [p for p in problems for _ in range(args.group)]
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), tok.eos)
        for k, p in enumerate(prompts):  # left padding
            enc = tok.encode(p)
            ids[k, width - len(enc) :] = torch.tensor(enc)
        valid = ids != tok.eos
        done = torch.zeros(len(prompts), dtype=torch.bool)
        with torch.no_grad():
            for _ in range(task.answer_width):
                logits = forward(w, ids, valid)[:, -1]
                nxt = torch.multinomial(logits.softmax(-1), 1)[:, 0]
                nxt = torch.where(done, torch.full_like(nxt, tok.eos), nxt)
                ids = torch.cat([ids, nxt[:, None]], 1)
                valid = torch.cat([valid, ~done[:, None]], 1)
                done = done | (nxt == tok.eos)
                if done.all():
                    break
        completions = ids[:, width:]
        rewards = torch.tensor(
            [
                task.reward(p, tok.decode(c.tolist()))
                for p, c in zip(prompts, completions, strict=True)
            ]
        )
        gen.append(time.perf_counter() - start)
        start = time.perf_counter()
        targets = ids[:, 1:]
        mask = valid[:, 1:].float()
        mask[:, : width - 1] = 0.0  # completion targets only
        with torch.no_grad():
            old = (
                forward(w, ids[:, :-1], valid[:, :-1])
                .log_softmax(-1)
                .gather(2, targets[..., None])[..., 0]
            )
            ref_logp = (
                forward(ref, ids[:, :-1], valid[:, :-1])
                .log_softmax(-1)
                .gather(2, targets[..., None])[..., 0]
            )
        logp = (
            forward(w, ids[:, :-1], valid[:, :-1])
            .log_softmax(-1)
            .gather(2, targets[..., None])[..., 0]
        )
        r = rewards.view(args.prompts, args.group)
        adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + grpo.eps)).view(-1, 1)
        ratio = torch.exp(logp - old)
        per_token = -torch.min(ratio * adv, torch.clamp(ratio, 1 - grpo.clip, 1 + grpo.clip) * adv)
        per_token = per_token + grpo.beta * (torch.exp(ref_logp - logp) - (ref_logp - logp) - 1)
        loss = ((per_token * mask).sum(1) / mask.sum(1).clamp(min=1)).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
        opt.step()
        upd.append(time.perf_counter() - start)
    return summary(gen, upd)


def summary(gen, upd) -> dict:
    warm = 2
    g, u = statistics.median(gen[warm:]), statistics.median(upd[warm:])
    return {
        "ms_per_iteration": 1e3 * (g + u),
        "generation_ms": 1e3 * g,
        "update_ms": 1e3 * u,
        "peak_rss_mib": peak_mib(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--impl", choices=["pdg", "torch"], help="run one, in this process")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "grpo.json")
    args = parser.parse_args()
    if args.impl:
        result = (run_pdg if args.impl == "pdg" else run_torch)(args)
        print(json.dumps(result))
        return
    rows = {}
    for impl in ("pdg", "torch"):  # each in a fresh process: its own peak memory
        cmd = [
            sys.executable,
            __file__,
            "--impl",
            impl,
            "--prompts",
            str(args.prompts),
            "--group",
            str(args.group),
            "--iterations",
            str(args.iterations),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        rows[impl] = json.loads(out.strip().splitlines()[-1])
    print(
        f"GRPO iteration: {args.prompts} prompts x {args.group} completions, "
        f"d_model {D_MODEL}, {LAYERS} layers"
    )
    print(f"{'impl':6} {'ms/iter':>8} {'generation':>11} {'update':>8} {'peak MiB':>9}")
    for impl, r in rows.items():
        print(
            f"{impl:6} {r['ms_per_iteration']:8.1f} {r['generation_ms']:11.1f} "
            f"{r['update_ms']:8.1f} {r['peak_rss_mib']:9.1f}"
        )
    ratio = rows["pdg"]["ms_per_iteration"] / rows["torch"]["ms_per_iteration"]
    print(
        f"pdg / torch time: {ratio:.2f}x; memory: "
        f"{rows['pdg']['peak_rss_mib'] / rows['torch']['peak_rss_mib']:.2f}x"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"config": vars(args) | {"out": str(args.out)}, **rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
