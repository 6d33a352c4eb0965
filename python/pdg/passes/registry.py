"""The registry of pdg's Python passes.

Upstream MLIR passes are named in textual pipelines; Python passes cannot be
(the bindings only run them at the top level), so pdg-opt looks their names
up here and runs them between upstream pipeline segments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir


class PassError(Exception):
    """A pass found the input unfit; reported at `location` with a hint.
    `reported`: the pass already emitted located diagnostics itself."""

    def __init__(self, message: str, location: ir.Location | None = None, reported: bool = False):
        super().__init__(message)
        self.location = location
        self.reported = reported


@dataclass(frozen=True)
class PdgPass:
    name: str
    summary: str
    run: Callable[[ir.Module], None]


_PASSES: dict[str, PdgPass] = {}


def register(name: str, summary: str):
    """Decorator: registers `fn(module)` as the pass `name`."""

    def wrap(fn: Callable[[ir.Module], None]) -> Callable[[ir.Module], None]:
        if name in _PASSES:
            raise ValueError(f"pass {name!r} is registered twice")
        _PASSES[name] = PdgPass(name, summary, fn)
        return fn

    return wrap


def get_pass(name: str) -> PdgPass | None:
    return _PASSES.get(name)


def registered_passes() -> list[PdgPass]:
    return sorted(_PASSES.values(), key=lambda p: p.name)
