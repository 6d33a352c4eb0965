"""Affine expressions, maps and integer sets as small Python trees.

Accesses, case conditions and linalg indexing maps are evaluated with plain
`//` and `%`, which floor like MLIR's `floordiv` and `mod` (for the positive
divisors the verifier guarantees), on Python ints and NumPy arrays alike; so
one tree serves a single point in the engine and a whole iteration space in
linalg.generic. Symbols are read through `syms[pos]`, which may be a lazy
sequence: a dynamic bound is only computed when an expression uses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir

from .errors import InterpreterError


class Expr:
    """An affine expression over dims `d` and symbols `s`."""

    def eval(self, d: Sequence, s: Sequence):
        raise NotImplementedError

    def render(self, dims: Sequence[str], syms: Sequence[str]) -> str:
        raise NotImplementedError

    def symbols(self) -> set[int]:
        return set()


@dataclass(frozen=True)
class Const(Expr):
    value: int

    def eval(self, d, s):
        return self.value

    def render(self, dims, syms):
        return str(self.value)


@dataclass(frozen=True)
class Dim(Expr):
    pos: int

    def eval(self, d, s):
        return d[self.pos]

    def render(self, dims, syms):
        return dims[self.pos] if self.pos < len(dims) else f"d{self.pos}"


@dataclass(frozen=True)
class Sym(Expr):
    pos: int

    def eval(self, d, s):
        return s[self.pos]

    def render(self, dims, syms):
        return syms[self.pos] if self.pos < len(syms) else f"s{self.pos}"

    def symbols(self):
        return {self.pos}


@dataclass(frozen=True)
class Binary(Expr):
    op: str  # "+", "*", "floordiv", "ceildiv", "mod"
    lhs: Expr
    rhs: Expr

    def eval(self, d, s):
        a = self.lhs.eval(d, s)
        b = self.rhs.eval(d, s)
        if self.op == "+":
            return a + b
        if self.op == "*":
            return a * b
        if self.op == "floordiv":
            return a // b
        if self.op == "ceildiv":
            return -((-a) // b)
        return a % b

    def render(self, dims, syms):
        lhs = self.lhs.render(dims, syms)
        if self.op == "+":
            # `a + b * -1` reads better as `a - b`, `a + -3` as `a - 3`.
            r = self.rhs
            if isinstance(r, Const) and r.value < 0:
                return f"{lhs} - {-r.value}"
            if isinstance(r, Binary) and r.op == "*" and r.rhs == Const(-1):
                return f"{lhs} - {_paren(r.lhs, dims, syms)}"
            return f"{lhs} + {self.rhs.render(dims, syms)}"
        if self.op == "*" and self.rhs == Const(-1):
            return f"-{_paren(self.lhs, dims, syms)}"
        op = {"*": "*"}.get(self.op, self.op)
        return f"{_paren(self.lhs, dims, syms)} {op} {_paren(self.rhs, dims, syms)}"

    def symbols(self):
        return self.lhs.symbols() | self.rhs.symbols()


def _paren(e: Expr, dims, syms) -> str:
    text = e.render(dims, syms)
    return f"({text})" if isinstance(e, Binary) and e.op == "+" else text


_BINARY = (
    (ir.AffineAddExpr, "+"),
    (ir.AffineMulExpr, "*"),
    (ir.AffineFloorDivExpr, "floordiv"),
    (ir.AffineCeilDivExpr, "ceildiv"),
    (ir.AffineModExpr, "mod"),
)


def from_mlir(e: ir.AffineExpr) -> Expr:
    """Converts an MLIR affine expression (any of the bindings' subclasses)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return Const(int(e.value))
    if isinstance(e, ir.AffineDimExpr):
        return Dim(int(e.position))
    if isinstance(e, ir.AffineSymbolExpr):
        return Sym(int(e.position))
    for cls, op in _BINARY:
        if isinstance(e, cls):
            return Binary(op, from_mlir(e.lhs), from_mlir(e.rhs))
    raise InterpreterError(f"unsupported affine expression {e}")


@dataclass(frozen=True)
class Map:
    """An affine map: `n_dims` dims, `n_syms` symbols, one Expr per result."""

    n_dims: int
    n_syms: int
    results: tuple[Expr, ...]

    def eval(self, d: Sequence, s: Sequence = ()) -> list:
        return [r.eval(d, s) for r in self.results]

    def is_projected_permutation(self) -> bool:
        """Distinct dims and constants only (linalg's broadcastable maps)."""
        dims = [r.pos for r in self.results if isinstance(r, Dim)]
        return len(dims) == len(set(dims)) and all(
            isinstance(r, (Dim, Const)) for r in self.results
        )

    def render(self) -> str:
        dims = [f"d{i}" for i in range(self.n_dims)]
        syms = [f"s{i}" for i in range(self.n_syms)]
        head = f"({', '.join(dims)})" + (f"[{', '.join(syms)}]" if syms else "")
        return f"{head} -> ({', '.join(r.render(dims, syms) for r in self.results)})"


def map_from_mlir(m: ir.AffineMap) -> Map:
    return Map(m.n_dims, m.n_symbols, tuple(from_mlir(e) for e in m.results))


def map_from_attr(a: ir.Attribute) -> Map:
    return map_from_mlir(ir.AffineMapAttr(a).value)


@dataclass(frozen=True)
class Constraint:
    expr: Expr
    is_eq: bool  # `expr == 0`, else `expr >= 0`


@dataclass(frozen=True)
class Condition:
    """An integer set: every constraint must hold."""

    n_dims: int
    n_syms: int
    constraints: tuple[Constraint, ...]

    def holds(self, d: Sequence[int], s: Sequence[int]) -> bool:
        for c in self.constraints:
            v = c.expr.eval(d, s)
            if (v != 0) if c.is_eq else (v < 0):
                return False
        return True

    def is_always_true(self) -> bool:
        return all(
            isinstance(c.expr, Const) and (c.expr.value == 0 or not c.is_eq and c.expr.value > 0)
            for c in self.constraints
        )

    def render(self, dims: Sequence[str], syms: Sequence[str]) -> str:
        if self.is_always_true():
            return "default"
        parts = [
            f"{c.expr.render(dims, syms)} {'==' if c.is_eq else '>='} 0" for c in self.constraints
        ]
        return "(" + ", ".join(parts) + ")"


def condition_from_attr(attr: ir.Attribute) -> Condition:
    """An IntegerSetAttr as a Condition (constraints `e >= 0` / `e == 0`)."""
    from pdg import _ext

    amap, eqs = _ext.integer_set_parts(attr)
    constraints = tuple(Constraint(from_mlir(e), q) for e, q in zip(amap.results, eqs, strict=True))
    return Condition(amap.n_dims, amap.n_symbols, constraints)
