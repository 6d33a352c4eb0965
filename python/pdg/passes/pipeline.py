"""Running a textual pass pipeline that mixes upstream passes, pdg's C++
passes (both known to MLIR's registry) and pdg's Python passes.

`builtin.module(pdg-dce, canonicalize, func.func(cse))` is split at its top
level: consecutive registry passes run in one MLIR PassManager, a Python pass
runs on its own in between.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TextIO

from mlir import ir
from mlir.passmanager import PassManager

from pdg import _ext
from pdg.ir.source import Diagnostic, DiagnosticCollector, format_location, to_diagnostic

from .registry import PassError, get_pass


class PipelineError(Exception):
    """The pipeline text is malformed or names an unknown pass."""


@dataclass
class Stage:
    """Either a Python pass (`python`) or a list of registry pass texts."""

    python: str | None = None
    upstream: list[str] | None = None

    def describe(self) -> str:
        return self.python or ",".join(self.upstream or [])


def split_top_level(text: str) -> list[str]:
    """Splits `a, b{x=1,y=2}, op(c, d)` at commas outside brackets."""
    items, depth, current = [], 0, []
    for ch in text:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced '{ch}' in pass pipeline '{text}'")
        if ch == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if depth != 0:
        raise PipelineError(f"unbalanced brackets in pass pipeline '{text}'")
    tail = "".join(current).strip()
    if tail:
        items.append(tail)
    if any(not item for item in items):
        raise PipelineError(f"empty pass name in pass pipeline '{text}'")
    return items


def _element_name(element: str) -> str:
    for i, ch in enumerate(element):
        if ch in "({":
            return element[:i].strip()
    return element.strip()


_OPTION_AFTER_COMMA = re.compile(r",\s*([A-Za-z][\w-]*)\s*=")


def check_option_separators(text: str) -> None:
    """MLIR separates a pass's options with spaces (`{a=1 b=2}`); in
    `{a=1,b=2}` it reads `b=2` as part of a's value, so a misspelled or
    unknown option after a comma is never reported (a string option takes
    it whole). Refuses `,name=` outside brackets and quotes in any `{...}`."""
    opens: list[int] = []
    quoted = False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "({[":
            opens.append(i)
        elif ch in ")}]" and opens:
            opens.pop()
        elif ch == "," and opens and text[opens[-1]] == "{":
            m = _OPTION_AFTER_COMMA.match(text, i)
            if m:
                start = opens[-1]
                group = text[start : text.find("}", i) + 1 or len(text)]
                raise PipelineError(
                    f"pass options are separated by spaces, not commas: in '{group}', "
                    f"'{m.group(1)}=' would be read as part of the previous option's value; "
                    f"write '{group.replace(m.group(0), ' ' + m.group(0)[1:].lstrip())}'"
                )


def parse_pipeline(text: str) -> list[Stage]:
    """Parses `builtin.module(...)` (or a bare list) into stages."""
    text = text.strip()
    check_option_separators(text)
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module(") : -1]
    elif text.startswith(("any(",)):
        raise PipelineError("the top level of a pipeline must be builtin.module(...)")
    stages: list[Stage] = []
    for element in split_top_level(text) if text else []:
        name = _element_name(element)
        if get_pass(name) is not None:
            if element != name:
                raise PipelineError(f"pdg pass '{name}' takes no options")
            stages.append(Stage(python=name))
            continue
        if "(" not in element and not _ext.is_registered_pass(name):
            raise PipelineError(f"unknown pass '{name}'; `pdg-opt --list-passes` lists them all")
        if stages and stages[-1].upstream is not None:
            stages[-1].upstream.append(element)
        else:
            stages.append(Stage(upstream=[element]))
    return stages


def _verify(module: ir.Module) -> list[Diagnostic]:
    try:
        if module.operation.verify():
            return []
        return [Diagnostic("error", "<unknown>", "the module does not verify")]
    except ir.MLIRError as e:
        return [to_diagnostic(d) for d in e.error_diagnostics]


def run_pipeline(
    module: ir.Module,
    stages: list[Stage],
    print_after_all: bool = False,
    dump: TextIO | None = None,
) -> list[Diagnostic]:
    """Runs the stages on `module`. Returns the error diagnostics of the
    first failure, empty on success. IR after each stage goes to `dump`
    (upstream passes print to stderr themselves) when `print_after_all`."""
    for stage in stages:
        if stage.python is not None:
            # A Python pass may report located errors itself before it stops.
            with DiagnosticCollector(module.context, errors_only=True) as emitted:
                try:
                    get_pass(stage.python).run(module)
                    error = None
                except PassError as e:
                    error = e
            if error is not None:
                if error.reported:
                    return emitted.diagnostics
                where = format_location(error.location) if error.location else "<unknown>"
                return [
                    *emitted.diagnostics,
                    Diagnostic("error", where, f"{stage.python}: {error}"),
                ]
            failures = _verify(module)
            if failures:
                return failures
            if print_after_all and dump is not None:
                dump.write(f"// -----// IR Dump After {stage.python} //----- //\n")
                dump.write(str(module) + "\n")
            continue
        pm = PassManager("builtin.module", context=module.context)
        try:
            _ext.add_pass_pipeline(pm, ",".join(stage.upstream))
        except ValueError as e:
            raise PipelineError(str(e).strip()) from None
        if print_after_all:
            pm.enable_ir_printing(print_after_all=True, print_before_all=False)
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            return [to_diagnostic(d) for d in e.error_diagnostics] or [
                Diagnostic("error", "<unknown>", str(e))
            ]
    return []
