"""`--verify-diagnostics`: check emitted diagnostics against
`// expected-error {{...}}` comments, as mlir-opt does.

Forms: `expected-error`, `-warning`, `-note`, `-remark`, optionally followed
by `@+N` / `@-N` (relative line) or `@above` / `@below`, then `{{text}}`,
matched as a substring of the message on that line. Every expectation must
be met, and every error or warning must be expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .source import Diagnostic

_EXPECT = re.compile(
    r"expected-(error|warning|note|remark)\s*(@(?:[+-]\d+|above|below))?\s*\{\{(.*?)\}\}"
)


@dataclass
class Expectation:
    severity: str
    line: int  # 1-based line the diagnostic must be on
    text: str
    comment_line: int
    matched: bool = False


def parse_expectations(text: str) -> list[Expectation]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        for m in _EXPECT.finditer(line):
            severity, where, message = m.groups()
            target = number
            if where == "@above":
                target = number - 1
            elif where == "@below":
                target = number + 1
            elif where:
                target = number + int(where[1:])
            out.append(Expectation(severity, target, message, number))
    return out


def _line_of(location: str) -> int | None:
    m = re.search(r":(\d+):(\d+)$", location)
    return int(m.group(1)) if m else None


def check(
    expectations: list[Expectation], diagnostics: list[Diagnostic], filename: str
) -> list[str]:
    """Problems found, rendered as `file:line: error: ...` lines."""
    problems = []
    for d in diagnostics:
        line = _line_of(d.location)
        for e in expectations:
            if (
                not e.matched
                and e.severity == d.severity
                and e.line == line
                and e.text in d.message
            ):
                e.matched = True
                break
        else:
            if d.severity in ("error", "warning"):
                problems.append(f"{d.location}: error: unexpected {d.severity}: {d.message}")
        for note in d.notes:
            loc, _, message = note.partition(": ")
            for e in expectations:
                if (
                    not e.matched
                    and e.severity == "note"
                    and e.line == _line_of(loc)
                    and e.text in message
                ):
                    e.matched = True
                    break
    for e in expectations:
        if not e.matched:
            problems.append(
                f"{filename}:{e.comment_line}: error: expected {e.severity} "
                f'"{e.text}" was not produced (on line {e.line})'
            )
    return problems
