"""The compiled GRPO programs of a TRL-style trainer: the training program
and the evaluation's, built from the same GRPOConfig by
programs.build_grpo, compiled once into the artifact cache and loaded."""

from __future__ import annotations

import tempfile
from pathlib import Path

from .errors import TrainerConfigError
from .run_log import RunLog


def compile_grpo(trainer, algorithm, loss_type, rewards, data, what: str, cache: Path, **options):
    """(the GRPOProgram, the loaded artifact) of `algorithm` (GRPO's or
    RLOO's, with `loss_type`) for `trainer` (its config, EOS ids, LoRA setup
    and args), scoring with `rewards` on prompts as wide as `data`'s;
    `options`: build_grpo's arguments that differ between the programs
    (optimizer, microbatch, gradients). `what` names the program in
    messages and the cache."""
    from pdg.frontend.errors import ProgramError, SourceLoc, fixed_location
    from pdg.lowering.cache import build_artifact
    from pdg.programs import build_grpo
    from pdg.runtime import load

    a = trainer.args
    try:
        # The program's text (and cache key) does not depend on the caller.
        with fixed_location(SourceLoc("pdg.rl.GRPOTrainer", 0)):
            program = build_grpo(
                trainer.config,
                algorithm,
                rewards,
                eos=trainer.eos,
                prompt_width=data.prompt_width,
                max_new_tokens=a.max_completion_length,
                loss_type=loss_type,
                keyed_reward=True,
                lora=trainer.lora,
                scale_rewards=a.reward_scale,
                **options,
            )
    except ProgramError as e:
        raise TrainerConfigError(
            f"GRPOTrainer ({what}): {e.message}",
            e.hint
            or f"the longest prompt has {data.prompt_width} tokens and completions up "
            f"to max_completion_length={a.max_completion_length}",
        ) from None
    work = Path(tempfile.mkdtemp(prefix="pdg-grpo-trainer-"))
    name = "grpo_trainer" if what == "training" else f"grpo_{what}"
    built = build_artifact(program.program, name, work, cache)
    RunLog.message(
        f"pdg: {what} program "
        + ("loaded from the cache" if built.cached else f"compiled in {built.seconds:.1f} s")
    )
    return program, load(built.path)


def run_grpo(program, loaded, inputs: dict, donate=()) -> dict:
    """The outputs of one call; a mistake in a reward function (raised as a
    TrainerConfigError inside the program's callback) comes out as itself.
    `donate`: inputs whose arrays the call may write into (run(donate=))."""
    from pdg.runtime.cpu import UdfError

    try:
        symbols = program.symbols(inputs)
        return loaded.run(inputs, symbols, udfs=program.udfs, donate=donate).outputs
    except UdfError as e:
        if isinstance(e.__cause__, TrainerConfigError):
            raise e.__cause__ from None
        raise
