"""Index expressions over dimensions: what goes inside `x[...]`.

`t - 1`, `(t // 16) * 16`, `t % 4` are affine expressions of the consumer's
dims and the bound symbols (`T`); `pdg.max(0, t - 63)` / `pdg.min(...)` are
allowed as slice bounds. Comparisons build `Condition`s for case
definitions: `x[t == 0] = ...; x[t > 0] = ...`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ProgramError


class IndexExpr:
    """An affine expression. Subclasses: Const, DimRef, SymRef, and the
    compound forms below. Comparisons return Conditions, so an IndexExpr
    cannot be used as a bool or in `==` tests by accident."""

    # -- arithmetic ---------------------------------------------------------
    def __add__(self, other):
        return Sum(self, as_index(other))

    def __radd__(self, other):
        return Sum(as_index(other), self)

    def __sub__(self, other):
        return Sum(self, _negate(as_index(other)))

    def __rsub__(self, other):
        return Sum(as_index(other), _negate(self))

    def __neg__(self):
        return _negate(self)

    def __mul__(self, other):
        other = as_index(other)
        if isinstance(other, Const) and isinstance(self, Const):
            return Const(self.value * other.value)
        if isinstance(other, Const):
            return Scaled(self, other.value)
        if isinstance(self, Const):
            return Scaled(other, self.value)
        raise ProgramError(
            f"index expression '{self} * {other}' is not affine",
            hint="multiply a dim by a constant only",
        )

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return Div(self, _positive_constant(other, "//"), "floordiv")

    def __mod__(self, other):
        return Div(self, _positive_constant(other, "%"), "mod")

    # -- comparisons ---------------------------------------------------------
    def __eq__(self, other):  # type: ignore[override]
        return Condition((Constraint(self - as_index(other), "=="),))

    def __ne__(self, other):  # type: ignore[override]
        raise ProgramError(
            "'!=' cannot define a case (its points are not one affine set)",
            hint="write two cases, e.g. (t < k) and (t > k)",
        )

    def __ge__(self, other):
        return Condition((Constraint(self - as_index(other), ">="),))

    def __gt__(self, other):
        return Condition((Constraint(self - as_index(other) - 1, ">="),))

    def __le__(self, other):
        return Condition((Constraint(as_index(other) - self, ">="),))

    def __lt__(self, other):
        return Condition((Constraint(as_index(other) - self - 1, ">="),))

    __hash__ = object.__hash__

    def __bool__(self):
        raise ProgramError(
            f"index expression '{self}' has no truth value",
            hint="use pdg.max/pdg.min for slice bounds, not Python's max/min",
        )

    # -- introspection ------------------------------------------------------
    def names(self) -> set[str]:
        """Dim and symbol names the expression mentions."""
        raise NotImplementedError

    def render(self) -> str:
        """In the pdg dialect's access syntax."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"IndexExpr({self.render()})"


def _negate(e: IndexExpr) -> IndexExpr:
    if isinstance(e, Const):
        return Const(-e.value)
    if isinstance(e, Scaled):
        return Scaled(e.expr, -e.factor)
    return Scaled(e, -1)


def _positive_constant(value, op: str) -> int:
    if isinstance(value, Const):
        value = value.value
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ProgramError(f"'{op}' in an index needs a positive integer constant, got {value!r}")
    return value


