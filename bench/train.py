"""Training benchmark: time per iteration of the same GPT-style decoder's
supervised training step (forward, backward, clipping, AdamW) compiled by
pdg as one program, against PyTorch eager, on the same weights and data.

    python bench/train.py                 # prints a table, writes results/train.json
    python bench/train.py --iterations 20 --configs 32x16

pdg's time is the whole run's divided by the iterations (no Python between
them), with the compile time reported separately; PyTorch's is the median
iteration after two of warm-up. Both use float32 and 2 threads. The final
losses are compared: the two runs train the same model the same way.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
VOCAB, LAYERS, HEADS, BATCH, LR, CLIP = 64, 2, 4, 8, 3e-3, 1.0


def run_pdg(d_model: int, length: int, iterations: int, weights, tokens, targets) -> dict:
    from pdg import optim
    from pdg.lowering.artifact import compile_module
    from pdg.nn import AttentionPattern, GPTConfig
    from pdg.programs import build_train_lm
    from pdg.runtime import load

    config = GPTConfig(VOCAB, d_model, LAYERS, HEADS, None, length, AttentionPattern("full"))
    train = build_train_lm(config, BATCH, length, optim.AdamW(LR, weight_decay=0.0), CLIP)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        compile_module(train.program.build(), Path(tmp) / "t.pdgx", gpu=False)
        compile_s = time.perf_counter() - start
        program = load(Path(tmp) / "t.pdgx")
        inputs = train.inputs(weights, tokens, targets)
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            result = program.run(inputs, symbols={"I": iterations})
            runs.append(time.perf_counter() - start)
    return {
        "ms_per_iteration": 1e3 * min(runs) / iterations,
        "compile_s": compile_s,
        "peak_mib": result.peak_bytes / 2**20,
        "final_loss": float(np.mean(result.outputs["loss"][-5:])),
    }


def run_torch(d_model: int, length: int, iterations: int, weights, tokens, targets) -> dict:
    import math

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)
    w = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    opt = torch.optim.AdamW(list(w.values()), lr=LR, weight_decay=0.0)
    hd = d_model // HEADS
    mask = torch.ones(length, length, dtype=torch.bool).tril()
    times, losses = [], []
    for it in range(iterations):
        start = time.perf_counter()
        ids = torch.from_numpy(tokens[it])
        x = w["wte.w"][ids] + w["wpe.w"][torch.arange(length)]
        for i in range(LAYERS):
            p = f"h{i}."
            a = F.layer_norm(x, (d_model,), w[p + "ln1.g"], w[p + "ln1.b"], eps=1e-5)

            def heads(name, a=a, p=p):
                return (a @ w[p + f"attn.{name}.w"] + w[p + f"attn.{name}.b"]).view(
                    BATCH, length, HEADS, hd
                )

            q, k, v = heads("q"), heads("k"), heads("v")
            scores = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(hd)
            scores = scores.masked_fill(~mask, float("-inf"))
            att = torch.einsum("bhts,bshd->bthd", scores.softmax(-1), v)
            x = x + att.reshape(BATCH, length, d_model) @ w[p + "attn.o.w"] + w[p + "attn.o.b"]
            m = F.layer_norm(x, (d_model,), w[p + "ln2.g"], w[p + "ln2.b"], eps=1e-5)
            m = F.gelu(m @ w[p + "mlp.fc.w"] + w[p + "mlp.fc.b"], approximate="tanh")
            x = x + m @ w[p + "mlp.proj.w"] + w[p + "mlp.proj.b"]
        x = F.layer_norm(x, (d_model,), w["ln_f.g"], w["ln_f.b"], eps=1e-5)
        logits = x @ w["wte.w"].T
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), torch.from_numpy(targets[it]).reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), CLIP)
        opt.step()
        times.append(time.perf_counter() - start)
        losses.append(float(loss))
    return {
        "ms_per_iteration": 1e3 * statistics.median(times[2:]),
        "final_loss": float(np.mean(losses[-5:])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--configs", nargs="+", default=["32x16", "64x32"], help="DxT")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "train.json")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent / "python"))
    from pdg.frontend import Program
    from pdg.nn import GPT, GPTConfig
    from pdg.programs import copy_batches

    rows = []
    print(
        f"{'d_model':>7} {'T':>4} {'pdg ms/it':>10} {'torch ms/it':>12} {'ratio':>6} "
        f"{'compile s':>9} {'pdg MiB':>8} {'loss pdg':>9} {'loss torch':>10}"
    )
    for spec in args.configs:
        d_model, length = (int(x) for x in spec.split("x"))
        probe = GPT(Program("w"), GPTConfig(VOCAB, d_model, LAYERS, HEADS, None, length))
        weights = probe.init_weights(seed=0, scale=0.1)
        tokens, targets = copy_batches(args.iterations, BATCH, length, VOCAB)
        ours = run_pdg(d_model, length, args.iterations, weights, tokens, targets)
        theirs = run_torch(d_model, length, args.iterations, weights, tokens, targets)
        ratio = ours["ms_per_iteration"] / theirs["ms_per_iteration"]
        rows.append(
            {
                "d_model": d_model,
                "length": length,
                "batch": BATCH,
                "iterations": args.iterations,
                "pdg": ours,
                "torch": theirs,
                "ratio": ratio,
            }
        )
        print(
            f"{d_model:>7} {length:>4} {ours['ms_per_iteration']:>10.2f} "
            f"{theirs['ms_per_iteration']:>12.2f} {ratio:>6.2f} {ours['compile_s']:>9.1f} "
            f"{ours['peak_mib']:>8.2f} {ours['final_loss']:>9.4f} {theirs['final_loss']:>10.4f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
