"""Loading an artifact and running it on the CPU.

    program = pdg.runtime.load("decode.pdgx")
    result = program.run(inputs, symbols={"B": 4})
    result.outputs["tokens"], result.bounds["T"]

Everything the caller gives is checked against the artifact before the
compiled code runs: the compiled entry trusts its arguments. What the
artifact says of itself is checked too (pdg.runtime.manifest): the
manifest must match the description compiled into the library.

A run stops early, with every buffer freed, on SIGINT (KeyboardInterrupt,
within one step), a failing udf, an index out of range or memory it cannot
have (RunError naming the node or store)."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .cpu import RUNTIME_VERSION, Entry, StoppedError, UdfError
from .formula import FormulaError, evaluate, from_json
from .plan_breakdown import Breakdown, breakdown
from .manifest import DESCRIBED, LIBRARY, ArtifactError, read_manifest
from .memref import ELEMENTS, from_npy_bf16
from .mpi import Binding, MpiError, World, report_and_abort, world_of

__all__ = ["ArtifactError", "CompiledProgram", "RunError", "RunResult", "load"]

# Launch symbols above this are refused: sizes are computed in int64, and no
# real dim is this large.
MAX_SYMBOL = 1 << 40
MAX_THREADS = 64  # PDG_MAX_THREADS in pdg/runtime.h


class RunError(Exception):
    """The inputs or symbols given to `run` do not fit the program, or the
    run stopped on bad data (an index out of range) or memory."""


@dataclass
class RunResult:
    """`outputs`: name -> array (or one array per sequence when sequences
    ran different numbers of steps), viewing the compiled code's buffers;
    `bounds`: each dynamic bound symbol -> its length, per sequence where
    sequences end on their own; `peak_bytes`: the inputs' bytes plus the
    most the compiled code had allocated at once."""

    outputs: dict
    bounds: dict
    peak_bytes: int = 0


class CompiledProgram:
    def __init__(self, path: Path, manifest: dict):
        self.path = path
        library = _load_library(path / LIBRARY, manifest["parts"][LIBRARY])
        self.manifest = _check_description(path, manifest, library)
        try:
            self._entry = Entry(library, self.manifest["abi"], self.manifest)
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise ArtifactError(
                f"{path / LIBRARY} does not have what its manifest describes ({e}); compile "
                "the program again"
            ) from None

    def runtime_counter(self, name: str) -> int:
        """A count the program's C runtime keeps (pdg/runtime.h), e.g.
        `pdg_blas_calls` (sgemm calls so far), `pdg_grows` (stores grown
        so far) or `pdg_bytes_kept`."""
        counters = ("pdg_blas_calls", "pdg_grows", "pdg_bytes_kept", "pdg_bytes_live")
        if name not in (*counters, "pdg_bytes_peak"):
            raise ValueError(f"no runtime counter '{name}'")
        return ctypes.c_int64.in_dll(self._entry.library, name).value

    @property
    def donatable_inputs(self) -> list[str]:
        """The inputs whose arrays a run may write into when the caller
        donates them (run(donate=...)): a training program's initial weights
        and optimizer state, updated in place (the manifest's abi.donated)."""
        return [d["input"] for d in self.manifest["abi"].get("donated", [])]

    @property
    def launch_symbols(self) -> dict[str, dict]:
        return {s["name"]: s for s in self.manifest["symbols"] if s["kind"] == "launch"}

    def run(
        self,
        inputs: Mapping[str, object],
        symbols: Mapping[str, int] | None = None,
        udfs: Mapping[str, Callable] | None = None,
        memory_limit: int | None = None,
        progress: Callable[[int], None] | None = None,
        comm=None,
        donate: Collection[str] = (),
    ) -> RunResult:
        """Runs the program. `memory_limit` (bytes; default: the
        PDG_MEMORY_LIMIT environment variable, else this machine's physical
        memory) refuses, before anything is allocated, a run whose planned
        peak exceeds it, and stops a run whose stores grow past it.
        `progress(step)` is called about five times a second with the
        loop's current step. `comm` (an mpi4py communicator) makes this run
        one rank of a program over a worker dim (pdg.runtime.mpi): its
        symbol is the communicator's size, and the inputs over it are this
        rank's (extent 1). A run that fails on one of several ranks ends
        them all (MPI_Abort) after saying why on stderr. `donate`: names
        of inputs (the manifest's `abi.donated`: a training program's
        initial weights and optimizer state) whose arrays the run may write
        into and return as outputs, instead of copying them first; a
        donated array then holds what the program left there, not the
        input. An array sharing memory with another input is copied."""
        check_thread_count()
        world = self._world(comm)
        try:
            return self._run(world, inputs, symbols, udfs, memory_limit, progress, donate)
        except BaseException as e:
            # A mistake or a failure on this rank alone (its inputs, a udf)
            # would leave the others waiting in their next collective.
            report_and_abort(world, e)  # returns only in a world of one
            raise

    def _run(
        self, world: World, inputs, symbols, udfs, memory_limit, progress, donate
    ) -> RunResult:
        values = self._check_symbols(dict(symbols or {}), world)
        arrays = self._check_inputs(inputs, values)
        functions = self._check_udfs(dict(udfs or {}))
        donate = self._check_donated(donate)
        # An input the program writes into and the caller keeps is copied
        # first: those bytes are not in the plan.
        copies = sum(
            arrays[d["input"]].nbytes
            for d in self.manifest["abi"].get("donated", [])
            if d["input"] not in donate
        )
        limit = self._check_memory(values, memory_limit, copies)
        call = (arrays, values, functions, limit, donate)
        try:
            with Binding(self._entry.library, world):
                if progress is None:
                    outputs, bounds = self._entry(*call)
                else:
                    outputs, bounds = self._watched(call, progress)
        except UdfError as e:
            raise RunError(str(e)) from e.__cause__
        except (StoppedError, MpiError) as e:
            raise RunError(str(e)) from None
        return RunResult(outputs, bounds, self._entry.peak_bytes)

    def _world(self, comm) -> World:
        """The ranks this run is one of: a world of one without `comm`, and
        for a program without worker dims (which has nothing to share)."""
        if not any(s.get("worker") for s in self.manifest["symbols"]):
            return World()
        try:
            return world_of(comm)
        except MpiError as e:
            raise RunError(str(e)) from None

    def _watched(self, call: tuple, progress: Callable[[int], None]):
        """The entry runs in a thread (ctypes releases the GIL during the
        call); this one polls the step it is at, and on KeyboardInterrupt
        stops the run and waits for it to end."""
        outcome: dict = {}

        def work() -> None:
            try:
                outcome["value"] = self._entry(*call)
            except BaseException as e:  # re-raised in the caller's thread
                outcome["error"] = e

        worker = threading.Thread(target=work, name="pdg-run")
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.2)
                if worker.is_alive():
                    progress(int(self._entry.step.value))
        except KeyboardInterrupt:
            self._entry.interrupt()
            worker.join()
            raise
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def planned_peak(
        self, symbols: Mapping[str, int], at_least: bool = False
    ) -> tuple[int, str, dict[str, int]]:
        """(bytes, formula, symbol values) of the compiler's memory plan for
        these launch symbols, with each dynamic bound at its max (with
        `at_least`, or where it has none: at the steps its stores start
        with, as they grow from there)."""
        values = dict(symbols)
        for s in self.manifest["symbols"]:
            if s["kind"] == "dynamic":
                start = s.get("grow_from") or 1
                at = s["max"] if s["max"] is not None and not at_least else start
                if s["max"] is not None:
                    at = min(at, s["max"])
                values.setdefault(s["name"], at)
        memory = self.manifest["memory"]
        try:
            total = evaluate(from_json(memory["peak"]), values)
        except FormulaError as e:
            raise ArtifactError(f"the manifest's memory plan is damaged ({e})") from None
        if total is None:
            raise ArtifactError("the manifest's memory plan names symbols it does not describe")
        return total, memory["formula"], values

    def plan(self, symbols: Mapping[str, int]) -> Breakdown:
        """The memory plan store by store at these launch symbols (dynamic
        bounds at their max), largest first: see plan_breakdown.py."""
        values = self._check_symbols(dict(symbols))
        _, _, values = self.planned_peak(values)
        try:
            return breakdown(self.manifest, values)
        except FormulaError as e:
            raise ArtifactError(f"the manifest's memory plan is damaged ({e})") from None

    def _check_donated(self, donate: Collection[str]) -> frozenset[str]:
        if isinstance(donate, str):
            raise RunError(f"donate takes a collection of input names, got the string {donate!r}")
        names = {s["name"] for s in self.manifest["abi"]["inputs"]}
        unknown = sorted(set(donate) - names)
        if unknown:
            raise RunError(
                f"donate names unknown input(s) {', '.join(unknown)}; the program's inputs: "
                f"{', '.join(sorted(names))}"
            )
        return frozenset(donate)

    def _check_memory(self, symbols: dict[str, int], limit: int | None, copies: int = 0) -> int:
        """The limit in bytes for this run (its inputs included, as in the
        plan), after checking the plan and `copies` (bytes of inputs copied
        before the run) against it."""
        source = "memory_limit"
        if limit is None and os.environ.get("PDG_MEMORY_LIMIT"):
            source = "PDG_MEMORY_LIMIT"
            try:
                limit = parse_bytes(os.environ["PDG_MEMORY_LIMIT"])
            except ValueError as e:
                raise RunError(f"PDG_MEMORY_LIMIT: {e}") from None
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise RunError(f"memory_limit must be a whole number of bytes, got {limit!r}")
        default = limit is None
        if default:
            source, limit = "this machine's memory", physical_memory()
        # With the default limit only what the run surely needs is checked
        # (a dynamic dim's stores at their first size); a limit the caller
        # set holds for the run at its largest.
        total, text, values = self.planned_peak(symbols, at_least=default)
        if copies:
            total += copies
            text = f"{text} + {copies} (inputs copied, not donated)"
        unbounded = [
            s["dim"] for s in self.manifest["symbols"] if s["kind"] == "dynamic" and not s["max"]
        ]
        if total > limit:
            at = ", ".join(f"{k}={v}" for k, v in sorted(values.items()))
            grows = (
                f"; dim(s) {', '.join(unbounded)} have no max: counted at their first size"
                if unbounded
                else ""
            )
            raise RunError(
                f"the planned peak memory {total} bytes ({total / 2**20:.1f} MiB) exceeds "
                f"{source} = {limit} bytes: peak = {text} at {at} (dynamic bounds at "
                f"{'their first size' if default else 'their max'}{grows}); "
                + (
                    "run with smaller symbol values"
                    if default
                    else "raise the limit or run with smaller symbol values"
                )
            )
        return limit

    def _check_udfs(self, given: dict) -> dict:
        expected = sorted(self.manifest.get("udfs", []))
        missing = [n for n in expected if n not in given]
        unknown = sorted(n for n in given if n not in expected)
        if missing or unknown:
            listed = ", ".join(expected) or "none"
            problem = (
                f"missing udf(s) {', '.join(missing)}"
                if missing
                else f"unknown udf(s) {', '.join(unknown)}"
            )
            raise RunError(f"{problem}; this program's udfs: {listed} (pass udfs={{name: fn}})")
        bad = sorted(n for n, f in given.items() if not callable(f))
        if bad:
            raise RunError(f"udf(s) {', '.join(bad)} must be callables")
        return given

    def _check_symbols(self, given: dict[str, int], world: World | None = None) -> dict[str, int]:
        launch = self.launch_symbols
        world = world or World()
        for name, spec in launch.items():
            if not spec.get("worker"):
                continue
            if name in given and given[name] != world.size:
                raise RunError(
                    f"symbol {name} is the number of ranks (dim '{spec['dim']}' is a worker "
                    f"dim), {world.size} here; do not give it (run on a communicator of "
                    f"{given[name]} ranks instead: comm=...)"
                )
            given = {**given, name: world.size}
        dynamic = [s["name"] for s in self.manifest["symbols"] if s["kind"] == "dynamic"]
        for name in given:
            if name in dynamic:
                raise RunError(
                    f"symbol {name} is a dynamic bound, found while running; do not give it"
                )
            if name not in launch:
                known = ", ".join(sorted(launch)) or "none"
                raise RunError(f"unknown symbol {name}; this program's launch symbols: {known}")
        values = {}
        for name, spec in launch.items():
            if name not in given:
                raise RunError(
                    f"missing a value for launch symbol {name} (the bound of dim "
                    f"'{spec['dim']}'); pass symbols={{'{name}': ...}}"
                )
            value = given[name]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise RunError(f"symbol {name} must be an integer, got {value!r}")
            top = MAX_SYMBOL if spec["max"] is None else spec["max"]
            if value < 1 or value > top:
                why = (
                    f"the bound of dim '{spec['dim']}' declared `max {spec['max']}`"
                    if spec["max"] is not None
                    else "sizes are computed in 64-bit integers"
                )
                raise RunError(f"symbol {name} = {value} is outside 1..{top} ({why})")
            values[name] = int(value)
        return values

    def _extent(self, dim: str, symbols: dict[str, int]) -> int:
        for s in self.manifest["symbols"]:
            if s["dim"] == dim and s["kind"] == "launch":
                return symbols[s["name"]]
        raise ArtifactError(f"the manifest does not describe dim '{dim}'")

    def _check_inputs(self, inputs: Mapping[str, object], symbols: dict[str, int]) -> dict:
        specs = {s["name"]: s for s in self.manifest["abi"]["inputs"]}
        missing = sorted(set(specs) - set(inputs))
        extra = sorted(set(inputs) - set(specs))
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing input(s) {', '.join(missing)}")
            if extra:
                parts.append(f"unknown input(s) {', '.join(extra)}")
            raise RunError(f"{'; '.join(parts)}; the program's inputs: {', '.join(specs)}")
        arrays = {}
        for name, spec in specs.items():
            want = np.dtype(ELEMENTS[spec["element"]])
            array = from_npy_bf16(np.asarray(inputs[name]), want)
            if array.dtype != want:
                raise RunError(
                    f"input {name} has dtype {array.dtype}, the program takes {want}; "
                    f"convert it with .astype({_dtype_expression(want)})"
                )
            rank = len(spec["domain"])
            shape = [
                self._extent(d, symbols) if size is None else size
                for d, size in zip(spec["domain"], spec["shape"][:rank], strict=True)
            ] + spec["shape"][rank:]
            if list(array.shape) != shape:
                raise RunError(
                    f"input {name} has shape {list(array.shape)}, the program takes {shape} "
                    f"(dims {spec['domain']} then the point shape)"
                )
            arrays[name] = array
        return arrays


