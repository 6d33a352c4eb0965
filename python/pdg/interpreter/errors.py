"""The one exception the interpreter raises, and how it is worded.

Every failure -- a bad input, a read outside a domain, an unsupported op, a
UDF that raised -- becomes an `InterpreterError` saying what went wrong,
where (the node and point, the op and its location) and, when we can, a hint.
Context is added as the error travels outwards: the op handler knows "what",
the body executor adds the op and its location, the engine the node and point.
"""

from __future__ import annotations


class InterpreterError(Exception):
    """A program could not be interpreted; `str(e)` is the full report."""

    def __init__(self, what: str, *, where: str | None = None, hint: str | None = None):
        self.what = what
        self.where: list[str] = [where] if where else []
        self.hint = hint
        super().__init__(self._render())

    def add_where(self, where: str) -> InterpreterError:
        """Prepends an outer context (e.g. the node and point) and returns self."""
        if where not in self.where:
            self.where.insert(0, where)
            self.args = (self._render(),)
        return self

    def with_hint(self, hint: str) -> InterpreterError:
        if not self.hint:
            self.hint = hint
            self.args = (self._render(),)
        return self

    def _render(self) -> str:
        text = f"{', '.join(self.where)}: {self.what}" if self.where else self.what
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def __str__(self) -> str:
        return self._render()


def format_point(dims: tuple[str, ...] | list[str], point: tuple[int, ...]) -> str:
    """`(b=0, t=3)`; `()` for the single point of a value without dims."""
    return "(" + ", ".join(f"{d}={i}" for d, i in zip(dims, point, strict=False)) + ")"
