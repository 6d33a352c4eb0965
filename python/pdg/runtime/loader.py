"""Loading an artifact and running it on the CPU.

    program = pdg.runtime.load("decode.pdgx")
    result = program.run(inputs, symbols={"B": 4})
    result.outputs["tokens"], result.bounds["T"]

Everything the caller gives is checked against the manifest before the
compiled code runs: the compiled entry trusts its arguments."""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .cpu import Entry, UdfError
from .formula import evaluate, from_json
from .manifest import LIBRARY, ArtifactError, read_manifest
from .memref import ELEMENTS

__all__ = ["ArtifactError", "CompiledProgram", "RunError", "RunResult", "load"]


class RunError(Exception):
    """The inputs or symbols given to `run` do not fit the program."""


@dataclass
class RunResult:
    """`outputs`: name -> array (or one array per sequence when sequences
    ran different numbers of steps); `bounds`: each dynamic bound symbol ->
    its length, per sequence where sequences end on their own;
    `peak_bytes`: the inputs' bytes plus the most the compiled code had
    allocated at once."""

    outputs: dict
    bounds: dict
    peak_bytes: int = 0


class CompiledProgram:
    def __init__(self, path: Path, manifest: dict):
        self.path = path
        self.manifest = manifest
        try:
            library = ctypes.CDLL(str((path / LIBRARY).resolve()))
            self._entry = Entry(library, manifest["abi"])
        except (OSError, AttributeError, KeyError, TypeError) as e:
            raise ArtifactError(
                f"{path / LIBRARY} cannot be loaded ({e}); compile the program again"
            ) from None

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
    ) -> RunResult:
        """Runs the program. `memory_limit` (bytes; default: the
        PDG_MEMORY_LIMIT environment variable) refuses, before anything is
        allocated, a run whose planned peak exceeds it. `progress(step)` is
        called about five times a second with the loop's current step."""
        values = self._check_symbols(dict(symbols or {}))
        arrays = self._check_inputs(inputs, values)
        functions = self._check_udfs(dict(udfs or {}))
        self._check_memory(values, memory_limit)
        try:
            if progress is None:
                outputs, bounds = self._entry(arrays, values, functions)
            else:
                outputs, bounds = self._watched(arrays, values, functions, progress)
        except UdfError as e:
            raise RunError(str(e)) from e.__cause__
        inputs_bytes = sum(a.nbytes for a in arrays.values())
        return RunResult(outputs, bounds, inputs_bytes + self._entry.peak_bytes)

    def _watched(self, arrays, values, functions, progress):
        """The entry runs in a thread (ctypes releases the GIL during the
        call); this one polls the step it is at."""
        outcome: dict = {}

        def work() -> None:
            try:
                outcome["value"] = self._entry(arrays, values, functions)
            except BaseException as e:  # re-raised in the caller's thread
                outcome["error"] = e

        worker = threading.Thread(target=work, name="pdg-run")
        worker.start()
        while worker.is_alive():
            worker.join(0.2)
            if worker.is_alive():
                progress(int(self._entry.step.value))
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def planned_peak(self, symbols: Mapping[str, int]) -> tuple[int, str, dict[str, int]]:
        """(bytes, formula, symbol values) of the compiler's memory plan for
        these launch symbols, with each dynamic bound at its max."""
        values = dict(symbols)
        for s in self.manifest["symbols"]:
            if s["kind"] == "dynamic" and s["max"] is not None:
                values.setdefault(s["name"], s["max"])
        memory = self.manifest["memory"]
        total = evaluate(from_json(memory["peak"]), values)
        if total is None:
            raise ArtifactError("the manifest's memory plan names symbols it does not describe")
        return total, memory["formula"], values

    def _check_memory(self, symbols: dict[str, int], limit: int | None) -> None:
        source = "memory_limit"
        if limit is None and os.environ.get("PDG_MEMORY_LIMIT"):
            source = "PDG_MEMORY_LIMIT"
            try:
                limit = parse_bytes(os.environ["PDG_MEMORY_LIMIT"])
            except ValueError as e:
                raise RunError(f"PDG_MEMORY_LIMIT: {e}") from None
        if limit is None:
            return
        total, text, values = self.planned_peak(symbols)
        if total > limit:
            at = ", ".join(f"{k}={v}" for k, v in sorted(values.items()))
            raise RunError(
                f"the planned peak memory {total} bytes ({total / 2**20:.1f} MiB) exceeds "
                f"{source} = {limit} bytes: peak = {text} at {at} (dynamic bounds at their "
                "max); raise the limit or run with smaller symbol values"
            )

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

    def _check_symbols(self, given: dict[str, int]) -> dict[str, int]:
        launch = self.launch_symbols
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
            if value < 1 or (spec["max"] is not None and value > spec["max"]):
                raise RunError(
                    f"symbol {name} = {value} is outside 1..{spec['max']} (the bound of dim "
                    f"'{spec['dim']}' declared `max {spec['max']}`)"
                )
            values[name] = int(value)
        return values

    def _extent(self, dim: str, symbols: dict[str, int]) -> int:
        for s in self.manifest["symbols"]:
            if s["dim"] == dim:
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
            array = np.asarray(inputs[name])
            want = np.dtype(ELEMENTS[spec["element"]])
            if array.dtype != want:
                raise RunError(
                    f"input {name} has dtype {array.dtype}, the program takes {want}; "
                    f"convert it with .astype(np.{want.name})"
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


def parse_bytes(text: str) -> int:
    """`1000`, `64K`, `512M`, `2G` (powers of 1024) -> bytes."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (t[:-1], t[-1]) if t and t[-1] in units else (t, "")
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise ValueError(f"'{text}' is not a byte count (e.g. 512M, 2G)") from None
    if value < 0:
        raise ValueError(f"'{text}' is negative")
    return int(value)


def load(path: str | Path) -> CompiledProgram:
    """Loads the artifact at `path` after checking its manifest and parts."""
    from pdg import __version__

    path = Path(path)
    return CompiledProgram(path, read_manifest(path, __version__))
