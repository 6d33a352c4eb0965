"""Running the worker (worker.py) on an exported module, with a cache.

torch-mlir runs in a child process (its LLVM must never meet pdg's `mlir`
in one process) and answers with text IR and its op inventory. Imports are
cached by the export's key (export.py: the traced code, the weights' and
inputs' types, the versions), in memory and in a directory: a later
process importing the same module skips torch-mlir altogether.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import TorchImportError
from .export import Exported

WORKER = Path(__file__).with_name("worker.py")
TIMEOUT_S = 900

_MEMORY: dict[str, Imported] = {}


@dataclass(frozen=True)
class Imported:
    text: str  # the module, linalg on tensors, with locations
    ops: tuple[tuple[str, str], ...]  # (op name, MLIR location) of each op's first use


def default_cache_dir() -> Path:
    """$PDG_TORCH_IMPORT_CACHE, else ~/.cache/pdg/torch-import."""
    env = os.environ.get("PDG_TORCH_IMPORT_CACHE")
    if env:
        return Path(env)
    return Path(os.path.expanduser("~")) / ".cache" / "pdg" / "torch-import"


def import_exported(exported: Exported, cache_dir: Path | None) -> Imported:
    """The imported module of `exported`: from memory, the cache directory
    (None: no directory), or the worker."""
    key = exported.key
    path = None if cache_dir is None else Path(cache_dir) / f"{key}.json"
    if key in _MEMORY:
        if path is not None and not path.is_file():
            _write(path, _MEMORY[key])  # for the next process
        return _MEMORY[key]
    if path is not None and path.is_file():
        try:
            result = _read(path)
        except (OSError, ValueError, KeyError, TypeError):
            result = None  # a damaged entry is imported again
        if result is not None:
            _MEMORY[key] = result
            return result
    result = _run_worker(exported)
    if path is not None:
        _write(path, result)
    _MEMORY[key] = result
    return result


def _read(path: Path) -> Imported:
    with open(path) as f:
        data = json.load(f)
    return Imported(str(data["text"]), tuple((str(n), str(loc)) for n, loc in data["ops"]))


def _write(path: Path, result: Imported) -> None:
    """Atomically (a rename), so a concurrent reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"text": result.text, "ops": [list(o) for o in result.ops]}, f)
        os.replace(scratch, path)
    except BaseException:
        if os.path.exists(scratch):
            os.unlink(scratch)
        raise


def torch_mlir_missing() -> str | None:
    """Why torch-mlir cannot run here, or None (looked up without importing
    it: its LLVM must stay out of this process)."""
    if importlib.util.find_spec("torch_mlir") is None:
        return (
            "torch-mlir is not installed: pip install torch-mlir==20261001 (in pdg's test "
            "extra); its wheels exist for Linux x86_64 and CPython 3.11"
        )
    return None


def _run_worker(exported: Exported) -> Imported:
    import torch

    missing = torch_mlir_missing()
    if missing:
        raise TorchImportError(f"cannot import {exported.module_name}: {missing}")
    with tempfile.TemporaryDirectory(prefix="pdg-torch-import-") as tmp:
        tmp = Path(tmp)
        torch.export.save(exported.exported_program(), tmp / "program.pt2")
        request = {
            "program": str(tmp / "program.pt2"),
            "func_name": "main",
            "output": str(tmp / "out.json"),
            "error": str(tmp / "error.json"),
        }
        (tmp / "request.json").write_text(json.dumps(request))
        # -P: the worker's folder (pdg's sources) stays off its sys.path.
        try:
            proc = subprocess.run(
                [sys.executable, "-P", str(WORKER), str(tmp / "request.json")],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise TorchImportError(
                f"torch-mlir did not import {exported.module_name} within {TIMEOUT_S} s"
            ) from None
        if proc.returncode != 0:
            raise _worker_error(exported, tmp / "error.json", proc)
        return _read(tmp / "out.json")


# torch-mlir prints MLIR's diagnostics to stderr as `loc(...): error: ...`,
# where the location's first quoted file:line is the module's source line;
# its exception says only that a pipeline failed.
_DIAGNOSTIC = re.compile(r'^loc\((?:callsite\()?"([^"]+)":(\d+)[^)]*.*?: error: (.*)$')
_DEVELOPER_LINES = ("For Torch-MLIR developers", "$ torch-mlir-opt", "Add '-mlir-print")


def _diagnostics(stderr: str) -> list[str]:
    """MLIR's errors in the worker's stderr, as `file:line: message`."""
    found = []
    for line in stderr.splitlines():
        m = _DIAGNOSTIC.match(line.strip())
        if m and len(found) < 3:
            found.append(f"{Path(m.group(1)).name}:{m.group(2)}: {m.group(3)}")
    return found


def _for_developers(line: str) -> bool:
    """torch-mlir's instructions for reproducing with its own tools."""
    return line.strip().startswith(_DEVELOPER_LINES)


def _worker_error(exported: Exported, path: Path, proc) -> TorchImportError:
    if path.is_file():
        error = json.loads(path.read_text())
        detail = "\n".join([*_diagnostics(proc.stderr), f"{error['kind']}: {error['message']}"])
    else:  # the worker died before it could say why (a crash, killed)
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        detail = f"the worker process exited with {proc.returncode}\n{tail}"
    lines = [line for line in detail.splitlines() if line.strip() and not _for_developers(line)]
    lines = lines[:8]
    return TorchImportError(
        f"torch-mlir could not lower {exported.module_name} to linalg on tensors:\n  "
        + "\n  ".join(lines),
        hint="an aten op without a linalg lowering in torch-mlir; rewrite that part of the "
        "module with other torch ops",
    )
