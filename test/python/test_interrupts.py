"""SIGINT during a compile is taken between phases (pdg.interrupts): raised
inside MLIR's C++ (which calls back into Python) it would abort the process."""

from __future__ import annotations

import os
import signal

import pytest
from pdg.interrupts import check_interrupts, deferred_interrupts


def test_sigint_waits_for_the_next_check():
    reached = []
    with pytest.raises(KeyboardInterrupt), deferred_interrupts() as interrupts:
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt here ...
        reached.append("after the signal")
        interrupts.check()  # ... but here
        reached.append("after the check")
    assert reached == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_sigint_not_checked_is_raised_at_the_end():
    with pytest.raises(KeyboardInterrupt), deferred_interrupts():
        os.kill(os.getpid(), signal.SIGINT)
        check_interrupts.__doc__  # noqa: B018 (pure Python: nothing raised yet)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_failure_after_a_sigint_is_the_interrupt():
    """A native tool that Ctrl-C stopped fails its phase: the user asked to
    stop, so that is what is raised."""
    with pytest.raises(KeyboardInterrupt), deferred_interrupts():
        os.kill(os.getpid(), signal.SIGINT)
        raise RuntimeError("opt failed")


def test_without_a_sigint_nothing_changes():
    with deferred_interrupts() as interrupts:
        interrupts.check()
        check_interrupts()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
