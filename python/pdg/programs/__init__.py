"""Reference programs written with the frontend (decode; RLFT ones later)."""

from .decode import DecodeProgram, build_decode
from .rl_step import RLStepProgram, build_rl_step
from .train_lm import TrainProgram, build_train_lm, copy_batches

__all__ = [
    "DecodeProgram",
    "RLStepProgram",
    "TrainProgram",
    "build_decode",
    "build_rl_step",
    "build_train_lm",
    "copy_batches",
]
