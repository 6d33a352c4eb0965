"""Structured linalg ops (generic, reduce, map, named ops) on whole arrays.

Every structured op is run the same way: its indexing maps give the extents
of the iteration space; each operand is viewed over that space (constant
results index, missing dims broadcast; other affine results gather); the
region runs ONCE on those arrays, its scalar ops working elementwise.

Loop dims missing from some output's map are reduced. When every output
yields `combiner(x, its block argument)` with a known associative combiner
and an `x` that reads no output, `x` is reduced with the matching NumPy
reduction (a multiply-add becomes an einsum) and combined with the init.
Anything else -- argmax written with cmpf and select, say -- runs the region
once per reduction point in lexicographic order, vectorized over the other
dims: exactly the loop order the op defines, so ties go to the first index.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .affine import Const, Dim, Map
from .body import BodyOp, Executor, Region
from .errors import InterpreterError
from .types import ElemType, as_signed, as_unsigned, elem_of, wrap

# Combiner op -> (NumPy ufunc reducing the values, read integers as unsigned).
_COMBINERS: dict[str, tuple[np.ufunc, bool]] = {
    "arith.addf": (np.add, False),
    "arith.mulf": (np.multiply, False),
    "arith.maximumf": (np.maximum, False),
    "arith.minimumf": (np.minimum, False),
    "arith.maxnumf": (np.fmax, False),
    "arith.minnumf": (np.fmin, False),
    "arith.addi": (np.add, False),
    "arith.muli": (np.multiply, False),
    "arith.maxsi": (np.maximum, False),
    "arith.minsi": (np.minimum, False),
    "arith.maxui": (np.maximum, True),
    "arith.minui": (np.minimum, True),
    "arith.andi": (np.bitwise_and, False),
    "arith.ori": (np.bitwise_or, False),
    "arith.xori": (np.bitwise_xor, False),
}

# Unary elementwise ops a contraction may apply to its operands (mixed types).
_CASTS = {
    "arith.extf",
    "arith.truncf",
    "arith.sitofp",
    "arith.uitofp",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
}


@dataclass(frozen=True)
class Reduction:
    """How output k is reduced: `combiner(x, out_k)`, x in slot `x_slot`."""

    combiner: BodyOp
    x_slot: int
    out_first: bool  # the block argument is the combiner's first operand


@dataclass(frozen=True)
class Contraction:
    """Output = combiner(out, mul(cast(in_a), cast(in_b))): an einsum."""

    a: int  # input numbers
    b: int
    a_casts: tuple[BodyOp, ...]
    b_casts: tuple[BodyOp, ...]
    mul: BodyOp


def _reductions(region: Region, n_ins: int, n_outs: int) -> list[Reduction] | None:
    out_args = set(region.args[n_ins:])
    plans = []
    for k, y in enumerate(region.yields):
        op = region.defining_op.get(y)
        if op is None or op.name not in _COMBINERS or len(op.operands) != 2:
            return None
        mine = region.args[n_ins + k]
        lhs, rhs = op.operands
        if lhs == mine:
            x, first = rhs, True
        elif rhs == mine:
            x, first = lhs, False
        else:
            return None
        if region.arg_deps.get(x, frozenset()) & out_args or x in out_args:
            return None
        plans.append(Reduction(op, x, first))
    return plans


def _trace_input(region: Region, slot: int, n_ins: int) -> tuple[int, tuple[BodyOp, ...]] | None:
    """The input whose block argument `slot` is, through unary casts."""
    casts = []
    while slot not in region.args:
        op = region.defining_op.get(slot)
        if op is None or op.name not in _CASTS:
            return None
        casts.append(op)
        slot = op.operands[0]
    i = region.args.index(slot)
    return (i, tuple(reversed(casts))) if i < n_ins else None


def _contraction(region: Region, plan: list[Reduction], n_ins: int) -> Contraction | None:
    if len(plan) != 1 or plan[0].combiner.name not in ("arith.addf", "arith.addi"):
        return None
    mul = region.defining_op.get(plan[0].x_slot)
    if mul is None or mul.name not in ("arith.mulf", "arith.muli"):
        return None
    a = _trace_input(region, mul.operands[0], n_ins)
    b = _trace_input(region, mul.operands[1], n_ins)
    if a is None or b is None:
        return None
    return Contraction(a[0], b[0], a[1], b[1], mul)


def loop_extents(maps: Sequence[Map], operands: Sequence[np.ndarray]) -> list[int]:
    n = maps[0].n_dims
    extents: list[int | None] = [None] * n
    for k, (m, a) in enumerate(zip(maps, operands, strict=True)):
        if m.n_dims != n:
            raise InterpreterError(f"indexing map #{k} has {m.n_dims} dims, expected {n}")
        if len(m.results) != a.ndim:
            raise InterpreterError(
                f"indexing map #{k} ({m.render()}) has {len(m.results)} results but operand "
                f"#{k} has rank {a.ndim}"
            )
        for j, r in enumerate(m.results):
            if isinstance(r, Dim):
                size = a.shape[j]
                if extents[r.pos] is None:
                    extents[r.pos] = size
                elif extents[r.pos] != size:
                    raise InterpreterError(
                        f"loop dim d{r.pos} has extent {extents[r.pos]} from one operand "
                        f"and {size} from operand #{k}",
                        hint="operand shapes must agree with the indexing maps",
                    )
    missing = [d for d, e in enumerate(extents) if e is None]
    if missing:
        raise InterpreterError(
            f"cannot infer the extent of loop dims {[f'd{d}' for d in missing]}: no operand "
            "indexes them with a plain dim"
        )
    return [int(e) for e in extents]  # type: ignore[arg-type]


def _loop_indices(extents: Sequence[int], fixed: dict[int, int]) -> list:
    n = len(extents)
    return [
        fixed[d]
        if d in fixed
        else np.arange(extents[d], dtype=np.int64).reshape(
            [extents[d] if i == d else 1 for i in range(n)]
        )
        for d in range(n)
    ]


def _index_by_map(m: Map, fixed: dict[int, int]) -> tuple[list, list[int]]:
    """NumPy index of an operand through a projected-permutation map: a
    constant, the fixed value, or a full slice per result, and the loop dims
    those slices follow."""
    idx, dims = [], []
    for r in m.results:
        if isinstance(r, Const):
            idx.append(r.value)
        elif r.pos in fixed:
            idx.append(fixed[r.pos])
        else:
            idx.append(slice(None))
            dims.append(r.pos)
    return idx, dims


def lanes(a: np.ndarray, m: Map, extents: Sequence[int], fixed: dict[int, int]) -> np.ndarray:
    """`a` viewed over the iteration space: rank n, size 1 where it does not vary.

    Dims in `fixed` are held at one value (size 1 in the result)."""
    n = len(extents)
    if m.is_projected_permutation():
        for j, r in enumerate(m.results):
            if isinstance(r, Const) and not 0 <= r.value < a.shape[j]:
                raise InterpreterError(
                    f"indexing map {m.render()} reads index {r.value} of an operand of "
                    f"shape {a.shape}"
                )
        idx, dims = _index_by_map(m, fixed)
        v = a[tuple(idx)]
        v = np.transpose(v, np.argsort(dims)) if dims else np.asarray(v)
        return v.reshape([extents[d] if d in dims else 1 for d in range(n)])
    # General affine results: gather, with every index checked.
    indices = _loop_indices(extents, fixed)
    idx = []
    for j, r in enumerate(m.results):
        i = np.asarray(r.eval(indices, ()))
        if np.any(i < 0) or np.any(i >= a.shape[j]):
            raise InterpreterError(
                f"indexing map {m.render()} reads outside an operand of shape {a.shape}"
            )
        idx.append(i)
    v = np.asarray(a[tuple(idx)])
    return v.reshape(v.shape if v.ndim == n else [1] * (n - v.ndim) + list(v.shape))


def write(out: np.ndarray, m: Map, y, extents: Sequence[int], fixed: dict[int, int]) -> None:
    """Stores `y` (over the iteration space) into `out` through output map `m`."""
    n = len(extents)
    idx, dims = _index_by_map(m, fixed)
    full = np.broadcast_to(y, [extents[d] if d in dims else 1 for d in range(n)])
    ordered = sorted(dims)
    full = full.reshape([extents[d] for d in ordered])
    out[tuple(idx)] = np.transpose(full, [ordered.index(d) for d in dims])


def _reduce(x, axes: tuple[int, ...], combiner: str, elem: ElemType) -> np.ndarray:
    ufunc, unsigned = _COMBINERS[combiner]
    if elem.is_integer:
        v = (as_unsigned if unsigned else as_signed)(x, elem)
        return wrap(ufunc.reduce(v, axis=axes, keepdims=True, dtype=v.dtype), elem)
    x = np.asarray(x)
    return ufunc.reduce(x, axis=axes, keepdims=True, dtype=x.dtype)


def _check_output_maps(maps: Sequence[Map], n_ins: int) -> None:
    for k, m in enumerate(maps[n_ins:]):
        if not m.is_projected_permutation():
            raise InterpreterError(
                f"output indexing map #{k} ({m.render()}) is not a projected permutation",
                hint="outputs must be indexed by distinct loop dims and constants",
            )


def run_structured(
    ex: Executor,
    op: BodyOp,
    maps: Sequence[Map],
    ins: Sequence,
    outs: Sequence,
    region: Region,
) -> list[np.ndarray]:
    """Runs a structured op with tensor semantics; returns the new outputs."""
    ins = [np.asarray(a) for a in ins]
    outs = [np.asarray(a) for a in outs]
    if len(maps) != len(ins) + len(outs):
        raise InterpreterError(f"{len(maps)} indexing maps for {len(ins) + len(outs)} operands")
    if len(region.args) != len(ins) + len(outs) or len(region.yields) != len(outs):
        raise InterpreterError("the region's arguments or yields do not match the operands")
    _check_output_maps(maps, len(ins))
    extents = loop_extents(maps, ins + outs)
    n = len(extents)
    out_dims = [{r.pos for r in m.results if isinstance(r, Dim)} for m in maps[len(ins) :]]
    reduced = tuple(d for d in range(n) if not all(d in s for s in out_dims))
    results = [o.copy() for o in outs]
    if not reduced:
        args = [lanes(a, m, extents, {}) for a, m in zip(ins + outs, maps, strict=True)]
        ys = ex.run_in_lanes(region, args, _loop_indices(extents, {}))
        for out, m, y in zip(results, maps[len(ins) :], ys, strict=True):
            write(out, m, y, extents, {})
        return results

    plan = op.memo("reductions", lambda: _reductions(region, len(ins), len(outs)))
    # A reduced dim that an output does index cannot be reduced in one go.
    plan_ok = plan is not None and all(not (s & set(reduced)) for s in out_dims)
    if plan_ok and any(extents[d] == 0 for d in reduced):
        return results  # no iterations: the outputs keep their init
    if plan_ok:
        contraction = op.memo("contraction", lambda: _contraction(region, plan, len(ins)))
        if contraction is not None and _einsum(ex, contraction, plan[0], maps, ins, results):
            return results
        args = [lanes(a, m, extents, {}) for a, m in zip(ins + outs, maps, strict=True)]
        ex.run_in_lanes(region, args, _loop_indices(extents, {}))
        for k, (p, out, m) in enumerate(zip(plan, results, maps[len(ins) :], strict=True)):
            elem = elem_of(p.combiner.result_types[0])
            x = np.broadcast_to(ex.env[p.x_slot], extents)
            part = _reduce(x, reduced, p.combiner.name, elem)
            init = lanes(outs[k], m, extents, {})
            pair = [init, part] if p.out_first else [part, init]
            y = np.asarray(p.combiner.handler(ex, p.combiner, pair)).astype(elem.dtype)
            write(out, m, y, extents, {})
        return results

    # Sequential over the reduced dims, in lexicographic order.
    for point in itertools.product(*(range(extents[d]) for d in reduced)):
        fixed = dict(zip(reduced, point, strict=True))
        args = [lanes(a, m, extents, fixed) for a, m in zip(ins, maps[: len(ins)], strict=True)]
        args += [
            lanes(o, m, extents, fixed) for o, m in zip(results, maps[len(ins) :], strict=True)
        ]
        ys = [np.array(y) for y in ex.run_in_lanes(region, args, _loop_indices(extents, fixed))]
        for out, m, y in zip(results, maps[len(ins) :], ys, strict=True):
            write(out, m, y, extents, fixed)
    return results


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum(
    ex: Executor,
    c: Contraction,
    p: Reduction,
    maps: Sequence[Map],
    ins: Sequence[np.ndarray],
    results: list[np.ndarray],
) -> bool:
    """out = out + einsum(a, b) when the maps are plain dims; False if not."""
    ma, mb, mo = maps[c.a], maps[c.b], maps[len(ins)]
    if not all(isinstance(r, Dim) for m in (ma, mb, mo) for r in m.results):
        return False
    if max(ma.n_dims, 1) > len(_LETTERS):
        return False
    # Every loop dim must be read by the product: a dim only another operand
    # indexes would multiply the sum by its extent, which einsum would not.
    used = {r.pos for m in (ma, mb) for r in m.results}
    if len(used) != ma.n_dims:
        return False
    elem = elem_of(p.combiner.result_types[0])
    if elem.is_bool:
        return False

    def operand(i: int, casts: tuple[BodyOp, ...]) -> np.ndarray:
        v = ins[i]
        for cast in casts:
            v = np.asarray(cast.handler(ex, cast, [v])).astype(elem_of(cast.result_types[0]).dtype)
        return v

    def subs(m: Map) -> str:
        return "".join(_LETTERS[r.pos] for r in m.results)

    a = operand(c.a, c.a_casts)
    b = operand(c.b, c.b_casts)
    dtype = elem_of(c.mul.result_types[0]).dtype
    prod = np.einsum(f"{subs(ma)},{subs(mb)}->{subs(mo)}", a.astype(dtype), b.astype(dtype))
    out = results[0]
    pair = [out, prod] if p.out_first else [prod, out]
    results[0] = np.asarray(p.combiner.handler(ex, p.combiner, pair)).astype(elem.dtype)
    return True
