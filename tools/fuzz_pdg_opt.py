"""Mutation fuzzer for `pdg-opt`: it must survive any input.

`pdg-opt` promises to exit 0 (success) or 1 (a user error, reported as
`file:line:col: error: ...`) whatever it is given. The MLIR build underneath
has assertions enabled, so a malformed attribute, a dangling reference or an
overflowing integer that slips past a parser or verifier usually shows up as
an abort, a segfault or a Python traceback rather than as a wrong answer.
This tool looks for such inputs:

1. Seeds: every `*.mlir` under `test/` and `examples/` (or `--seeds-dir`),
   cut at `// -----` lines like `--split-input-file`, comments removed, plus
   the generic form of those that pdg-opt accepts (the generic syntax spells
   out attributes and properties that the custom syntax keeps out of reach).
2. Mutants: each applies 1 to 4 random mutations to a random seed; about 70%
   are token-level (delete, duplicate or swap tokens, interesting integers,
   names and punctuation replaced, lines dropped, duplicated or spliced in
   from another seed), which keep the input close enough to valid IR to reach
   the verifiers and passes, and 30% byte-level (bit flips, random or
   non-UTF-8 bytes, deletions, truncation). Mutant `i` of `--seed S` depends
   on S and i only, so a run is reproducible and its prefix is stable.
3. Runs: every mutant goes through each mode in turn: `plain` (parse, verify,
   print), `canon` (`--canonicalize --pdg-dce`) and `generic`
   (`--mlir-print-op-generic`, whose output must then parse again).
4. A run fails when pdg-opt dies of a signal, exits with a code other than 0
   or 1, prints a Python traceback or an LLVM fatal error, exits 1 without
   saying why, exceeds the timeout, or (in `generic` mode) prints generic IR
   that it then rejects.

Hangs: a worker that does not answer is first sent SIGUSR1, on which
faulthandler prints where it is stuck, then killed.

Speed: starting Python and importing MLIR for each run would cost more than
the run itself, so every job slot keeps a persistent worker process (this
file with `--worker`) that imports pdg once and calls `pdg.cli.opt.main` in a
loop, with its output captured. A worker serves one request at a time, so a
worker that dies mid-request crashed on that request's input; a worker that
does not answer within the timeout is killed. Either way it is restarted for
the next request. Every failure is then re-run in a fresh `pdg-opt` process to
check that it does not depend on the worker's history, saved to the output
directory and, with `--minimize`, shrunk by delta debugging while it keeps
failing the same way.

    python tools/fuzz_pdg_opt.py --seed 1 --mutants 500 [--jobs 2] [--out DIR] [--time-limit S]
    python tools/fuzz_pdg_opt.py --replay crash.mlir --modes canon --minimize

Exit status: 0 when nothing failed, 1 when something did, 2 on a setup
problem (no seeds, a worker that cannot start).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import io
import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SEED_DIRS = (REPO / "test", REPO / "examples")
DEFAULT_ENTRY = "pdg.cli.opt:main"
SAVED_PER_FAILURE = 5  # inputs written per distinct failure
CONFIRM_ATTEMPTS = 3  # fresh runs that try to reproduce a failure
STACK_DUMP_WAIT = 0.5  # seconds a hung run gets to print its stack before it is killed

# ---------------------------------------------------------------------------
# Seeds and tokens
# ---------------------------------------------------------------------------

_SPLIT_MARKER = re.compile(rb"^[ \t]*// -----[ \t]*\r?$", re.MULTILINE)

# A rough MLIR lexer over bytes: good enough to find tokens worth mutating,
# and total (every byte belongs to exactly one token), so joining the tokens
# gives the input back.
_TOKEN = re.compile(
    rb"""
      (?P<ws>\s+)
    | (?P<comment>//[^\n]*)
    | (?P<string>"(?:[^"\\\n]|\\.)*"?)
    | (?P<number>0x[0-9A-Fa-f]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)
    | (?P<name>[%@^#!](?:[A-Za-z0-9_$.\-]+|"(?:[^"\\\n]|\\.)*")?)
    | (?P<punct>x(?=[0-9?])|->|\.\.\.|::|[()\[\]{}<>,:=+\-*/?|.])
    | (?P<word>[A-Za-z_][A-Za-z0-9_$.]*)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)

Token = tuple[str, bytes]  # (kind, text); kind is a group name of _TOKEN


def tokenize(data: bytes) -> list[Token]:
    """Splits `data` into tokens, whitespace and comments included."""
    return [(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(data)]


def _significant(tokens: Sequence[Token]) -> list[int]:
    return [i for i, (kind, _) in enumerate(tokens) if kind not in ("ws", "comment")]


@dataclass(frozen=True)
class Seed:
    """One `// -----` chunk of a seed file, comments removed."""

    origin: str  # `path` or `path#chunk`, relative to the repository if inside it
    data: bytes


def _strip_comments(data: bytes) -> bytes:
    kept = b"".join(text for kind, text in tokenize(data) if kind != "comment")
    lines = [line.rstrip() for line in kept.split(b"\n")]
    return b"\n".join(line for line in lines if line) + b"\n"


def load_seeds(dirs: Iterable[Path]) -> list[Seed]:
    """Every non-empty chunk of every `*.mlir` file under `dirs`, in a fixed order."""
    seeds: list[Seed] = []
    for root in dirs:
        files = [root] if root.is_file() else sorted(root.rglob("*.mlir"))
        for path in files:
            if "Output" in path.relative_to(root).parts[:-1]:  # lit's scratch files
                continue
            try:
                name = str(path.resolve().relative_to(REPO))
            except ValueError:
                name = str(path)
            chunks = _SPLIT_MARKER.split(path.read_bytes())
            for k, chunk in enumerate(chunks):
                data = _strip_comments(chunk)
                if _significant(tokenize(data)):
                    origin = name if len(chunks) == 1 else f"{name}#{k}"
                    seeds.append(Seed(origin, data))
    return seeds


# ---------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------

# Boundaries of int32/int64 and beyond, hex forms, floats where ints are due.
INTERESTING_NUMBERS: tuple[bytes, ...] = (
    tuple(
        str(n).encode()
        for n in (0, -1, 1, 2, -2, 3, 16, 255, 256, 65536, 2**31 - 1, 2**31, -(2**31), 2**32)
    )
    + tuple(str(n).encode() for n in (2**63 - 1, 2**63, -(2**63), 2**64, 10**30))
    + tuple(b"0x7FFFFFFF 0xFFFFFFFFFFFFFFFF 0x7FC00000 1.5 -0.0 1e309".split())
)
PUNCTUATION: tuple[bytes, ...] = tuple(
    b"( ) [ ] { } < > , : = -> + - * / ? x ... :: % @ # ! ^".split()
)
NON_UTF8: tuple[bytes, ...] = (b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80")
SPECIAL_BYTES: tuple[bytes, ...] = (b"\x00", b"\n", b"\t", b'"', b"\\") + tuple(
    b"{ } ( ) < > % ^ #".split()
)
TOKEN_LEVEL_SHARE = 0.7
MUTATION_COUNT_WEIGHTS = (45, 30, 15, 10)  # of applying 1, 2, 3 or 4 mutations


@dataclass
class MutationContext:
    """What a mutation may draw on besides the input: the other seeds."""

    seeds: Sequence[Seed]
    seed_lines: Sequence[Sequence[bytes]]  # the non-blank lines of each seed


# A mutation returns the mutated input and a short description, or None when
# it does not apply (say, no integer to replace).
Mutation = Callable[[Random, bytes, MutationContext], "tuple[bytes, str] | None"]


def _join(tokens: Sequence[Token]) -> bytes:
    return b"".join(text for _, text in tokens)


def _pick_token(
    rng: Random, tokens: Sequence[Token], kinds: Iterable[str] | None = None
) -> int | None:
    wanted = set(kinds) if kinds is not None else None
    indices = [i for i in _significant(tokens) if wanted is None or tokens[i][0] in wanted]
    return rng.choice(indices) if indices else None


def mutate_delete_token(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    tokens = tokenize(data)
    i = _pick_token(rng, tokens)
    if i is None:
        return None
    return _join(tokens[:i] + tokens[i + 1 :]), f"delete token {tokens[i][1]!r}"


def mutate_duplicate_token(
    rng: Random, data: bytes, _: MutationContext
) -> tuple[bytes, str] | None:
    tokens = tokenize(data)
    i = _pick_token(rng, tokens)
    if i is None:
        return None
    kind, text = tokens[i]
    sep = b"" if kind == "punct" else b" "
    return _join(tokens[: i + 1] + [("ws", sep), (kind, text)] + tokens[i + 1 :]), (
        f"duplicate token {text!r}"
    )


def mutate_swap_tokens(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    tokens = tokenize(data)
    sig = _significant(tokens)
    if len(sig) < 2:
        return None
    a = rng.randrange(len(sig))
    if rng.random() < 0.6:  # mostly neighbours: keeps the rest of the line parseable
        b = min(len(sig) - 1, max(0, a + rng.choice((-3, -2, -1, 1, 2, 3))))
    else:
        b = rng.randrange(len(sig))
    if a == b:
        return None
    i, j = sig[a], sig[b]
    tokens[i], tokens[j] = tokens[j], tokens[i]
    return _join(tokens), f"swap tokens {tokens[j][1]!r} and {tokens[i][1]!r}"


def mutate_number(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    tokens = tokenize(data)
    i = _pick_token(rng, tokens, ["number"])
    if i is None:
        return None
    old = tokens[i][1]
    roll = rng.random()
    if roll < 0.75 or not old.isdigit():
        new = rng.choice(INTERESTING_NUMBERS)
    else:  # near the original: off-by-one bugs and sign flips
        value = int(old)
        new = str(rng.choice((value + 1, value - 1, -value, value * 2))).encode()
    tokens[i] = ("number", new)
    return _join(tokens), f"number {old!r} -> {new!r}"


def mutate_name(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    """Replaces a name (`%x`, `@b`, `!tok`, `^bb0`, `#map`) or a bare word
    (`pdg.node`, `launch`, `f32`) by another one of the same input."""
    tokens = tokenize(data)
    i = _pick_token(rng, tokens, ["name", "word"])
    if i is None:
        return None
    kind, old = tokens[i]
    same_kind = sorted({t for k, t in tokens if k == kind and t != old})
    if kind == "name":
        same_sigil = [t for t in same_kind if t[:1] == old[:1]]
        if same_sigil and rng.random() < 0.8:
            same_kind = same_sigil
    if not same_kind:
        return None
    new = rng.choice(same_kind)
    tokens[i] = (kind, new)
    return _join(tokens), f"name {old!r} -> {new!r}"


def mutate_punctuation(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    tokens = tokenize(data)
    i = _pick_token(rng, tokens, ["punct"])
    if i is None:
        return None
    old = tokens[i][1]
    new = rng.choice([p for p in PUNCTUATION if p != old])
    tokens[i] = ("punct", new)
    return _join(tokens), f"punctuation {old!r} -> {new!r}"


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def mutate_drop_line(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    lines = _lines(data)
    if len(lines) < 2:
        return None
    i = rng.randrange(len(lines))
    return b"".join(lines[:i] + lines[i + 1 :]), f"drop line {i + 1}"


def mutate_duplicate_line(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    lines = _lines(data)
    if not lines:
        return None
    i = rng.randrange(len(lines))
    j = i + 1 if rng.random() < 0.6 else rng.randrange(len(lines) + 1)
    line = lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n"
    return b"".join(lines[:j] + [line] + lines[j:]), f"duplicate line {i + 1} at {j + 1}"


def mutate_splice_line(rng: Random, data: bytes, ctx: MutationContext) -> tuple[bytes, str] | None:
    donor = rng.randrange(len(ctx.seeds))
    donor_lines = ctx.seed_lines[donor]
    if not donor_lines:
        return None
    line = rng.choice(donor_lines)
    lines = _lines(data)
    j = rng.randrange(len(lines) + 1)
    if rng.random() < 0.3 and j < len(lines):  # replace rather than insert
        return b"".join(lines[:j] + [line] + lines[j + 1 :]), (
            f"replace line {j + 1} by a line of {ctx.seeds[donor].origin}"
        )
    return b"".join(lines[:j] + [line] + lines[j:]), (
        f"insert at line {j + 1} a line of {ctx.seeds[donor].origin}"
    )


def mutate_flip_bit(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    if not data:
        return None
    i = rng.randrange(len(data))
    bit = 1 << rng.randrange(8)
    return data[:i] + bytes([data[i] ^ bit]) + data[i + 1 :], f"flip bit {bit:#x} of byte {i}"


def mutate_insert_bytes(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    i = rng.randrange(len(data) + 1)
    if rng.random() < 0.5:
        new = b"".join(rng.choice(SPECIAL_BYTES) for _ in range(rng.randint(1, 3)))
    else:
        new = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    return data[:i] + new + data[i:], f"insert bytes {new!r} at {i}"


def mutate_non_utf8(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    i = rng.randrange(len(data) + 1)
    new = rng.choice(NON_UTF8)
    return data[:i] + new + data[i:], f"insert non-UTF-8 {new!r} at {i}"


def mutate_delete_bytes(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    if not data:
        return None
    i = rng.randrange(len(data))
    n = rng.randint(1, 8)
    return data[:i] + data[i + n :], f"delete {n} bytes at {i}"


def mutate_truncate(rng: Random, data: bytes, _: MutationContext) -> tuple[bytes, str] | None:
    if len(data) < 2:
        return None
    i = rng.randrange(1, len(data))
    return data[:i], f"truncate at byte {i}"


TOKEN_MUTATIONS: tuple[Mutation, ...] = (
    mutate_delete_token,
    mutate_duplicate_token,
    mutate_swap_tokens,
    mutate_number,
    mutate_number,
    mutate_name,
    mutate_name,
    mutate_punctuation,
    mutate_drop_line,
    mutate_duplicate_line,
    mutate_splice_line,
)  # numbers and names twice: they reach the verifiers most often
BYTE_MUTATIONS: tuple[Mutation, ...] = (
    mutate_flip_bit,
    mutate_insert_bytes,
    mutate_non_utf8,
    mutate_delete_bytes,
    mutate_truncate,
)


@dataclass(frozen=True)
class Mutant:
    """A seed with mutations applied (none for `--replay` inputs)."""

    index: int
    seed: Seed
    data: bytes
    mutations: tuple[str, ...]


def make_mutant(seeds: Sequence[Seed], ctx: MutationContext, fuzz_seed: int, index: int) -> Mutant:
    """Mutant `index` of run `fuzz_seed`: for given seeds, a function of those
    two numbers only (not of the other mutants)."""
    rng = Random(f"pdg-fuzz:{fuzz_seed}:{index}")
    seed = rng.choice(seeds)
    data, applied = seed.data, []
    # Fewer mutations keep more mutants valid enough to reach the verifiers.
    for _ in range(rng.choices((1, 2, 3, 4), weights=MUTATION_COUNT_WEIGHTS)[0]):
        for _attempt in range(8):  # retry when the drawn mutation does not apply
            family = TOKEN_MUTATIONS if rng.random() < TOKEN_LEVEL_SHARE else BYTE_MUTATIONS
            result = rng.choice(family)(rng, data, ctx)
            if result is not None and result[0] != data:
                data = result[0]
                applied.append(result[1])
                break
    return Mutant(index, seed, data, tuple(applied))


def make_mutants(seeds: Sequence[Seed], fuzz_seed: int, count: int) -> list[Mutant]:
    ctx = MutationContext(seeds, [[ln for ln in _lines(s.data) if ln.strip()] for s in seeds])
    return [make_mutant(seeds, ctx, fuzz_seed, i) for i in range(count)]


# ---------------------------------------------------------------------------
# Modes and outcomes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mode:
    name: str
    flags: tuple[str, ...]
    reparse: bool  # parse the printed output again (it must be accepted)


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("plain", (), False),
        Mode("canon", ("--canonicalize", "--pdg-dce"), False),
        Mode("generic", ("--mlir-print-op-generic",), True),
        # The whole-graph passes: isl analyses and the C++ rewrites.
        Mode(
            "passes",
            (
                "--pdg-dedup",
                "--pdg-incrementalize",
                "--pdg-contract-reductions",
                "--pdg-fuse",
                "--pdg-plan-storage",
                "--pdg-schedule",
            ),
            False,
        ),
        # The lowering: stores, loops, bufferized bodies; in the compiler's
        # order (the storage plan reads the schedule; `vectorize` plans first).
        Mode("lower", ("--pdg-schedule", "--pdg-plan-storage", "--pdg-lower-to-loops"), True),
        # Batching first, then the lowering of the batched graph.
        Mode(
            "vectorize",
            ("--pdg-vectorize", "--pdg-plan-storage", "--pdg-schedule", "--pdg-lower-to-loops"),
            True,
        ),
    )
}


@dataclass
class RunResult:
    """How one pdg-opt invocation ended."""

    rc: int | None = None  # exit code; None when killed or when the worker vanished
    signal: int | None = None
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""


_FATAL_MARKERS = ("LLVM ERROR:", "UNREACHABLE executed", "PLEASE submit a bug report")


def failure_kind(result: RunResult) -> str | None:
    """Why `result` breaks pdg-opt's contract, or None when it keeps it."""
    if result.timed_out:
        return "timeout"
    if result.signal is not None:
        try:
            return f"signal {signal.Signals(result.signal).name}"
        except ValueError:
            return f"signal {result.signal}"
    if result.rc is None:
        return "process exited mid-run"
    if result.rc not in (0, 1):
        return f"exit code {result.rc}"
    if "Traceback (most recent call last)" in result.stderr:
        return "python traceback"
    if any(marker in result.stderr for marker in _FATAL_MARKERS):
        return "llvm fatal error"
    if result.rc == 1 and "error" not in result.stderr:
        return "exit 1 without an error message"
    return None


@dataclass
class Outcome:
    """The end of one (mutant, mode) job."""

    mutant: int
    mode: str
    rc: int | None
    failure: str | None = None  # failure_kind, or "generic output rejected"
    stage: str = ""  # which invocation failed: "run" or "reparse"
    result: RunResult | None = None
    generic_output: str | None = None  # what the reparse stage was given


_NUMBER = re.compile(r"\d+")
_LOCATION = re.compile(r"\S+\.mlir:\d+:\d+")


def _normalize(line: str) -> str:
    line = _LOCATION.sub("<loc>", line.strip())
    line = re.sub(r"0x[0-9a-fA-F]+", "0x_", line)
    return _NUMBER.sub("N", line)[:200]


def _innermost_frame(stderr: str) -> str:
    """The innermost Python frame in a dump of faulthandler (one block per
    thread, innermost frame first): that of the thread that got the signal
    or, when it runs no Python code (a thread of LLVM's pool), the first
    thread that does."""
    blocks: list[tuple[bool, list[str]]] = []  # (is the current thread, frames)
    for line in stderr.splitlines():
        if line.startswith(("Current thread 0x", "Thread 0x")):
            blocks.append((line.startswith("Current"), []))
        elif blocks and line.strip().startswith('File "'):
            blocks[-1][1].append(line.strip())
    ranked = sorted((b for b in blocks if b[1]), key=lambda b: not b[0])  # stable
    if not ranked:
        return "(no Python frame)"
    return _normalize(re.sub(r'File ".*/', 'File "', ranked[0][1][0]))


def signature(outcome: Outcome) -> str:
    """A key under which the same bug found through different inputs collapses."""
    assert outcome.failure is not None and outcome.result is not None
    text = outcome.result.stderr
    if outcome.failure == "timeout":
        return f"timeout in {_innermost_frame(text)}"
    for pattern in (r"Assertion `.*' failed", r"LLVM ERROR: .*", r"UNREACHABLE executed.*"):
        m = re.search(pattern, text)
        if m:
            return f"{outcome.failure}: {m.group()[:300]}"
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if "Traceback (most recent call last)" in text:
        # The last traceback: indented frames, then the exception's line.
        start = max(i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent"))
        block = lines[start + 1 :]
        frames = [ln.strip() for ln in block if ln.strip().startswith('File "')]
        where = re.sub(r'File ".*/', 'File "', frames[-1]) if frames else ""
        last = next((ln for ln in block if not ln.startswith(" ")), "")
        return f"{outcome.failure}: {_normalize(last)} at {_normalize(where)}"
    if outcome.failure.startswith("signal") or outcome.failure == "process exited mid-run":
        return f"{outcome.failure} in {_innermost_frame(text)}"
    if outcome.failure == "generic output rejected":
        error = next((ln for ln in lines if "error:" in ln), lines[-1] if lines else "")
        return f"{outcome.failure}: {_normalize(error)}"
    return f"{outcome.failure}: {_normalize(lines[-1]) if lines else ''}"


# ---------------------------------------------------------------------------
# The worker: imports pdg once and serves runs over a pipe
# ---------------------------------------------------------------------------


def _load_entry(entry: str) -> Callable[[list[str]], object]:
    module, _, function = entry.partition(":")
    return getattr(importlib.import_module(module), function)


def _exit_code(code: object) -> int:
    """What the process exit status would be for `sys.exit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def worker_main(entry: str) -> int:
    """Serves requests `{"args": [...]}` (one JSON line each on stdin) with
    `{"rc": int, "stdout": str, "stderr": str}` lines on the original stdout.

    File descriptors 0 and 1 are moved out of the way so that nothing the
    compiler writes at the C level can corrupt the protocol: fd 1 joins fd 2,
    which the parent points at a log file and reads after a crash (abort
    messages, faulthandler's Python stack)."""
    import ctypes
    import faulthandler

    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")
    faulthandler.enable(file=sys.__stderr__, all_threads=True)
    # The parent asks for the Python stack of a hung run with SIGUSR1.
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
    libc = ctypes.CDLL(None)
    run = _load_entry(entry)
    replies.write(b'{"ready": true}\n')
    replies.flush()
    for line in requests:
        args = json.loads(line)["args"]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = _exit_code(run(args))
            except SystemExit as e:
                rc = _exit_code(e.code)
            except BaseException:  # any escape is a finding
                traceback.print_exc(file=err)
                rc = 1
        libc.fflush(None)  # C-level buffered output into the log before we answer
        sys.__stderr__.flush()
        reply = {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}
        replies.write(json.dumps(reply).encode() + b"\n")
        replies.flush()
    return 0


class WorkerError(Exception):
    """A worker could not be started: a setup problem, not a finding."""


class Worker:
    """A persistent `--worker` process, restarted after each death."""

    STARTUP_TIMEOUT = 120.0

    def __init__(self, directory: Path, entry: str, timeout: float):
        self.directory = directory
        self.entry = entry
        self.timeout = timeout
        self.log_path = directory / "worker.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._eof = False

    def _start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker", "--entry", self.entry],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=self.directory,
                start_new_session=True,
            )
        self._buffer = b""
        self._eof = False
        offset = self._log_size()
        if self._read_line(time.monotonic() + self.STARTUP_TIMEOUT) is None:
            self.stop()
            raise WorkerError(f"the worker did not start:\n{_tail(self._log_since(offset), 12)}")

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            self.proc = None

    def _log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def _log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")

    def _read_line(self, deadline: float) -> bytes | None:
        """The next reply line; None on timeout or at the end of the
        output (then `_eof` is set: the worker is dying)."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self._eof = True
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def run(self, args: Sequence[str]) -> RunResult:
        """Runs `pdg-opt args` in the worker; a crash or hang ends the worker."""
        if self.proc is None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        offset = self._log_size()
        try:
            self.proc.stdin.write(json.dumps({"args": list(args)}).encode() + b"\n")
            self.proc.stdin.flush()
            line = self._read_line(time.monotonic() + self.timeout)
        except BrokenPipeError:
            line, self._eof = None, True
        if line is None:
            timed_out = not self._eof
            if timed_out:
                self.proc.send_signal(signal.SIGUSR1)  # where it hangs, into the log
                time.sleep(STACK_DUMP_WAIT)
                self.proc.kill()
            code = self.proc.wait()  # a dying process has finished its crash report
            self.stop()
            stderr = self._log_since(offset)
            if timed_out:
                return RunResult(timed_out=True, stderr=stderr)
            if code is not None and code < 0:
                return RunResult(signal=-code, stderr=stderr)
            return RunResult(rc=None, stderr=stderr + f"\n[worker exited with status {code}]")
        reply = json.loads(line)
        # Whatever reached the file descriptors directly (C++ code) follows.
        return RunResult(
            rc=reply["rc"], stdout=reply["stdout"], stderr=reply["stderr"] + self._log_since(offset)
        )


# ---------------------------------------------------------------------------
# Running jobs
# ---------------------------------------------------------------------------


def run_mode(
    run: Callable[[Sequence[str]], RunResult], path: Path, mode: Mode, mutant: int
) -> Outcome:
    """Runs `path` in `mode` through `run` (a worker or a fresh process)."""
    result = run([str(path), *mode.flags])
    outcome = Outcome(mutant, mode.name, result.rc, failure_kind(result), "run", result)
    if outcome.failure or not mode.reparse or result.rc != 0:
        return outcome
    reparsed_path = path.with_suffix(".generic.mlir")
    reparsed_path.write_text(result.stdout, encoding="utf-8")
    again = run([str(reparsed_path)])
    failure = failure_kind(again)
    if failure is None and again.rc != 0:
        failure = "generic output rejected"
    return Outcome(
        mutant,
        mode.name,
        result.rc,
        failure,
        "reparse" if failure else "run",
        again if failure else result,
        result.stdout,
    )


def run_fresh(entry: str, timeout: float) -> Callable[[Sequence[str]], RunResult]:
    """Like Worker.run, but in a new process each time: confirms a finding."""
    module, _, function = entry.partition(":")
    program = (
        "import faulthandler, signal, sys; faulthandler.enable(all_threads=True); "
        "faulthandler.register(signal.SIGUSR1, all_threads=True); "
        f"from {module} import {function} as f; sys.exit(f(sys.argv[1:]))"
    )

    def run(args: Sequence[str]) -> RunResult:
        proc = subprocess.Popen(
            [sys.executable, "-c", program, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        timed_out = False
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.send_signal(signal.SIGUSR1)
            time.sleep(STACK_DUMP_WAIT)
            proc.kill()
            out, err = proc.communicate()
        stdout = out.decode("utf-8", "replace")
        stderr = err.decode("utf-8", "replace")
        if timed_out:
            return RunResult(timed_out=True, stdout=stdout, stderr=stderr)
        if proc.returncode < 0:
            return RunResult(signal=-proc.returncode, stdout=stdout, stderr=stderr)
        return RunResult(rc=proc.returncode, stdout=stdout, stderr=stderr)

    return run


def run_all(
    mutants: Sequence[Mutant],
    modes: Sequence[Mode],
    jobs: int,
    workdir: Path,
    entry: str,
    timeout: float,
    on_failure: Callable[[Outcome], None],
    deadline: float | None = None,
) -> list[Outcome]:
    """Runs every mutant in every mode over `jobs` workers; outcomes in job
    order. Past `deadline` (time.monotonic()), no new mutant is started: the
    outcomes then cover a prefix of the mutants, each in every mode."""
    todo: queue.Queue[tuple[int, Mutant, Mode]] = queue.Queue()
    order = [(m, mode) for m in mutants for mode in modes]
    for k, (m, mode) in enumerate(order):
        todo.put((k, m, mode))
    outcomes: list[Outcome | None] = [None] * len(order)
    errors: list[BaseException] = []
    lock = threading.Lock()
    cutoff: int | None = None  # position of the first mutant not run

    def serve(slot: int) -> None:
        nonlocal cutoff
        directory = workdir / f"worker{slot}"
        directory.mkdir()
        worker = Worker(directory, entry, timeout)
        try:
            while not errors:
                try:
                    k, mutant, mode = todo.get_nowait()
                except queue.Empty:
                    return
                with lock:  # past the deadline, mutants from the next one on are skipped
                    if cutoff is None and deadline is not None and time.monotonic() > deadline:
                        cutoff = -(-k // len(modes))  # the mutant in progress finishes
                    if cutoff is not None and k // len(modes) >= cutoff:
                        continue
                path = directory / "input.mlir"
                path.write_bytes(mutant.data)
                outcome = run_mode(worker.run, path, mode, mutant.index)
                outcomes[k] = outcome
                if outcome.failure:
                    with lock:
                        on_failure(outcome)
        except BaseException as e:  # re-raised by the main thread
            errors.append(e)
        finally:
            worker.stop()

    threads = [threading.Thread(target=serve, args=(s,), daemon=True) for s in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return [o for o in outcomes if o is not None]


# ---------------------------------------------------------------------------
# Minimizing
# ---------------------------------------------------------------------------


def ddmin(
    units: list[bytes], fails: Callable[[list[bytes]], bool], out_of_budget: Callable[[], bool]
) -> list[bytes]:
    """Zeller's delta debugging: a 1-minimal sublist of `units` that still fails
    (complements only, which is what shrinks inputs of parsers best)."""
    n = 2
    while len(units) >= 2 and not out_of_budget():
        size = -(-len(units) // n)
        for start in range(0, len(units), size):
            candidate = units[:start] + units[start + size :]
            if fails(candidate):
                units = candidate
                n = max(n - 1, 2)
                break
            if out_of_budget():
                return units
        else:
            if n >= len(units):
                break
            n = min(2 * n, len(units))
    return units


def _tokens_with_spacing(data: bytes) -> list[bytes]:
    """Tokens, each with the whitespace after it: removing some keeps the
    rest readable."""
    units: list[bytes] = []
    for kind, text in tokenize(data):
        if units and kind == "ws":
            units[-1] += text
        else:
            units.append(text)
    return units


def minimize(
    data: bytes, mode: Mode, sig: str, workdir: Path, entry: str, timeout: float, budget_s: float
) -> tuple[bytes, Outcome] | None:
    """Shrinks `data` while it fails in `mode` with the same signature: by
    lines, then by tokens. Returns the smallest input and how it fails, or
    None when `data` itself does not fail that way (a flaky failure)."""
    directory = workdir / f"minimize-{hashlib.sha1(data).hexdigest()[:8]}"
    directory.mkdir(exist_ok=True)
    worker = Worker(directory, entry, timeout)
    deadline = time.monotonic() + budget_s
    seen: dict[bytes, Outcome | None] = {}  # the failing outcome of each candidate tried

    def fails(candidate: bytes) -> bool:
        if candidate not in seen:
            path = directory / "candidate.mlir"
            path.write_bytes(candidate)
            outcome = run_mode(worker.run, path, mode, -1)
            same = outcome.failure is not None and signature(outcome) == sig
            seen[candidate] = outcome if same else None
        return seen[candidate] is not None

    def out_of_budget() -> bool:
        return time.monotonic() > deadline

    try:
        if not fails(data):
            return None
        for split in (_lines, _tokens_with_spacing):
            data = b"".join(ddmin(split(data), lambda u: fails(b"".join(u)), out_of_budget))
        # Tidy: drop blank lines and trailing spaces when that changes nothing.
        tidy = b"\n".join(ln.rstrip() for ln in data.split(b"\n") if ln.strip()) + b"\n"
        if tidy != data and fails(tidy):
            data = tidy
    finally:
        worker.stop()
    outcome = seen[data]
    assert outcome is not None
    return data, outcome


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _command_line(mode: Mode, stem: str, stage: str) -> str:
    """How to reproduce by hand the failing invocation of `stem.mlir`."""
    if stage == "reparse":
        first = " ".join(["pdg-opt", f"{stem}.mlir", *mode.flags])
        return f"pdg-opt {stem}.generic.mlir   (the output of: {first})"
    return " ".join(["pdg-opt", f"{stem}.mlir", *mode.flags])


def write_finding(
    out: Path, stem: str, mutant: Mutant | None, outcome: Outcome, sig: str, data: bytes, note: str
) -> None:
    """`stem.mlir` (the input) and `stem.txt` (how it fails)."""
    assert outcome.result is not None
    mode = MODES[outcome.mode]
    (out / f"{stem}.mlir").write_bytes(data)
    if outcome.generic_output is not None and outcome.stage == "reparse":
        (out / f"{stem}.generic.mlir").write_text(outcome.generic_output, encoding="utf-8")
    lines = [
        f"failure:   {outcome.failure} ({outcome.stage} stage)",
        f"signature: {sig}",
        f"mode:      {mode.name}",
        f"command:   {_command_line(mode, stem, outcome.stage)}",
    ]
    if mutant is not None:
        lines += [
            f"mutant:    {mutant.index} of seed {mutant.seed.origin}",
            "mutations: " + "; ".join(mutant.mutations),
        ]
    lines += [note, "", "stderr (tail):", _tail(outcome.result.stderr)]
    (out / f"{stem}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--mutants", type=int, default=500, help="how many mutants (default 500)")
    p.add_argument("--jobs", type=int, default=2, help="parallel workers (default 2)")
    p.add_argument("--out", type=Path, help="where to write failing inputs (default: a temp dir)")
    p.add_argument(
        "--seeds-dir",
        type=Path,
        action="append",
        help="a directory (or file) of seed *.mlir files; repeatable "
        "(default: test/ and examples/ of the repository)",
    )
    p.add_argument(
        "--modes",
        default=",".join(MODES),
        help=f"comma-separated subset of {', '.join(MODES)} (default: all)",
    )
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per run (default 10)")
    p.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="start no new mutant after this many seconds (a bound for CI; the "
        "mutants run are then a prefix of the --mutants)",
    )
    p.add_argument(
        "--minimize",
        action="store_true",
        help="shrink one input per distinct failure by delta debugging",
    )
    p.add_argument(
        "--minimize-budget",
        type=float,
        default=120.0,
        help="seconds of shrinking per distinct failure (default 120)",
    )
    p.add_argument(
        "--dump-mutants", type=Path, help="write the mutants to this directory, run nothing"
    )
    p.add_argument(
        "--no-generic-seeds",
        action="store_true",
        help="do not add the generic form of the accepted seeds to the seeds",
    )
    p.add_argument(
        "--replay",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="run these inputs unchanged instead of mutants (with --minimize: shrink them)",
    )
    p.add_argument("--entry", default=DEFAULT_ENTRY, help=argparse.SUPPRESS)  # tests only
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # pdg-opt turns its own bugs into one "internal error" line; the fuzzer
    # wants to see them as tracebacks.
    os.environ["PDG_TRACEBACK"] = "1"
    if args.worker:
        return worker_main(args.entry)
    names = [m for m in args.modes.split(",") if m]
    if not names or any(m not in MODES for m in names):
        print(f"fuzz: --modes takes a subset of {','.join(MODES)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="pdg-fuzz-work-") as tmp:
        try:
            return fuzz(args, [MODES[m] for m in names], Path(tmp))
        except WorkerError as e:
            print(f"fuzz: {e}", file=sys.stderr)
            return 2


def fuzz(args: argparse.Namespace, modes: Sequence[Mode], workdir: Path) -> int:
    """Makes the mutants, runs them, reports; returns the exit status."""
    started = time.monotonic()
    if args.replay:  # given inputs, as they are
        seeds = [Seed(str(path), path.read_bytes()) for path in args.replay]
        mutants = [Mutant(i, seed, seed.data, ()) for i, seed in enumerate(seeds)]
    else:
        seeds = load_seeds(args.seeds_dir or DEFAULT_SEED_DIRS)
        if not seeds:
            print("fuzz: no seed *.mlir files found", file=sys.stderr)
            return 2
        if not args.no_generic_seeds:
            seeds += generic_seeds(seeds, workdir, args.entry, args.timeout)
        mutants = make_mutants(seeds, args.seed, args.mutants)
    if args.dump_mutants:
        args.dump_mutants.mkdir(parents=True, exist_ok=True)
        for m in mutants:
            (args.dump_mutants / f"mutant{m.index:05d}.mlir").write_bytes(m.data)
        print(f"fuzz: {len(mutants)} mutants of {len(seeds)} seeds in {args.dump_mutants}")
        return 0

    seen: set[str] = set()

    def report(outcome: Outcome) -> None:  # the first run of each new kind of failure
        sig = signature(outcome)
        if sig not in seen:
            seen.add(sig)
            print(f"fuzz: mutant {outcome.mutant} ({outcome.mode}): {sig}", flush=True)

    jobs = max(1, args.jobs)
    deadline = started + args.time_limit if args.time_limit else None
    outcomes = run_all(mutants, modes, jobs, workdir, args.entry, args.timeout, report, deadline)
    failures = [o for o in outcomes if o.failure]
    elapsed = time.monotonic() - started
    rejected = sum(1 for o in outcomes if not o.failure and o.rc == 1)
    accepted = sum(1 for o in outcomes if not o.failure and o.rc == 0)
    ran = len({o.mutant for o in outcomes})
    cut = f" (time limit: {ran} of {len(mutants)} ran)" if ran < len(mutants) else ""
    counts = (
        f"{ran} mutants x {len(modes)} modes{cut}, {len(failures)} crashes "
        f"({rejected} rejected with exit 1, {accepted} accepted)"
    )
    if not failures:
        print(f"fuzz: {counts}, {elapsed:.1f} s (seed {args.seed}, {len(seeds)} seeds)")
        return 0
    return report_failures(args, mutants, failures, workdir, counts, started)


def generic_seeds(seeds: Sequence[Seed], workdir: Path, entry: str, timeout: float) -> list[Seed]:
    """The seeds that pdg-opt accepts, printed in the generic form: mutating
    that form reaches attributes and properties that the custom syntax of
    the ops keeps out of reach."""
    directory = workdir / "generic-seeds"
    directory.mkdir()
    worker = Worker(directory, entry, timeout)
    derived = []
    try:
        for seed in seeds:
            path = directory / "seed.mlir"
            path.write_bytes(seed.data)
            result = worker.run([str(path), "--mlir-print-op-generic"])
            if result.rc == 0 and failure_kind(result) is None and result.stdout.strip():
                data = _strip_comments(result.stdout.encode())
                derived.append(Seed(f"{seed.origin} (generic form)", data))
    finally:
        worker.stop()
    return derived


def report_failures(
    args: argparse.Namespace,
    mutants: Sequence[Mutant],
    failures: Sequence[Outcome],
    workdir: Path,
    counts: str,
    started: float,
) -> int:
    """Saves every failing input, confirms and (optionally) shrinks one per
    distinct signature, prints the summary; returns 1."""
    out: Path = args.out or Path(tempfile.mkdtemp(prefix="pdg-fuzz-"))
    out.mkdir(parents=True, exist_ok=True)
    groups: dict[str, list[Outcome]] = {}
    for o in failures:
        groups.setdefault(signature(o), []).append(o)
    fresh = run_fresh(args.entry, args.timeout)
    summary: list[str] = []
    for n, (sig, members) in enumerate(groups.items(), start=1):
        for o in members[:SAVED_PER_FAILURE]:
            stem = f"crash{n:02d}-mutant{o.mutant:05d}-{o.mode}"
            write_finding(out, stem, mutants[o.mutant], o, sig, mutants[o.mutant].data, "")
        first = members[0]
        mode = MODES[first.mode]
        path = workdir / f"confirm{n:02d}.mlir"
        path.write_bytes(mutants[first.mutant].data)
        confirmed = False
        for _ in range(CONFIRM_ATTEMPTS):  # races (deadlocks) need not strike every time
            again = run_mode(fresh, path, mode, first.mutant)
            confirmed = again.failure is not None and signature(again) == sig
            if confirmed:
                break
        sig_note = ""
        if mutants[first.mutant].mutations:  # if the seed fails too, mutations are not the cause
            path.write_bytes(mutants[first.mutant].seed.data)
            unmutated = run_mode(fresh, path, mode, first.mutant)
            if unmutated.failure is not None and signature(unmutated) == sig:
                sig_note = f"; the unmutated seed {mutants[first.mutant].seed.origin} fails too"
        line = (
            f"  [{n}] {sig}\n      {len(members)} run(s), modes "
            f"{','.join(m for m in MODES if any(o.mode == m for o in members))}; e.g. "
            f"crash{n:02d}-mutant{first.mutant:05d}-{first.mode}.mlir; "
            + (
                "reproduces in a fresh process"
                if confirmed
                else "does NOT reproduce in a fresh process (depends on the worker's history?)"
            )
            + sig_note
        )
        if args.minimize:
            data = mutants[first.mutant].data
            found = minimize(
                data, mode, sig, workdir, args.entry, args.timeout, args.minimize_budget
            )
            if found is None:
                line += "\n      not minimized: the input does not fail again in a worker"
            else:
                small, shrunk = found
                stem = f"crash{n:02d}-min"
                path = workdir / f"{stem}.mlir"
                path.write_bytes(small)
                fresh_fails = run_mode(fresh, path, mode, first.mutant).failure is not None
                note = f"minimized from mutant {first.mutant}" + (
                    "" if fresh_fails else "; does NOT fail in a fresh process"
                )
                write_finding(out, stem, None, shrunk, sig, small, note)
                line += f"\n      minimized ({len(small)} bytes): {out / (stem + '.mlir')}"
        summary.append(line)
    elapsed = time.monotonic() - started
    print(
        f"fuzz: {counts}, {elapsed:.1f} s (seed {args.seed}); "
        f"{len(groups)} distinct, inputs in {out}"
    )
    print("\n".join(summary))
    return 1


if __name__ == "__main__":
    sys.exit(main())
