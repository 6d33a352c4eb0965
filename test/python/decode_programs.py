"""Small instances of the reference decode program for tests (a module with
a unique name, importable from every test folder)."""

from __future__ import annotations

from pdg.nn import AttentionPattern, GPTConfig
from pdg.programs import DecodeProgram, build_decode


def small_decode(
    pattern: str = "full",
    *,
    vocab: int = 32,
    d_model: int = 16,
    heads: int = 2,
    layers: int = 2,
    max_len: int = 32,
    dtype: str = "f32",
    weight_dtype: str | None = None,
    **build_options,
) -> DecodeProgram:
    """A GPT-style decode program; `pattern` is 'full', 'window:W' or
    'block:S'; other keywords go to build_decode (eos defaults to 0)."""
    cfg = GPTConfig(
        vocab=vocab,
        d_model=d_model,
        n_layers=layers,
        n_heads=heads,
        max_positions=max_len,
        pattern=AttentionPattern.parse(pattern),
        dtype=dtype,
        weight_dtype=weight_dtype,
    )
    build_options.setdefault("eos", 0)
    return build_decode(cfg, max_len=max_len, **build_options)
