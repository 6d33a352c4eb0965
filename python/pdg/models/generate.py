"""Text generation with a loaded model: the compiled decode program
(programs.build_decode), built for the model's configuration and a few
options, compiled once into the artifact cache, then run on batches of
prompts.

What the compiled program depends on, and so what compiles again when it
changes: the model's architecture (not its weights: they are inputs), the
temperature (0 is greedy), whether EOS ends a sequence, the attention
pattern, and the prompt width (prompts are padded to a power of two, at
least 16, so similar prompts share a program). The number of new tokens
and the seed are given at each run.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pdg.nn.attention import AttentionPattern

from .checkpoint import Model
from .errors import ModelError

MIN_PROMPT_WIDTH = 16
MAX_BATCH = 64  # prompts per run of the program (more run in several)


@dataclass
class Completion:
    prompt_ids: list[int]
    token_ids: list[int]  # the generated ids only, EOS included when one ended it
    text: str | None  # their text (special tokens left out); None without a tokenizer
    finish_reason: str  # "eos" or "length"


@dataclass
class Compiling:
    """What on_compile(...) is told before a program is looked up in the
    cache or compiled (`cache` None: no cache)."""

    name: str
    cache: Path | None


class Generator:
    def __init__(
        self,
        model: Model,
        *,
        temperature: float = 0.0,
        ignore_eos: bool = False,
        attention: AttentionPattern | None = None,
        cache: Path | None = None,
        workdir: Path | None = None,
        on_compile: Callable[[Compiling], object] | None = None,
        weight_dtype: str | None = None,
    ):
        """`attention` replaces every layer's pattern of the model's config;
        `cache`: the artifact cache directory (pdg.lowering.cache), where
        the programs are compiled once; `on_compile(Compiling)` may return
        a context manager that wraps looking up or compiling a program (a
        progress display); `weight_dtype="bf16"`: the matrices stored in
        bf16 (rounded from the model's weights once), half the bytes each
        token reads, products summed in f32."""
        if not (isinstance(temperature, (int, float)) and math.isfinite(temperature)):
            raise ModelError(f"the temperature must be a finite number, got {temperature!r}")
        if temperature < 0:
            raise ModelError(f"the temperature must be 0 (greedy) or more, got {temperature}")
        self.model = model
        self.config = model.config if attention is None else model.config.with_pattern(attention)
        if weight_dtype is not None:
            from dataclasses import replace

            from pdg.frontend import ProgramError

            try:
                self.config = replace(self.config, weight_dtype=weight_dtype)
            except ProgramError as e:
                raise ModelError(f"weights in {weight_dtype}: {e.message}") from None
        self._weights: dict | None = None  # the model's weights in the program's dtypes
        self.temperature = float(temperature)
        self.eos = () if ignore_eos else tuple(model.eos)
        self.cache = Path(cache) if cache is not None else None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="pdg-generate-"))
        self.on_compile = on_compile
        self._programs: dict[int, tuple] = {}

    @property
    def max_positions(self) -> int:
        return self.config.max_positions

    def generate(
        self, prompts: Sequence[Sequence[int]], max_new_tokens: int, seed: int = 0
    ) -> list[Completion]:
        """Up to `max_new_tokens` new tokens after each prompt (token ids),
        each completion ending at its first EOS unless ignore_eos."""
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int):
            raise ModelError(f"max_new_tokens must be an integer, got {max_new_tokens!r}")
        if max_new_tokens < 1:
            raise ModelError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        prompts = [self._check_prompt(k, p, max_new_tokens) for k, p in enumerate(prompts)]
        if not prompts:
            raise ModelError("give at least one prompt")
        out: list[Completion] = []
        for start in range(0, len(prompts), MAX_BATCH):
            out += self._run(prompts[start : start + MAX_BATCH], max_new_tokens, seed)
        return out

    def _check_prompt(self, k: int, prompt, max_new_tokens: int) -> list[int]:
        ids = [int(i) for i in prompt]
        if not ids:
            raise ModelError(f"prompt {k + 1} has no tokens")
        bad = [i for i in ids if not 0 <= i < self.config.vocab]
        if bad:
            raise ModelError(
                f"prompt {k + 1}: token id {bad[0]} is outside the model's vocabulary "
                f"(0..{self.config.vocab - 1})"
            )
        need = len(ids) + max_new_tokens - 1
        if need > self.max_positions:
            raise ModelError(
                f"prompt {k + 1} has {len(ids)} tokens: with {max_new_tokens} new tokens that is "
                f"{need} positions, more than the model's {self.max_positions} "
                "(max_position_embeddings); shorten the prompt or ask for fewer tokens"
            )
        return ids

    def _run(self, prompts: list[list[int]], max_new_tokens: int, seed: int) -> list[Completion]:
        decode, run = self.program(max(len(p) for p in prompts))
        limits = [len(p) + max_new_tokens - 1 for p in prompts]
        seed_value = seed if self.temperature > 0 else None
        inputs = decode.inputs(self._weights_for(decode), prompts, limits=limits, seed=seed_value)
        tokens = run.run(inputs, {"B": len(prompts)}).outputs["tokens"]
        out = []
        for k, p in enumerate(prompts):
            ids = [int(x) for x in np.asarray(tokens[k])[len(p) - 1 :]][:max_new_tokens]
            ended = next((n for n, i in enumerate(ids) if i in self.eos), None)
            if ended is not None:
                ids = ids[: ended + 1]
            text = self.model.tokenizer.decode(ids) if self.model.tokenizer else None
            out.append(Completion(p, ids, text, "eos" if ended is not None else "length"))
        return out

    def _weights_for(self, decode) -> dict:
        """The model's weights converted once to the dtypes of the program's
        parameters (bf16 matrices), so that a run does not convert them."""
        if self._weights is None:
            from pdg.frontend.dtypes import numpy_dtype

            params = decode.model.parameters()
            self._weights = {
                path: np.asarray(w, numpy_dtype(params[path].dtype)) if path in params else w
                for path, w in self.model.weights.items()
            }
        return self._weights

    def program(self, longest_prompt: int):
        """(the DecodeProgram, the loaded compiled program) for prompts of up
        to `longest_prompt` tokens: built and compiled (or found in the
        cache) on first use."""
        from contextlib import nullcontext

        from pdg.lowering.cache import build_artifact
        from pdg.programs import build_decode
        from pdg.runtime import load

        width = min(
            max(MIN_PROMPT_WIDTH, 1 << (longest_prompt - 1).bit_length()), self.max_positions
        )
        if width not in self._programs:
            decode = build_decode(
                self.config,
                eos=self.eos or None,
                max_len=self.max_positions,
                prompt_width=width,
                max_batch=MAX_BATCH,
                sample_seed="input" if self.temperature > 0 else None,
                temperature=self.temperature or 1.0,
                response_limit=True,
                output_logits=False,
            )
            name = f"generate-{self.model.model_type}"
            wrap = self.on_compile(Compiling(name, self.cache)) if self.on_compile else None
            with wrap or nullcontext():
                built = build_artifact(decode.program, name, self.workdir, self.cache)
            self._programs[width] = (decode, load(built.path))
        return self._programs[width]
