"""Optimizers as per-iteration updates in frontend operators. Each keeps
named state tensors shaped like the parameter (zeros at the start) and
follows PyTorch's definitions of the same optimizer, so that a pdg training
run and a torch.optim one agree."""

from __future__ import annotations

from pdg.frontend import ops
from pdg.frontend.errors import ProgramError

from .schedules import as_schedule


class Optimizer:
    """update(w, g, state, step) -> (new w, new state); `state` maps each
    name in `slots` to a tensor like w, `step` is a float scalar (0 first)."""

    slots: tuple[str, ...] = ()

    def __init__(self, lr):
        self.lr = as_schedule(lr)

    def update(self, w, g, state: dict, step):
        raise NotImplementedError


class SGD(Optimizer):
    """w -= lr * buf, buf = momentum * buf + g (+ weight_decay * w);
    Nesterov: w -= lr * (g + momentum * buf)."""

    def __init__(self, lr, momentum: float = 0.0, weight_decay: float = 0.0, nesterov=False):
        super().__init__(lr)
        _in_range(momentum, "momentum", 0.0, 1.0)
        _in_range(weight_decay, "weight_decay", 0.0, None)
        if nesterov and momentum == 0.0:
            raise ProgramError("Nesterov momentum needs momentum > 0")
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
        self.slots = ("momentum",) if momentum else ()

    def update(self, w, g, state, step):
        if self.weight_decay:
            g = g + w * self.weight_decay
        new_state = {}
        if self.momentum:
            buf = state["momentum"] * self.momentum + g
            new_state["momentum"] = buf
            g = g + buf * self.momentum if self.nesterov else buf
        return w - g * self.lr(step), new_state


class Adam(Optimizer):
    """Adam with bias correction; weight_decay adds weight_decay * w to the
    gradient (L2, as torch.optim.Adam)."""

    slots = ("exp_avg", "exp_avg_sq")
    decoupled = False

    def __init__(self, lr, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(lr)
        b1, b2 = betas
        _in_range(b1, "beta1", 0.0, 1.0)
        _in_range(b2, "beta2", 0.0, 1.0)
        _in_range(eps, "eps", 0.0, None)
        _in_range(weight_decay, "weight_decay", 0.0, None)
        self.b1, self.b2, self.eps, self.weight_decay = b1, b2, eps, weight_decay

    def update(self, w, g, state, step):
        lr = self.lr(step)
        if self.weight_decay and self.decoupled:
            w = w - w * (lr * self.weight_decay)
        elif self.weight_decay:
            g = g + w * self.weight_decay
        m = state["exp_avg"] * self.b1 + g * (1.0 - self.b1)
        v = state["exp_avg_sq"] * self.b2 + g * g * (1.0 - self.b2)
        t = step + 1.0
        correct1 = 1.0 - ops.power(self.b1, t)
        correct2 = 1.0 - ops.power(self.b2, t)
        denom = ops.sqrt(v / correct2) + self.eps
        new_w = w - (m / correct1) / denom * lr
        return new_w, {"exp_avg": m, "exp_avg_sq": v}


class AdamW(Adam):
    """Adam with decoupled weight decay: w -= lr * weight_decay * w first
    (as torch.optim.AdamW, whose default decay is 0.01)."""

    decoupled = True

    def __init__(self, lr, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.01):
        super().__init__(lr, betas, eps, weight_decay)


def _in_range(value, what: str, low: float, high: float | None) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= low
    if ok and high is not None:
        ok = value < high
    if not ok:
        bound = f"[{low}, {high})" if high is not None else f">= {low}"
        raise ProgramError(f"{what} must be a number {bound}, got {value!r}")