# The files behind loaded libraries: kept open for the process's life (a
# library is never unloaded, and its /proc/self/fd name must not be reused).
_LOADED: list[int] = []


def _load_library(path: Path, digest: str) -> ctypes.CDLL:
    """Loads a private copy of the library, checked against `digest`.

    The dynamic loader hands back a library it has loaded before when given
    the same path (or the same file), so a program compiled again at the
    same place would run the old code; and a library checked on disk could
    change before it is loaded. A copy in memory (memfd) that is hashed as
    it is made has neither problem."""
    try:
        source = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as e:
        raise ArtifactError(
            f"{path} cannot be read ({e.strerror}); compile the program again"
        ) from None
    with source:
        try:
            fd = os.memfd_create(f"pdg-{path.parent.name}", 0)
        except (AttributeError, OSError):  # no memfd: load the file itself
            fd = -1
        h = hashlib.sha256()
        for chunk in iter(lambda: source.read(1 << 20), b""):
            h.update(chunk)
            if fd >= 0:
                os.write(fd, chunk)
    if h.hexdigest() != digest:
        if fd >= 0:
            os.close(fd)
        raise ArtifactError(
            f"{path} does not match its sha256 in the manifest (changed or damaged after "
            "compilation); compile the program again"
        )
    where = f"/proc/self/fd/{fd}" if fd >= 0 else str(path.resolve())
    try:
        library = ctypes.CDLL(where)
    except OSError as e:
        if fd >= 0:
            os.close(fd)
        raise ArtifactError(f"{path} cannot be loaded ({e}); compile the program again") from None
    if fd >= 0:
        _LOADED.append(fd)
    return library


