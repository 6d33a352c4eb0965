"""Learning-rate schedules: functions of the step (a float scalar tensor
counting from 0) giving the rate, written with frontend operators so that
they are part of the program."""

from __future__ import annotations

import math
from collections.abc import Callable

from pdg.frontend import ops
from pdg.frontend.errors import ProgramError

Schedule = Callable  # (step tensor) -> rate tensor or float


def constant(lr: float) -> Schedule:
    _positive(lr, "learning rate")
    return lambda step: lr


def linear_warmup(lr: float, warmup: int) -> Schedule:
    """lr * min(1, (step + 1) / warmup)."""
    _positive(lr, "learning rate")
    _positive(warmup, "warmup")
    return lambda step: ops.minimum((step + 1.0) * (1.0 / warmup), 1.0) * lr


def cosine(lr: float, total: int, warmup: int = 0, floor: float = 0.0) -> Schedule:
    """Linear warmup, then a cosine decay from lr to `floor` at `total` steps."""
    _positive(lr, "learning rate")
    _positive(total, "total steps")
    if warmup < 0 or warmup >= total:
        raise ProgramError(f"warmup {warmup} must be in [0, total={total})")

    def rate(step):
        progress = ops.minimum((step - float(warmup)) * (1.0 / (total - warmup)), 1.0)
        progress = ops.maximum(progress, 0.0)
        decay = (ops.cos(progress * math.pi) + 1.0) * (0.5 * (lr - floor)) + floor
        if warmup == 0:
            return decay
        ramp = (step + 1.0) * (lr / warmup)
        return ops.where(step < float(warmup), ramp, decay)

    return rate


def as_schedule(lr) -> Schedule:
    if callable(lr):
        return lr
    if isinstance(lr, (int, float)) and not isinstance(lr, bool):
        return constant(float(lr))
    raise ProgramError(f"a learning rate is a number or a schedule, got {type(lr).__name__}")


def _positive(value, what: str) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ProgramError(f"{what} must be a positive number, got {value!r}")
