"""Reference programs written with the frontend (decode; RLFT ones later)."""

from .decode import DecodeProgram, build_decode
from .grpo_step import GRPOStepProgram, build_grpo_step
from .train_lm import TrainProgram, build_train_lm

__all__ = [
    "DecodeProgram",
    "GRPOStepProgram",
    "TrainProgram",
    "build_decode",
    "build_grpo_step",
    "build_train_lm",
]
