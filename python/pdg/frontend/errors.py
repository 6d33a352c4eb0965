"""Errors in user programs, reported at the user's own source line.

Frontend objects remember where the user created them (`SourceLoc`); a
mistake raises `ProgramError` naming that file and line, never an MLIR
internals message.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class SourceLoc:
    filename: str
    line: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}"

    def mlir(self) -> str:
        """As an MLIR location attribute."""
        name = self.filename.replace("\\", "\\\\").replace('"', '\\"')
        return f'loc("{name}":{self.line}:1)'


# Set by fixed_location(): the location of everything built meanwhile.
_FIXED: ContextVar[SourceLoc | None] = ContextVar("pdg_fixed_location", default=None)


@contextmanager
def fixed_location(loc: SourceLoc) -> Iterator[None]:
    """Everything built inside the block is located at `loc`, not at the
    user's line: for programs pdg builds on the user's behalf (a trainer's),
    whose text, and so whose compiled-artifact cache key, must not depend
    on the script that asked for them."""
    token = _FIXED.set(loc)
    try:
        yield
    finally:
        _FIXED.reset(token)


def user_location() -> SourceLoc:
    """The innermost stack frame outside the pdg package: the user's line."""
    fixed = _FIXED.get()
    if fixed is not None:
        return fixed
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        # Skip pdg's own frames and generated code (dataclass __init__: <string>).
        if not name.startswith("<") and not os.path.abspath(name).startswith(_PACKAGE_DIR + os.sep):
            return SourceLoc(name, frame.f_lineno)
        frame = frame.f_back
    return SourceLoc("<unknown>", 0)


class ProgramError(Exception):
    """A mistake in a pdg program, located at the user's source line."""

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str = ""):
        self.loc = loc or user_location()
        self.message = message
        self.hint = hint
        text = f"{self.loc}: error: {message}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)
