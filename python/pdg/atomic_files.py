"""Replacing a file or a directory so that an interrupted writer (an
exception, Ctrl-C, kill -9, a full disk) never loses what was there.

A writer writes into a scratch path beside the target, in the same
directory (so a rename can move it), then moves it into place in one step:
`os.replace` for a file, an exchange of the two directory entries for a
directory (Linux renameat2(RENAME_EXCHANGE)), so that at every instant the
target holds either the complete old contents or the complete new ones.

Scratch names carry the writer's host and pid:

    .<target>~pdg-<kind>~<host>~<pid>~<token>

so that what a killed writer left behind is recognized, and removed by the
next writer into the same directory once that pid is no longer alive on
this host (never another host's: a shared directory may hold a live
writer's scratch from elsewhere). Kinds: `scratch` (being written, or the
old contents after an exchange: removed), `old` (the old contents moved
aside where no exchange exists: put back if the target is missing)."""

from __future__ import annotations

import ctypes
import errno
import os
import re
import secrets
import shutil
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pdg.interrupts import check_interrupts

SCRATCH = "scratch"
OLD = "old"

_NAME = re.compile(
    r"^\.(?P<target>.+)~pdg-(?P<kind>scratch|old)~(?P<host>[^~]*)~(?P<pid>\d+)~[0-9a-f]+$"
)

# Test-only: with PDG_TEST_PAUSE_AT=<point>, the process stops at that named
# point of a write (after saying so on stderr) until it is killed, so that
# the fault-injection tests kill it at a known instant. Unset: no effect.
PAUSE_ENV = "PDG_TEST_PAUSE_AT"


def pause_for_tests(point: str) -> None:
    if os.environ.get(PAUSE_ENV) == point:
        sys.stderr.write(f"pdg: test pause at {point}\n")
        sys.stderr.flush()
        while True:  # a SIGINT deferred by a compile is taken here
            time.sleep(0.05)
            check_interrupts()


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())


def scratch_path(target: Path, kind: str = SCRATCH) -> Path:
    """A fresh name beside `target` for this process to write into."""
    token = secrets.token_hex(4)
    return target.with_name(f".{target.name}~pdg-{kind}~{_host()}~{os.getpid()}~{token}")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def clean_stale(directory: Path) -> list[Path]:
    """Removes what writers that died left in `directory` (pid not alive on
    this host); a target moved aside and never replaced is put back. Returns
    the leftovers it found."""
    found = []
    try:
        entries = list(Path(directory).iterdir())
    except OSError:  # not there (yet) or unreadable: nothing to clean
        return found
    host = _host()
    for entry in entries:
        m = _NAME.match(entry.name)
        if not m or m["host"] != host or _alive(int(m["pid"])):
            continue
        found.append(entry)
        target = entry.with_name(m["target"])
        if m["kind"] == OLD and not os.path.lexists(target):
            try:
                os.rename(entry, target)
                continue
            except OSError:
                pass
        _remove(entry)
    return found


def discard(path: Path) -> None:
    """Removes `path` (a file or a directory tree) so that no reader or
    writer ever sees part of it: it is renamed aside first."""
    aside = scratch_path(path)
    try:
        os.rename(path, aside)
    except FileNotFoundError:  # already gone (another process discarded it)
        return
    _remove(aside)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2():
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not glibc >= 2.28 (or not Linux)
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    function.restype = ctypes.c_int
    return function


_EXCHANGE = _renameat2() if sys.platform.startswith("linux") else None


def exchange(a: Path, b: Path) -> bool:
    """Swaps the entries `a` and `b` in one step; False where the system or
    the file system cannot (then nothing changed)."""
    if _EXCHANGE is None:
        return False
    if _EXCHANGE(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def replace_directory(scratch: Path, target: Path, may_replace: Callable[[Path], None]) -> None:
    """Moves the complete directory `scratch` to `target`, replacing what
    `target` held; `may_replace(target)` raises where that must not be
    replaced. Removes the old contents afterwards."""
    for _ in range(2):
        may_replace(target)
        if not os.path.lexists(target):
            try:
                os.rename(scratch, target)  # replaces at most an empty directory
                return
            except OSError as e:
                if e.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                    raise
                continue  # another writer got there first: replace its copy
        if exchange(scratch, target):
            pause_for_tests("directory-exchanged")
            _remove(scratch)  # now the old contents
            return
        # No exchange here: the old contents are moved aside under a name
        # that the next writer recognizes and puts back if we die before
        # the new ones are in place.
        aside = scratch_path(target, OLD)
        os.rename(target, aside)
        try:
            os.rename(scratch, target)
        except BaseException:
            os.rename(aside, target)
            raise
        _remove(aside)
        return
    raise FileExistsError(errno.EEXIST, "kept being recreated while replacing it", str(target))


def fsync_directory(directory: Path) -> None:
    """Makes a rename in `directory` durable (where the system allows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
