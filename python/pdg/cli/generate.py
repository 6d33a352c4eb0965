"""`pdg generate MODEL_DIR`: text from a Hugging Face model directory with
the compiled decode program.

    pdg generate ./Qwen2.5-0.5B --prompt "The capital of France is" --max-new-tokens 16
    pdg generate ./tiny-llama --token-ids 1,17,3 --token-ids 1,5 --format json

Prompts are --prompt texts (tokenized with the model's tokenizer.json) or
--token-ids lists, several of either in one batch. The decode program is
compiled once per model architecture and options into the artifact cache
(--cache, default $PDG_CACHE or ~/.cache/pdg), then loaded; while it
compiles, stderr shows that it does. With --format json each prompt gives
one line: {"prompt_token_ids", "token_ids" (the generated ids only, EOS
included when it ended the completion), "text", "finish_reason"}.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from pdg.cli.common import UserError
from pdg.lowering.cache import default_cache


def _token_ids(text: str) -> list[int]:
    ids = []
    for part in text.split(","):
        part = part.strip()
        try:
            ids.append(int(part))
        except ValueError:
            raise UserError(
                f"--token-ids '{text}': '{part}' is not an integer (give ids like 5,17,3)"
            ) from None
    return ids


def _attention(text: str | None):
    if text is None:
        return None
    from pdg.frontend import ProgramError
    from pdg.nn.attention import AttentionPattern

    try:
        return AttentionPattern.parse(text)
    except ProgramError as e:
        raise UserError(
            f"--attention '{text}': {e.message}; use full, window:W or block:S (e.g. window:64)"
        ) from None


@click.command("generate")
@click.argument("model_dir", metavar="MODEL_DIR")
@click.option("--prompt", "prompts", multiple=True, metavar="TEXT", help="A prompt (repeatable).")
@click.option(
    "--token-ids",
    "token_ids",
    multiple=True,
    metavar="5,17,3",
    help="A prompt as token ids (repeatable).",
)
@click.option("--max-new-tokens", default=32, show_default=True, type=int)
@click.option(
    "--temperature",
    default=0.0,
    show_default=True,
    type=float,
    help="0: greedy; above 0: sampled from softmax(logits / T).",
)
@click.option("--seed", default=0, show_default=True, type=int, help="The sampling seed.")
@click.option("--ignore-eos", is_flag=True, help="Generate max-new-tokens tokens past any EOS.")
@click.option(
    "--attention",
    metavar="PATTERN",
    help="full, window:W or block:S for every layer, instead of the config's.",
)
@click.option(
    "--dtype",
    type=click.Choice(["f32", "bf16"]),
    default="f32",
    show_default=True,
    help="The weights' storage: bf16 halves the bytes each token reads (products sum in f32).",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
@click.option(
    "--cache",
    metavar="DIR",
    help="The compiled-artifact cache (default: $PDG_CACHE or ~/.cache/pdg).",
)
def generate_command(
    model_dir: str,
    prompts: tuple[str, ...],
    token_ids: tuple[str, ...],
    max_new_tokens: int,
    temperature: float,
    seed: int,
    ignore_eos: bool,
    attention: str | None,
    dtype: str,
    output_format: str,
    cache: str | None,
) -> None:
    """Generate text with the Hugging Face model in MODEL_DIR (GPT-2, Llama,
    Mistral, Qwen2, Qwen3; safetensors weights)."""
    if prompts and token_ids:
        raise UserError("give prompts either as --prompt texts or as --token-ids, not both")
    if not prompts and not token_ids:
        raise UserError("give at least one --prompt TEXT or --token-ids 5,17,3")
    if max_new_tokens < 1:
        raise UserError(f"--max-new-tokens must be at least 1, got {max_new_tokens}")
    if not temperature >= 0 or temperature == float("inf"):
        raise UserError(f"--temperature must be 0 (greedy) or a positive number, got {temperature}")
    pattern = _attention(attention)
    ids = [_token_ids(text) for text in token_ids]

    from pdg.models import load
    from pdg.models.generate import Generator

    model = load(model_dir)
    if prompts:
        if model.tokenizer is None:
            raise UserError(
                f"{model_dir} has no tokenizer.json to tokenize --prompt with; "
                "give --token-ids instead"
            )
        ids = [model.tokenizer.encode(text) for text in prompts]
        for k, p in enumerate(ids):
            if not p:
                raise UserError(f"--prompt {prompts[k]!r} has no tokens once tokenized")
    generator = Generator(
        model,
        temperature=temperature,
        ignore_eos=ignore_eos,
        attention=pattern,
        cache=Path(cache) if cache else default_cache(),
        on_compile=lambda what: _compile_progress(what, model_dir),
        weight_dtype="bf16" if dtype == "bf16" else None,
    )
    for completion in generator.generate(ids, max_new_tokens, seed):
        if output_format == "json":
            record = {
                "prompt_token_ids": completion.prompt_ids,
                "token_ids": completion.token_ids,
                "text": completion.text,
                "finish_reason": completion.finish_reason,
            }
            click.echo(json.dumps(record, ensure_ascii=False))
        elif completion.text is not None:
            click.echo(completion.text)
        else:  # no tokenizer: the ids are the output
            click.echo(" ".join(map(str, completion.token_ids)))


@contextmanager
def _compile_progress(what, model_dir: str) -> Iterator[None]:
    """Says on stderr that the program is compiling, once it takes longer
    than a cache lookup: on a terminal a line redrawn with the seconds so
    far, elsewhere one line when it starts and one when it ends."""
    stream = sys.stderr
    live = stream.isatty()
    done = threading.Event()
    start = time.monotonic()
    shown: list[int] = []  # the length of the line on screen, once shown
    where = f" (cached in {what.cache})" if what.cache else ""

    def show() -> None:
        if done.wait(0.5):
            return  # a cache hit
        label = f"pdg: compiling the decode program for {model_dir}{where}"
        shown.append(len(label) + 12)
        if not live:
            click.echo(f"{label} ...", err=True)
            return
        while not done.wait(0.5):
            click.echo(f"\r{label}: {time.monotonic() - start:.0f} s", nl=False, err=True)

    thread = threading.Thread(target=show, name="pdg-compile-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown:
            seconds = time.monotonic() - start
            prefix = "\r" if live else ""
            line = f"pdg: compiled in {seconds:.1f} s"
            pad = " " * max(0, shown[0] - len(line)) if live else ""  # over the longer line
            click.echo(f"{prefix}{line}{pad}", err=True)