def _check_description(path: Path, manifest: dict, library: ctypes.CDLL) -> dict:
    """The manifest, after checking that it describes this library as the
    library describes itself."""
    try:
        version = ctypes.c_int32.in_dll(library, "pdg_runtime_version").value
        text = ctypes.c_char.in_dll(library, "pdg_artifact_description")
    except ValueError:
        raise ArtifactError(
            f"{path / LIBRARY} was not made by this pdg (it has no runtime description); "
            "compile the program again"
        ) from None
    if version != RUNTIME_VERSION:
        raise ArtifactError(
            f"{path / LIBRARY} was linked with runtime version {version}, this is version "
            f"{RUNTIME_VERSION}; compile the program again"
        )
    try:  # a char array: its address is the text
        described = json.loads(ctypes.string_at(ctypes.addressof(text)).decode("ascii"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ArtifactError(
            f"{path / LIBRARY} has a damaged description; compile the program again"
        ) from None
    for key in DESCRIBED:
        if manifest.get(key) != described.get(key):
            raise ArtifactError(
                f"{path / 'manifest.json'}: '{key}' differs from what {LIBRARY} was compiled "
                "for (the manifest was edited or belongs to another compilation); compile "
                "the program again"
            )
    return manifest


def check_thread_count() -> None:
    """PDG_NUM_THREADS, if set, must be a thread count the pool can use."""
    text = os.environ.get("PDG_NUM_THREADS")
    if text is None or text.strip() == "":
        return
    try:
        n = int(text.strip())
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_THREADS:
        raise RunError(
            f"PDG_NUM_THREADS={text!r}: give a whole number of threads from 1 to {MAX_THREADS} "
            "(unset: every CPU this process may run on)"
        )


def physical_memory() -> int:
    """This machine's physical memory in bytes (the default memory limit)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def parse_bytes(text: str) -> int:
    """`1000`, `64K`, `512M`, `2G` (powers of 1024) -> bytes."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (t[:-1], t[-1]) if t and t[-1] in units else (t, "")
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise ValueError(f"'{text}' is not a byte count (e.g. 512M, 2G)") from None
    if value != value or value in (float("inf"), float("-inf")) or value >= 2**63:
        raise ValueError(f"'{text}' is not a byte count below 8 EiB (e.g. 512M, 2G)")
    if value < 0:
        raise ValueError(f"'{text}' is negative")
    return int(value)


def load(path: str | Path) -> CompiledProgram:
    """Loads the artifact at `path` after checking its manifest and parts."""
    from pdg import __version__

    path = Path(path)
    return CompiledProgram(path, read_manifest(path, __version__))


def _dtype_expression(dtype: np.dtype) -> str:
    """How to write `dtype` in a hint: np.float32, ml_dtypes.bfloat16."""
    return "ml_dtypes.bfloat16" if dtype.name == "bfloat16" else f"np.{dtype.name}"
