"""Reference programs written with the frontend: decoding, language-model
training, one RL update on given samples, and GRPO as one program."""

from .decode import DecodeProgram, build_decode
from .grpo import GRPOProgram, build_grpo
from .reward_model import RewardModel
from .rl_step import RLStepProgram, ValuesProgram, build_rl_step, build_values
from .train_lm import TrainProgram, build_train_lm, copy_batches

__all__ = [
    "DecodeProgram",
    "GRPOProgram",
    "RLStepProgram",
    "RewardModel",
    "TrainProgram",
    "ValuesProgram",
    "build_decode",
    "build_grpo",
    "build_rl_step",
    "build_train_lm",
    "build_values",
    "copy_batches",
]
