"""Reference programs written with the frontend (decode; RLFT ones later)."""

from .decode import DecodeProgram, build_decode
from .train_lm import TrainProgram, build_train_lm

__all__ = ["DecodeProgram", "TrainProgram", "build_decode", "build_train_lm"]