def as_index(value) -> IndexExpr:
    if isinstance(value, IndexExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProgramError(
            f"expected an index expression (a dim, an int or an affine combination), "
            f"got {type(value).__name__} {value!r}"
        )
    return Const(value)


@dataclass(eq=False)
class Const(IndexExpr):
    value: int

    def names(self):
        return set()

    def render(self):
        return str(self.value)


@dataclass(eq=False)
class _Name(IndexExpr):
    """An index written as a name."""

    name: str

    def names(self):
        return {self.name}

    def render(self):
        return self.name


class DimRef(_Name):
    """A dimension used as an index: the consumer's current coordinate."""


class SymRef(_Name):
    """A bound symbol: the size of a launch or dynamic dim (`T`)."""


@dataclass(eq=False)
class Sum(IndexExpr):
    lhs: IndexExpr
    rhs: IndexExpr

    def names(self):
        return self.lhs.names() | self.rhs.names()

    def render(self):
        rhs = self.rhs
        if isinstance(rhs, Scaled) and rhs.factor < 0:
            return f"{self.lhs.render()} - {_atom(Scaled(rhs.expr, -rhs.factor))}"
        if isinstance(rhs, Const) and rhs.value < 0:
            return f"{self.lhs.render()} - {-rhs.value}"
        return f"{self.lhs.render()} + {_atom(rhs)}"


@dataclass(eq=False)
class Scaled(IndexExpr):
    expr: IndexExpr
    factor: int

    def names(self):
        return self.expr.names()

    def render(self):
        if self.factor == 1:
            return self.expr.render()
        if self.factor == -1:
            return f"-{_atom(self.expr)}"
        return f"{_atom(self.expr)} * {self.factor}"


@dataclass(eq=False)
class Div(IndexExpr):
    expr: IndexExpr
    divisor: int
    op: str  # floordiv | mod

    def names(self):
        return self.expr.names()

    def render(self):
        return f"{_atom(self.expr)} {self.op} {self.divisor}"


def linear_form(e: IndexExpr) -> dict[str, int] | None:
    """An affine index expression as {name: coefficient, "": constant}
    (`2 * t - 1` is {"t": 2, "": -1}); None when it divides (floordiv,
    mod), which callers compare structurally."""
    if isinstance(e, Const):
        return {"": e.value}
    if isinstance(e, _Name):
        return {e.name: 1}
    if isinstance(e, Sum):
        a, b = linear_form(e.lhs), linear_form(e.rhs)
        if a is None or b is None:
            return None
        return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}
    if isinstance(e, Scaled):
        inner = linear_form(e.expr)
        return None if inner is None else {k: v * e.factor for k, v in inner.items()}
    return None


def _atom(e: IndexExpr) -> str:
    text = e.render()
    return (
        text if isinstance(e, (Const, DimRef, SymRef)) and not text.startswith("-") else f"({text})"
    )


@dataclass(eq=False)
class BoundList:
    """`pdg.max(a, b)` / `pdg.min(a, b)`: only valid as a slice bound."""

    kind: str  # max | min
    exprs: tuple

    def names(self):
        out = set()
        for e in self.exprs:
            out |= e.names()
        return out

    def __bool__(self):
        raise ProgramError(f"pdg.{self.kind}(...) is only valid as a slice bound")


def max(*exprs) -> BoundList:  # noqa: A001  (mirrors the access syntax)
    """The largest of affine expressions: a slice lower bound."""
    if not exprs:
        raise ProgramError("pdg.max needs at least one expression")
    return BoundList("max", tuple(as_index(e) for e in exprs))


def min(*exprs) -> BoundList:  # noqa: A001
    """The smallest of affine expressions: a slice upper bound."""
    if not exprs:
        raise ProgramError("pdg.min needs at least one expression")
    return BoundList("min", tuple(as_index(e) for e in exprs))


@dataclass(frozen=True, eq=False)
class Constraint:
    expr: IndexExpr
    kind: str  # '>=' or '==' (against 0)

    def render(self) -> str:
        return f"{self.expr.render()} {self.kind} 0"


@dataclass(frozen=True, eq=False)
class Condition:
    """A conjunction of affine constraints: the points where a case holds."""

    constraints: tuple

    def __and__(self, other: Condition) -> Condition:
        if not isinstance(other, Condition):
            raise ProgramError("'&' combines two conditions, e.g. (t >= 1) & (t < 8)")
        return Condition(self.constraints + other.constraints)

    def __bool__(self):
        raise ProgramError(
            "a condition on dims has no truth value (Python's if, and/or, max and min need one)",
            hint="use pdg.max/pdg.min for slice bounds, '&' to combine conditions, "
            "and x[cond] = value to define a case",
        )

    def names(self) -> set[str]:
        out = set()
        for c in self.constraints:
            out |= c.expr.names()
        return out

    def render(self) -> str:
        return ", ".join(c.render() for c in self.constraints)

    def key(self) -> str:
        return self.render()
