"""The reference interpreter: pdg programs run point by point with NumPy.

    from pdg.interpreter import interpret
    result = interpret("prog.mlir", {"a": a}, symbols={"B": 2})
    result.outputs["x"], result.bounds, result.stats

It is the semantic ground truth compiled programs are checked against: slow,
exact, and loud about anything undefined (reads outside a domain, no case
holding, division by zero, an op it does not know). Layout: `program` reads a
graph, `affine` evaluates accesses and conditions, `engine` runs the
demand-driven evaluation, `body` and `ops/` run node bodies, `linalg_generic`
structured ops, `result` the returned object; every failure is an
`InterpreterError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mlir import ir

from .engine import interpret_program
from .errors import InterpreterError
from .program import Program, load_program
from .result import Result

__all__ = ["InterpreterError", "Result", "interpret", "load_program"]


def interpret(
    program: ir.Module | ir.Operation | ir.OpView | str | Path | Program,
    inputs: Mapping[str, Any],
    symbols: Mapping[str, int] | None = None,
    udfs: Mapping[str, Callable] | None = None,
    max_steps: int | None = None,
    graph: str | None = None,
) -> Result:
    """Runs a pdg.graph and returns its outputs, dynamic bounds and stats.

    `program` is a module (its first pdg.graph, or the one named `graph`), a
    pdg.graph op, or the path of a .mlir file. `inputs` maps each pdg.input
    name to an array of shape (*domain extents, *point shape) and the
    point's dtype; `symbols` gives launch bounds (e.g. {"B": 4}); `udfs` maps
    each pdg.udf callee to a Python callable; `max_steps` caps dynamic dims
    (required for one without a `max`). Raises InterpreterError.
    """
    prog = program if isinstance(program, Program) else load_program(program, graph)
    return interpret_program(prog, inputs, symbols, udfs, max_steps)
