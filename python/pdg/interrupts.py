"""Ctrl-C while compiling: taken at the end of a phase, not inside one.

The compiler's phases call into MLIR's C++, which calls back into Python
(passes written in Python, diagnostic handlers, attribute builders). A
KeyboardInterrupt raised inside such a callback cannot unwind through the
C++ frames: the process aborts. So while a compile runs, SIGINT only
records that it came, and `check()` at each phase's end raises it. A
native tool (opt, llc) that the terminal's Ctrl-C stops fails its phase,
and the interrupt is raised instead of that failure."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Deferred:
    def __init__(self) -> None:
        self.pending = False
        _ACTIVE.append(self)

    def check(self) -> None:
        """Raises KeyboardInterrupt if SIGINT came since the last check."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


_ACTIVE: list[Deferred] = []  # innermost last


def check_interrupts() -> None:
    """At a point where pure Python runs (a wait): raises a SIGINT that the
    innermost deferral recorded."""
    if _ACTIVE:
        _ACTIVE[-1].check()


@contextmanager
def deferred_interrupts() -> Iterator[Deferred]:
    """SIGINT recorded, not raised, inside the block (main thread only, and
    only in place of Python's default handler); raised at the block's end
    if `check()` did not raise it."""
    deferred = Deferred()
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        try:
            yield deferred
        finally:
            _ACTIVE.remove(deferred)
        return

    def record(signum, frame) -> None:
        deferred.pending = True

    signal.signal(signal.SIGINT, record)
    try:
        yield deferred
    except BaseException:
        if deferred.pending:
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _ACTIVE.remove(deferred)
    deferred.check()
