"""What pdg's command lines share: the user-error type, NAME=INT symbol
parsing, and an entry point that turns every failure into one line on
stderr and exit code 1 (never a traceback for a user mistake), and Ctrl-C
into exit code 130."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click


class UserError(Exception):
    """A mistake in the command line or its files: one message, exit code 1."""


def parse_symbols(items: tuple[str, ...], option: str) -> dict[str, int]:
    """`("B=1,T=4096", "N=3")` -> {"B": 1, "T": 4096, "N": 3}."""
    symbols: dict[str, int] = {}
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            name, eq, value = part.partition("=")
            if not eq or not name.strip():
                raise UserError(f"{option} takes NAME=INT[,NAME=INT], got '{part}'")
            try:
                symbols[name.strip()] = int(value)
            except ValueError:
                raise UserError(f"{option} {name.strip()}: '{value}' is not an integer") from None
    return symbols


def run_command(
    command: click.Command,
    args: list[str],
    prog: str,
    user_errors: Callable[[], tuple[type[BaseException], ...]] | tuple = (),
) -> int:
    """Runs a click command; every failure becomes `prog: error: ...` and
    exit code 1, Ctrl-C `prog: interrupted` and exit code 130. Our own bugs
    print one line too, unless PDG_TRACEBACK is set (the fuzzer sets it to
    see them). `user_errors`: the exception types that are the user's
    mistakes, or a function that imports them (then a Ctrl-C while those
    imports load native extensions waits until they are loaded)."""
    errors: tuple = ()
    try:
        with _interrupts_held():
            errors = user_errors() if callable(user_errors) else user_errors
        # Without standalone mode, click returns ctx.exit()'s code.
        rc = command.main(args=args, prog_name=prog, standalone_mode=False)
        return rc if isinstance(rc, int) else 0
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        click.echo(f"{prog}: error: {e.format_message()}", err=True)
        return 1
    except (UserError, *errors) as e:
        click.echo(f"{prog}: error: {e}", err=True)
        return 1
    except click.exceptions.Abort as e:
        # Outside standalone mode click turns Ctrl-C, and an EOFError that
        # escaped the command, into Abort (after printing a blank line).
        if isinstance(e.__cause__, EOFError):
            return _internal_error(prog, e.__cause__)
        return _interrupted(prog)
    except KeyboardInterrupt:
        return _interrupted(prog)
    except BrokenPipeError:
        # Output piped into a closed reader (`| head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as e:
        return _internal_error(prog, e)


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Holds Ctrl-C back until the block ends, then raises it: a
    KeyboardInterrupt raised while a native extension (MLIR, isl)
    initializes aborts the whole process instead of unwinding."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    if received:
        raise KeyboardInterrupt


def _interrupted(prog: str) -> int:
    """Ctrl-C: what was being written is left as it was (pdg's writers
    replace files and artifacts in one step); 130 as for a shell's SIGINT."""
    click.echo(f"{prog}: interrupted", err=True)
    return 130


def _internal_error(prog: str, error: BaseException) -> int:
    if os.environ.get("PDG_TRACEBACK"):
        raise error
    click.echo(
        f"{prog}: internal error: {type(error).__name__}: {error} "
        "(set PDG_TRACEBACK=1 for details, and please report it)",
        err=True,
    )
    return 1
