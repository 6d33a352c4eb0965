"""Byte counts as polynomials in the bound symbols: {(symbols...): coeff}.
Shared by the compiler's memory report and the runtime's memory limit, so
the runtime needs no MLIR to evaluate what the compiler planned."""

from __future__ import annotations


def formula(monomials: dict) -> str:
    terms = []
    for syms, coeff in sorted(monomials.items(), key=lambda kv: (len(kv[0]), kv[0])):
        if coeff == 0:
            continue
        terms.append(" * ".join([str(coeff), *syms]) if syms else str(coeff))
    return " + ".join(terms) or "0"


def evaluate(monomials: dict, symbols: dict[str, int]) -> int | None:
    """The value for the given symbols; None if one is missing."""
    total = 0
    for syms, coeff in monomials.items():
        value = coeff
        for s in syms:
            if s.startswith("("):  # a factor such as (B * 2) or (max(B, 64))
                try:
                    value *= int(eval(s, {"__builtins__": {}, "max": max}, dict(symbols)))  # noqa: S307
                except NameError:
                    return None
                continue
            if s not in symbols:
                return None
            value *= symbols[s]
        total += value
    return total


def to_json(monomials: dict) -> list:
    return [[list(syms), coeff] for syms, coeff in sorted(monomials.items())]


def from_json(items: list) -> dict:
    return {tuple(syms): int(coeff) for syms, coeff in items}
