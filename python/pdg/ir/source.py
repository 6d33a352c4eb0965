"""Parsing pdg IR with diagnostics that name the file, line and column."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mlir import ir


@dataclass
class Diagnostic:
    """One diagnostic, already rendered as `file:line:col: severity: msg`."""

    severity: str
    location: str
    message: str
    notes: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"{self.location}: {self.severity}: {self.message}"]
        # Notes such as "see current operation" can hold a whole dump of the
        # IR: show their first line only.
        lines += [f"  note: {n.splitlines()[0] if n else n}" for n in self.notes]
        return "\n".join(lines)


class ParseFailure(Exception):
    """Raised when IR does not parse or verify; holds the diagnostics."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.render() for d in diagnostics))


_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


def format_location(loc: ir.Location) -> str:
    """`file:line:col` for file locations, else MLIR's own rendering."""
    if loc.is_a_file():
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
    if loc.is_a_name() and loc.child_loc is not None:
        return format_location(loc.child_loc)
    if loc.is_a_callsite():
        return format_location(loc.callee)
    if loc.is_a_fused():
        inner = [format_location(x) for x in loc.locations]
        return inner[0] if inner else str(loc)
    return str(loc)


def to_diagnostic(d: ir.Diagnostic) -> Diagnostic:
    return Diagnostic(
        severity=_SEVERITY.get(d.severity, "error"),
        location=format_location(d.location),
        message=d.message,
        notes=[f"{format_location(n.location)}: {n.message}" for n in d.notes],
    )


class DiagnosticCollector:
    """Collects every diagnostic of a context while in use (only the errors
    with `errors_only`; the others then reach the handlers outside)."""

    def __init__(self, ctx: ir.Context, errors_only: bool = False):
        self.ctx = ctx
        self.errors_only = errors_only
        self.diagnostics: list[Diagnostic] = []
        self._handler = None

    def __enter__(self) -> DiagnosticCollector:
        def handle(d: ir.Diagnostic) -> bool:
            diagnostic = to_diagnostic(d)
            if self.errors_only and diagnostic.severity != "error":
                return False
            self.diagnostics.append(diagnostic)
            return True

        self._handler = self.ctx.attach_diagnostic_handler(handle)
        return self

    def __exit__(self, *exc) -> None:
        self._handler.detach()
        # The handler (a nanobind object, invisible to Python's cycle
        # collector) holds `handle`, which holds self: drop it, or the cycle
        # keeps the whole context alive (2 MB leaked per parse).
        self._handler = None

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def parse_text(text: str, filename: str, ctx: ir.Context, verify: bool = True) -> ir.Module:
    """Parses (and verifies) `text`; raises ParseFailure with diagnostics."""
    from pdg._ext import parse_source

    with DiagnosticCollector(ctx) as diags:
        module = parse_source(text, filename, ctx, verify)
    if module is None:
        if not diags.errors:
            diags.diagnostics.append(Diagnostic("error", filename, "failed to parse the input"))
        raise ParseFailure(diags.diagnostics)
    return module


def decode_source(data: bytes, filename: str) -> str:
    """`data` as UTF-8 text; raises ParseFailure located at the first byte
    that is not UTF-8 (line, column and byte offset), as MLIR reads only
    UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - line_start + 1  # in bytes, as MLIR counts columns
        bad = " ".join(f"0x{b:02x}" for b in data[e.start : e.end])
        message = (
            f"the input is not UTF-8 text: byte {bad} at byte offset {e.start} "
            f"({e.reason}); hint: pdg reads IR as UTF-8, convert the file "
            "(e.g. `iconv -t UTF-8`) or check that it is not a binary file"
        )
        raise ParseFailure([Diagnostic("error", f"{filename}:{line}:{column}", message)]) from None


def read_source(path: str | Path) -> str:
    """The text of the file at `path`: OSError if it cannot be read,
    ParseFailure if it is not UTF-8."""
    return decode_source(Path(path).read_bytes(), str(path))


def parse_file(path: str | Path, ctx: ir.Context, verify: bool = True) -> ir.Module:
    return parse_text(read_source(path), str(path), ctx, verify=verify)
