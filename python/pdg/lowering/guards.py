"""Checks on node bodies before upstream passes see them.

The MLIR build has assertions: some IR that verifies still aborts the
process in a folder (e.g. `tensor.dim %x, %c-1`: a constant index outside
the rank). Each such case is refused here with a located error instead.
This is the one place for these workarounds in the lowering."""

from __future__ import annotations

from mlir import ir

from pdg.passes.registry import PassError


def _constant_index(value: ir.Value) -> int | None:
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "arith.constant":
        return None
    attr = owner.operation.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


# Frees written in the input: upstream's buffer deallocation, which the
# lowering runs on every function of the module, fails on them (an
# internal error, found by the fuzzer).
FREES = ("memref.dealloc",)


def check_bodies(module: ir.Module) -> None:
    """Raises PassError at the first body op that would abort a folder."""
    problems: list[tuple[str, ir.Location]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in FREES:
            problems.append(
                (
                    f"{op.name} in a function of the module: the lowering places "
                    "every free itself (buffer deallocation); remove it",
                    op.location,
                )
            )
            return ir.WalkResult.INTERRUPT
        if op.name in ("tensor.dim", "memref.dim"):
            index = _constant_index(op.operands[1])
            rank = ir.ShapedType(op.operands[0].type).rank
            if index is not None and not 0 <= index < rank:
                problems.append(
                    (
                        f"{op.name} takes dimension {index} of a rank-{rank} value; the "
                        f"index must be in 0..{rank - 1}",
                        op.location,
                    )
                )
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if problems:
        message, location = problems[0]
        raise PassError(message, location)


LIMIT = 1 << 62  # index arithmetic on larger constants may overflow int64


def _largest_constant(expr: ir.AffineExpr) -> int:
    expr = expr.maybe_downcast()
    if isinstance(expr, ir.AffineConstantExpr):
        return abs(expr.value)
    if isinstance(expr, ir.AffineBinaryExpr):
        return max(_largest_constant(expr.lhs), _largest_constant(expr.rhs))
    return 0


def check_affine_constants(nodes) -> None:
    """Refuses accesses and case conditions with constants near the int64
    limit: their printed form (e.g. `d0 - 9223372036854775808`) does not
    parse back, and index arithmetic on them overflows."""
    for node in nodes:
        v = node.value
        for case in node.cases:
            exprs = [e for e, _ in case.constraints]
            for read in case.reads:
                for entry in read.affine:
                    exprs += [entry[1]] if entry[0] == "point" else [*entry[1], *entry[2]]
            if any(_largest_constant(e) >= LIMIT for e in exprs):
                raise PassError(
                    f"'{v.name}' has an access or case condition with a constant beyond "
                    f"±2^62; the lowering computes indices in int64",
                    v.op.location,
                )


def check_inputs(model) -> None:
    """Refuses inputs over a dynamic dim: an input is given whole before the
    run, and a dynamic dim's length is only found while it runs (the
    interpreter refuses them too)."""
    for v in model.graph.values:
        if v.kind != "input":
            continue
        for d in v.domain:
            if model.graph.dims[d].kind == "dynamic":
                raise PassError(
                    f"input '{v.name}' is over dynamic dim '{d}', whose length is only found "
                    f"while the program runs; define it over static or launch dims and read "
                    f"it from a node over '{d}'",
                    v.op.location,
                )
