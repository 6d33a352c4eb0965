"""The copy task (the second half of each sequence repeats the first) and
a PyTorch training loop over the frontend tests' independent model, for
comparison with pdg's compiled training programs."""

from __future__ import annotations

import torch
from frontend.torch_reference import TorchGPT
from pdg import optim
from pdg.nn import AttentionPattern, GPTConfig
from pdg.programs import build_train_lm, copy_batches

BATCH, LENGTH, VOCAB, LR, CLIP = 4, 8, 8, 1e-2, 1.0


def copy_task(iterations: int, seed: int = 0):
    return copy_batches(iterations, BATCH, LENGTH, VOCAB, seed=seed)


def train_program(dtype: str = "f32"):
    cfg = GPTConfig(
        vocab=VOCAB,
        d_model=16,
        n_layers=2,
        n_heads=2,
        max_positions=LENGTH,
        pattern=AttentionPattern("full"),
        dtype=dtype,
    )
    return build_train_lm(cfg, BATCH, LENGTH, optim.Adam(lr=LR), clip_norm=CLIP)


def torch_losses(weights, tokens, targets) -> list[float]:
    """The same run with torch.optim.Adam and clip_grad_norm_ (float64)."""
    ref = TorchGPT(weights, 2, 2)
    params = list(ref.w.values())
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=LR)
    losses = []
    for it in range(tokens.shape[0]):
        opt.zero_grad()
        total = 0
        for b in range(BATCH):
            logits = ref.logits(list(tokens[it, b]), "full", 0)
            total = total + torch.nn.functional.cross_entropy(
                logits, torch.tensor(targets[it, b]), reduction="sum"
            )
        loss = total / (BATCH * LENGTH)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, CLIP)
        opt.step()
        losses.append(float(loss.detach()))
    return losses
