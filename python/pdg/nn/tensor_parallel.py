"""Tensor parallelism (Megatron's split) over a worker dim.

A block's first product is split by columns and its last by rows: rank r
holds columns [r * n_out / n, (r + 1) * n_out / n) of the attention's q, k
and v and of the MLP's fc (gate, up), i.e. its share of the heads and of
the hidden units, and the matching rows of the output projection (o,
proj, down). Each rank then computes its heads' attention and its hidden
units' activations alone, and the block's output is the sum over ranks of
the row products: one all-reduce after the attention and one after the MLP.
Everything else (norms, the biases added after a sum, and unless
`Shards(vocab=True)` the embeddings and the head) is replicated: every
rank holds it whole and computes it alike. With `vocab=True` each rank
holds vocab / n rows of the token embedding (and columns of an untied
head), looks up only the ids in its range (an all-reduce adds the rows),
and has only its range's logits; `vocab_parallel_nll` takes the
log-softmax across the ranks without gathering them.

A split weight is a program input over the worker dim whose point is the
rank's share, (d_in, d_out / n) or (d_in / n, d_out). `Module.inputs_from`
cuts the whole weights into those shares.
"""

from __future__ import annotations

from dataclasses import dataclass

import pdg.frontend as pf
from pdg.frontend import Dim, ProgramError, TensorLike

from .layers import Linear, Module, check_weight_dtype


@dataclass(frozen=True)
class Shards:
    """The worker dim a model is split over, and how many ranks it has.

    The count is fixed when the program is built (weight shapes depend on
    it), so the program runs on exactly `count` ranks."""

    dim: Dim
    count: int
    vocab: bool = False  # also split the embedding and the head over the vocabulary

    def __post_init__(self):
        if not self.dim.worker:
            raise ProgramError(
                f"tensor parallelism splits over a worker dim; '{self.dim.name}' is not one",
                hint=f"declare it with prog.dim('{self.dim.name}', world='W')",
            )
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise ProgramError(f"the number of shards must be a positive int, got {self.count!r}")

    def rank_of(self, comm) -> int | None:
        """This process's rank on `comm` (None without one: the interpreter
        runs every rank), refusing a communicator of the wrong size."""
        if comm is None:
            return None
        size = comm.Get_size()
        if size != self.count:
            raise ValueError(
                f"this program splits the model over {self.count} ranks, but the "
                f"communicator has {size}: run it with mpiexec -n {self.count}"
            )
        return comm.Get_rank()

    def local(self, total: int, what: str) -> int:
        """Each rank's share of `total` (heads, hidden units)."""
        if total % self.count:
            raise ProgramError(
                f"{total} {what} do not split evenly over {self.count} ranks",
                hint="use a number of ranks that divides the model's heads and MLP width",
            )
        return total // self.count


class ColumnParallelLinear(Module):
    """y_r = x @ w[:, cols_r] + b[cols_r]: rank r's share of the outputs,
    a value over the worker dim."""

    def __init__(self, program, path, d_in, d_out, bias, dtype, weight_dtype, shards: Shards):
        super().__init__(program, path)
        w_dtype = check_weight_dtype(dtype, weight_dtype)
        self.w = self.split_param("w", (d_in, d_out), w_dtype, shards, axis=1)
        self.b = self.split_param("b", (d_out,), dtype, shards, axis=0) if bias else None

    def __call__(self, x: TensorLike) -> TensorLike:
        y = x @ self.w
        return y + self.b if self.b is not None else y


class RowParallelLinear(Module):
    """y = sum over ranks r of x_r @ w[rows_r, :], then + b: x is a rank's
    share of the inputs (a value over the worker dim), y is whole and the
    same on every rank."""

    def __init__(self, program, path, d_in, d_out, bias, dtype, weight_dtype, shards: Shards):
        super().__init__(program, path)
        self.shards = shards
        w_dtype = check_weight_dtype(dtype, weight_dtype)
        self.w = self.split_param("w", (d_in, d_out), w_dtype, shards, axis=0)
        self.b = self.param("b", (d_out,), dtype) if bias else None

    def __call__(self, x: TensorLike) -> TensorLike:
        y = pf.all_reduce(x @ self.w, over=self.shards.dim)
        return y + self.b if self.b is not None else y


def linear(
    program, path, d_in, d_out, bias, dtype, weight_dtype, shards: Shards | None, split: str
) -> Module:
    """A Linear, or its column/row-split form when the model is sharded."""
    if shards is None:
        return Linear(program, path, d_in, d_out, bias, dtype, weight_dtype)
    kind = ColumnParallelLinear if split == "columns" else RowParallelLinear
    return kind(program, path, d_in, d_out, bias, dtype, weight_dtype, shards)


class VocabParallelEmbedding(Module):
    """Rank r holds rows [r * V / n, (r + 1) * V / n) of the (V, d) table;
    a lookup takes the row on the rank whose range holds the id and zeros
    elsewhere, and an all-reduce adds them: the row, on every rank."""

    def __init__(self, program, path, vocab, d, dtype, weight_dtype, shards: Shards):
        super().__init__(program, path)
        self.dtype, self.shards = dtype, shards
        self.rows = shards.local(vocab, "vocabulary entries")
        w_dtype = check_weight_dtype(dtype, weight_dtype)
        self.table = self.split_param("w", (vocab, d), w_dtype, shards, axis=0)

    def __call__(self, ids: TensorLike) -> TensorLike:
        local, mine = local_ids(ids, self.rows, self.shards)
        rows = pf.take(self.table, local, axis=0)
        if self.table.dtype != self.dtype:
            rows = rows.astype(self.dtype)
        rows = pf.where(mine, rows, 0.0)
        return pf.all_reduce(rows, over=self.shards.dim)


def local_ids(ids: TensorLike, rows: int, shards: Shards):
    """(ids within this rank's range of `rows`, clamped into it; whether
    each id is in it)."""
    first = shards.dim.program.coordinate(shards.dim) * rows
    local = ids - first
    mine = (local >= 0) & (local < rows)
    return pf.minimum(pf.maximum(local, 0), rows - 1), mine


def vocab_parallel_nll(logits: TensorLike, targets: TensorLike, shards: Shards) -> TensorLike:
    """-log softmax(all logits)[target] from each rank's range of them
    (`logits` over the worker dim, V / n each): the ranks' maxima, their
    sums of exponentials and the target's logit are all-reduced, a few
    scalars per token instead of the V logits. Same on every rank."""
    w = shards.dim
    rows = logits.shape[-1]
    # The shift only keeps exp() in range; it cancels in the gradient.
    top = pf.all_reduce(pf.stop_gradient(logits.max(axis=-1)), over=w, op="max")
    total = pf.all_reduce(pf.exp(logits - top).sum(axis=-1), over=w)
    local, mine = local_ids(targets, rows, shards)
    picked = pf.where(mine, pf.take(logits, local), 0.0)
    return pf.log(total) + top - pf.all_reduce(picked, over=w)
