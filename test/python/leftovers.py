"""Helpers for the tests of interrupted writes: a pid that is dead, and a
leftover named as pdg.atomic_files names a writer's scratch."""

from __future__ import annotations

import subprocess
import sys

from pdg import atomic_files


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    return int(done.stdout)


def leftover_name(target: str, kind: str, pid: int, host: str | None = None) -> str:
    """The name writer `pid` of `host` (default: this one) gives its scratch."""
    host = atomic_files._host() if host is None else host
    return f".{target}~pdg-{kind}~{host}~{pid}~0123abcd"


def leftover(directory, target: str, kind: str, pid: int, host: str | None = None):
    """A scratch directory left by writer `pid` of `host`."""
    path = directory / leftover_name(target, kind, pid, host)
    path.mkdir()
    (path / "x").write_text(kind)
    return path
