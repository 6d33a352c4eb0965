"""Reading and writing a checkpoint's tensors: `model.safetensors`, or
shards listed by `model.safetensors.index.json`, through the `safetensors`
library (memory-mapped files, read one tensor at a time).

Each tensor becomes pdg's float32 parameter as it is read: bf16 and f16
are converted tensor by tensor, so loading never holds a second full copy
of the model (the peak is the float32 weights plus one tensor). bf16 reads
through NumPy need `ml_dtypes` (imported here: it registers the type).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from pdg.nn.decoder import DecoderConfig

from . import layout as layouts
from .errors import ModelError

SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
# Checkpoint dtypes pdg reads (others, e.g. quantized integers, are refused).
FLOATS = ("F32", "F16", "BF16", "F64")


def require(module: str):
    """Imports one of the `models` extra's libraries, or says how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ModelError(
            f"reading Hugging Face models needs the '{module}' package: install pdg's models "
            "extra (pip install 'pdg[models]')"
        ) from None


def weight_files(directory: Path) -> dict[str, Path]:
    """Tensor name -> the file that holds it, from the index of a sharded
    checkpoint or the one model.safetensors."""
    index = directory / INDEX
    if index.is_file():
        data = _read_json(index)
        weight_map = data.get("weight_map") if isinstance(data, dict) else None
        if not isinstance(weight_map, dict) or not weight_map:
            raise ModelError(f"{index}: the key 'weight_map' is missing or empty")
        out = {}
        for name, file in weight_map.items():
            if not isinstance(file, str) or Path(file).name != file or file in ("", ".", ".."):
                raise ModelError(
                    f"{index}: 'weight_map' gives tensor '{name}' the file {file!r}, which is "
                    "not a file name in this directory"
                )
            path = directory / file
            if not path.is_file():
                raise ModelError(
                    f"{index}: 'weight_map' puts tensor '{name}' in {file}, which is missing "
                    f"from {directory}"
                )
            out[name] = path
        return out
    single = directory / SINGLE
    if single.is_file():
        with _open(single) as f:
            return dict.fromkeys(f.keys(), single)
    other = [
        n for n in ("pytorch_model.bin", "model.bin", "tf_model.h5") if (directory / n).exists()
    ]
    hint = (
        f" (it has {other[0]}: pdg reads safetensors only; save the model with "
        "save_pretrained(..., safe_serialization=True))"
        if other
        else ""
    )
    raise ModelError(f"{directory}: no {SINGLE} and no {INDEX}{hint}")


def read_weights(directory: Path, config: DecoderConfig, layout: str) -> dict[str, np.ndarray]:
    """pdg's float32 weights by path from the checkpoint in `directory`."""
    files = weight_files(directory)
    layouts.rules(config, layout)  # an unknown layout fails before any file opens
    extra = layouts.unused(files, config, layout)
    if extra:
        shown = ", ".join(extra[:4]) + (", ..." if len(extra) > 4 else "")
        raise ModelError(
            f"{files[extra[0]]}: tensors the config's model does not have: {shown} (does "
            "config.json describe this checkpoint?)"
        )
    with ExitStack() as stack:
        opened: dict[Path, object] = {}

        def fetch(name: str) -> np.ndarray:
            path = files[name]
            if path not in opened:
                opened[path] = stack.enter_context(_open(path))
            f = opened[path]
            if name not in f.keys():
                raise ModelError(f"{path}: no tensor '{name}' (the index puts it in this file)")
            kind = f.get_slice(name).get_dtype()
            if kind not in FLOATS:
                raise ModelError(
                    f"{path}: tensor '{name}' is {kind}; pdg reads {', '.join(FLOATS)} tensors "
                    "(a quantized checkpoint needs dequantizing first)"
                )
            if kind == "BF16":
                require("ml_dtypes")
            try:
                return f.get_tensor(name)
            except Exception as e:  # a file cut short or damaged
                raise ModelError(f"{path}: cannot read tensor '{name}': {e}") from None

        # A tensor the checkpoint lacks: the file that lists them says so.
        listing = directory / INDEX if (directory / INDEX).is_file() else directory / SINGLE
        return layouts.convert(
            config, layout, files, fetch, lambda name: str(files.get(name, listing))
        )


def write_weights(
    directory: Path,
    tensors: Mapping[str, np.ndarray],
    max_shard_bytes: int | None = None,
) -> list[str]:
    """Writes `tensors` (Hugging Face names) as model.safetensors, or as
    shards of at most `max_shard_bytes` each (a tensor larger than that
    gets a shard of its own) with model.safetensors.index.json. Returns the
    files written."""
    numpy_io = require("safetensors.numpy")
    metadata = {"format": "pt"}  # what transformers expects of a checkpoint
    total = sum(int(a.nbytes) for a in tensors.values())
    if max_shard_bytes is None or total <= max_shard_bytes:
        numpy_io.save_file(dict(tensors), str(directory / SINGLE), metadata=metadata)
        return [SINGLE]
    shards: list[dict] = [{}]
    size = 0
    for name in sorted(tensors):
        array = tensors[name]
        if shards[-1] and size + array.nbytes > max_shard_bytes:
            shards.append({})
            size = 0
        shards[-1][name] = array
        size += array.nbytes
    names, weight_map = [], {}
    for k, shard in enumerate(shards):
        file = f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
        numpy_io.save_file(shard, str(directory / file), metadata=metadata)
        names.append(file)
        weight_map.update(dict.fromkeys(shard, file))
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (directory / INDEX).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return [*names, INDEX]


def _open(path: Path):
    safetensors = require("safetensors")
    try:
        return safetensors.safe_open(os.fspath(path), framework="numpy")
    except Exception as e:  # SafetensorError: a header that does not parse, a short file
        raise ModelError(f"{path}: not a readable safetensors file ({e})") from None


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ModelError(f"cannot read {path}: {e.strerror}") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise ModelError(f"{path}: not valid JSON ({e})") from None
