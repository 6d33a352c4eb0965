"""Byte counts as polynomials in the bound symbols: {(factors...): coeff}.
Shared by the compiler's memory report and the runtime's memory limit, so
the runtime needs no MLIR to evaluate what the compiler planned.

A factor is a symbol (`B`) or, in parentheses, an affine extent such as
`(B * 2)` or `(max(B, 64))`. Factors come from an artifact's manifest, so
they are parsed by the small grammar below and never evaluated as Python:

    expr   := term (('+' | '-') term)*
    term   := unary (('*' | 'floordiv' | 'ceildiv' | 'mod') unary)*
    unary  := '-' unary | atom
    atom   := INT | NAME | ('max' | 'min') '(' expr (',' expr)* ')' | '(' expr ')'
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")
_MAX_TEXT = 1000  # longer factors are not what the compiler writes


class FormulaError(ValueError):
    """A factor that is not an expression of the grammar above."""


class _Missing(Exception):
    """A symbol without a value."""


def formula(monomials: dict) -> str:
    terms = []
    for syms, coeff in sorted(monomials.items(), key=lambda kv: (len(kv[0]), kv[0])):
        if coeff == 0:
            continue
        terms.append(" * ".join([str(coeff), *syms]) if syms else str(coeff))
    return " + ".join(terms) or "0"


def evaluate(monomials: dict, symbols: dict[str, int]) -> int | None:
    """The value for the given symbols; None if one is missing. Raises
    FormulaError for a factor that does not parse."""
    total = 0
    try:
        for syms, coeff in monomials.items():
            value = coeff
            for s in syms:
                value *= evaluate_factor(s, symbols)
            total += value
    except _Missing:
        return None
    return total


def evaluate_factor(text: str, symbols: dict[str, int]) -> int:
    """A symbol or a parenthesized extent, for `symbols`."""
    if not isinstance(text, str) or len(text) > _MAX_TEXT:
        raise FormulaError(f"'{str(text)[:40]}' is not a size expression")
    tokens = []
    for number, name, other in _TOKEN.findall(text):
        if number:
            tokens.append(("int", int(number)))
        elif name:
            tokens.append(("name", name))
        elif other.strip():
            tokens.append(("op", other))
    parser = _Parser(tokens, symbols, text)
    value = parser.expr()
    if parser.pos != len(tokens):
        raise FormulaError(f"'{text}' is not a size expression (at token {parser.pos + 1})")
    return value


class _Parser:
    def __init__(self, tokens: list, symbols: dict[str, int], text: str):
        self.tokens = tokens
        self.symbols = symbols
        self.text = text
        self.pos = 0
        self.depth = 0

    def peek(self) -> tuple | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, kind: str, value=None):
        token = self.peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            raise FormulaError(f"'{self.text}' is not a size expression")
        self.pos += 1
        return token[1]

    def expr(self) -> int:
        self.depth += 1
        if self.depth > 50:
            raise FormulaError(f"'{self.text[:40]}...' nests too deeply")
        value = self.term()
        while (t := self.peek()) in (("op", "+"), ("op", "-")):
            self.pos += 1
            rhs = self.term()
            value = value + rhs if t[1] == "+" else value - rhs
        self.depth -= 1
        return value

    def term(self) -> int:
        value = self.unary()
        while (t := self.peek()) is not None and (
            t == ("op", "*") or (t[0] == "name" and t[1] in ("floordiv", "ceildiv", "mod"))
        ):
            self.pos += 1
            rhs = self.unary()
            if t[1] == "*":
                value *= rhs
            elif rhs == 0:
                raise FormulaError(f"'{self.text}' divides by zero")
            elif t[1] == "floordiv":
                value //= rhs
            elif t[1] == "ceildiv":
                value = -(-value // rhs)
            else:
                value %= rhs
        return value

    def unary(self) -> int:
        sign = 1
        while self.peek() == ("op", "-"):
            self.pos += 1
            sign = -sign
        return sign * self.atom()

    def atom(self) -> int:
        token = self.peek()
        if token is None:
            raise FormulaError(f"'{self.text}' ends early")
        kind, value = token
        self.pos += 1
        if kind == "int":
            return value
        if kind == "name" and value in ("max", "min") and self.peek() == ("op", "("):
            self.pos += 1
            args = [self.expr()]
            while self.peek() == ("op", ","):
                self.pos += 1
                args.append(self.expr())
            self.take("op", ")")
            return max(args) if value == "max" else min(args)
        if kind == "name" and value not in ("floordiv", "ceildiv", "mod", "max", "min"):
            if value not in self.symbols:
                raise _Missing(value)
            return int(self.symbols[value])
        if token == ("op", "("):
            inner = self.expr()
            self.take("op", ")")
            return inner
        raise FormulaError(f"'{self.text}' is not a size expression")


def to_json(monomials: dict) -> list:
    return [[list(syms), coeff] for syms, coeff in sorted(monomials.items())]


def from_json(items) -> dict:
    """The inverse of to_json; FormulaError if `items` is not of its form."""
    if not isinstance(items, list):
        raise FormulaError("a memory formula must be a list of [factors, bytes] pairs")
    monomials = {}
    for item in items:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], list)
            or not all(isinstance(f, str) for f in item[0])
            or isinstance(item[1], bool)
            or not isinstance(item[1], int)
        ):
            raise FormulaError(f"{str(item)[:60]} is not a [factors, bytes] pair")
        monomials[tuple(item[0])] = item[1]
    return monomials
