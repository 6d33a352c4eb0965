"""Where each symbolic (`?`) dim of a node's point comes from.

A body's result takes its symbolic sizes from its arguments: a dim of the
scores of attention is the slice of keys it reads (`k[0 : t + 1]`), a dim
of a batched product the batch dim of its input. This walks a case's body
and tells, per `?` dim of the yielded tensor, the set of argument dims
(`(argument number, dim)`) its size is computed from, following the ops
that carry sizes: tensor.dim, tensor.empty, destination-style results,
slices, casts, reshapes by reassociation, pads, concatenations and index
arithmetic. Anything else (a size read from data, an op with regions) is
UNKNOWN, and the storage plan then bounds the dim by every slice that can
reach the value (the conservative answer).

Without this a batched value's batch dim would be bounded by the length
of the attention slices as well: `max(B, T)` rows for a KV cache of B."""

from __future__ import annotations

from mlir import ir

UNKNOWN = None  # the provenance of a size is not known
Sources = frozenset | None  # of (argument, dim); None: UNKNOWN
NONE: frozenset = frozenset()


def _union(parts) -> Sources:
    out: set = set()
    for p in parts:
        if p is UNKNOWN:
            return UNKNOWN
        out |= p
    return frozenset(out)


def _owner(v) -> ir.Operation | None:
    """The op defining `v`; None for a block argument."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation


def _ints(attr) -> list[int]:
    return [int(x) for x in attr]


class _Body:
    """The size provenance of one block's values."""

    def __init__(self, block: ir.Block):
        self.index: dict = {}  # index-typed SSA value -> Sources
        self.dims: dict = {}  # tensor SSA value -> [Sources per dim]
        for i, arg in enumerate(block.arguments):
            t = arg.type
            if isinstance(t, ir.RankedTensorType):
                self.dims[arg] = [
                    frozenset({(i, j)}) if ir.ShapedType.is_dynamic_size(d) else NONE
                    for j, d in enumerate(t.shape)
                ]
        self.result: list[Sources] | None = None
        for op in block.operations:
            self._visit(op.operation)

    # -- lookups -------------------------------------------------------------

    def size(self, v) -> Sources:
        """The provenance of an index (or integer) value."""
        if v in self.index:
            return self.index[v]
        owner = _owner(v)
        if owner is not None and owner.name in ("arith.constant", "index.constant"):
            return NONE
        return UNKNOWN

    def tensor_dims(self, v) -> list[Sources]:
        t = v.type
        if v in self.dims:
            return self.dims[v]
        if isinstance(t, ir.RankedTensorType):
            return [UNKNOWN if ir.ShapedType.is_dynamic_size(d) else NONE for d in t.shape]
        return []

    def _all(self, operands) -> Sources:
        """Everything the operands' sizes come from."""
        parts = []
        for v in operands:
            if isinstance(v.type, ir.RankedTensorType):
                parts += self.tensor_dims(v)
            else:
                parts.append(self.size(v))
        return _union(parts)

    def _set(self, result, from_dynamic: list[Sources]) -> None:
        """`result`'s dims: its dynamic ones take `from_dynamic` in order."""
        it = iter(from_dynamic)
        dims = []
        for d in result.type.shape:
            dims.append(next(it, UNKNOWN) if ir.ShapedType.is_dynamic_size(d) else NONE)
        self.dims[result] = dims

    # -- ops -----------------------------------------------------------------

    def _visit(self, op: ir.Operation) -> None:
        name = op.name
        operands = list(op.operands)
        results = list(op.results)
        if name == "pdg.yield":
            self.result = self.tensor_dims(operands[0])
            return
        if name == "tensor.dim":
            src = self.tensor_dims(operands[0])
            k = self._constant(operands[1])
            self.index[results[0]] = src[k] if k is not None and k < len(src) else _union(src)
            return
        if name in ("tensor.empty", "bufferization.alloc_tensor", "tensor.generate"):
            sizes = [v for v in operands if isinstance(v.type, ir.IndexType)]
            self._set(results[0], [self.size(v) for v in sizes])
            return
        if name.startswith("linalg.") and results:
            # Destination style: each result is shaped like its init, the
            # last operands.
            inits = operands[len(operands) - len(results) :]
            for r, init in zip(results, inits, strict=True):
                same = init.type == r.type or (
                    isinstance(init.type, ir.RankedTensorType) and init.type.rank == r.type.rank
                )
                self.dims[r] = self.tensor_dims(init) if same else self._unknown_dims(r)
            return
        if name in ("tensor.insert_slice", "tensor.insert"):
            self.dims[results[0]] = self.tensor_dims(operands[1])
            return
        if name == "tensor.cast":
            src = self.tensor_dims(operands[0])
            dst = results[0].type
            if dst.rank == len(src):
                self.dims[results[0]] = [
                    s if ir.ShapedType.is_dynamic_size(d) else NONE
                    for s, d in zip(src, dst.shape, strict=True)
                ]
            else:
                self.dims[results[0]] = self._unknown_dims(results[0])
            return
        if name == "tensor.extract_slice":
            view = op.opview
            dynamic = [self.size(v) for v in view.sizes]
            # Dropped (rank-reducing) dims are static ones: the dynamic
            # sizes fill the result's dynamic dims in order.
            self._set(results[0], dynamic)
            return
        if name == "tensor.expand_shape":
            view = op.opview
            self._set(results[0], [self.size(v) for v in view.output_shape])
            return
        if name == "tensor.reshape":
            # To a shape built from sizes (pdg-vectorize's batched reshape).
            shape = _owner(operands[1])
            if shape is not None and shape.name == "tensor.from_elements":
                elements = list(shape.operands)
                self.dims[results[0]] = [
                    self.size(elements[k]) if ir.ShapedType.is_dynamic_size(d) else NONE
                    for k, d in enumerate(results[0].type.shape)
                ]
            else:
                self.dims[results[0]] = self._unknown_dims(results[0])
            return
        if name == "tensor.collapse_shape":
            src = self.tensor_dims(operands[0])
            groups = [_ints(g) for g in ir.ArrayAttr(op.attributes["reassociation"])]
            self.dims[results[0]] = [
                _union(src[i] for i in g) if ir.ShapedType.is_dynamic_size(d) else NONE
                for g, d in zip(groups, results[0].type.shape, strict=True)
            ]
            return
        if name == "tensor.pad":
            src = self.tensor_dims(operands[0])
            pads = _union(self.size(v) for v in operands[1:])
            self.dims[results[0]] = [
                _union([s, pads]) if ir.ShapedType.is_dynamic_size(d) else NONE
                for s, d in zip(src, results[0].type.shape, strict=True)
            ]
            return
        if name == "tensor.concat":
            inputs = [self.tensor_dims(v) for v in operands]
            self.dims[results[0]] = [
                _union(x[k] for x in inputs) if ir.ShapedType.is_dynamic_size(d) else NONE
                for k, d in enumerate(results[0].type.shape)
            ]
            return
        if (
            len(results) == 1
            and isinstance(results[0].type, (ir.IndexType, ir.IntegerType))
            and (name.startswith(("arith.", "index.", "affine.")))
            and not len(op.regions)
        ):
            # Index arithmetic: a size from the sizes it combines (constants
            # add nothing; an integer read from data is not among them).
            self.index[results[0]] = (
                NONE if name in ("arith.constant", "index.constant") else self._all(operands)
            )
            return
        if name.startswith(("arith.", "math.")) and results:
            # Elementwise on tensors: shaped like its tensor operands.
            shaped = [
                self.tensor_dims(v) for v in operands if isinstance(v.type, ir.RankedTensorType)
            ]
            for r in results:
                rank = getattr(r.type, "rank", None)
                same = [x for x in shaped if len(x) == rank]
                if isinstance(r.type, ir.RankedTensorType) and same:
                    self.dims[r] = [
                        _union(x[k] for x in same) if ir.ShapedType.is_dynamic_size(d) else NONE
                        for k, d in enumerate(r.type.shape)
                    ]
            if all(r in self.dims for r in results if isinstance(r.type, ir.RankedTensorType)):
                return
        for r in results:
            if isinstance(r.type, ir.RankedTensorType):
                self.dims[r] = self._unknown_dims(r)

    @staticmethod
    def _unknown_dims(v) -> list[Sources]:
        return [UNKNOWN if ir.ShapedType.is_dynamic_size(d) else NONE for d in v.type.shape]

    @staticmethod
    def _constant(v) -> int | None:
        owner = _owner(v)
        if owner is not None and owner.name == "arith.constant":
            return ir.IntegerAttr(owner.attributes["value"]).value
        return None


def case_size_sources(node: ir.Operation, case: int) -> list[Sources]:
    """Per dim of the point a case of `node` yields: the (argument, dim)
    pairs its size comes from (empty for a static dim), or UNKNOWN."""
    body = _Body(node.regions[case].blocks[0])
    if body.result is None:
        return []
    return body.result
