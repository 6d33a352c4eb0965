"""minimize(): gradients, clipping and the optimizer's update, as the
recurrences that define each parameter after the first iteration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pdg.autodiff import grad
from pdg.frontend import ops
from pdg.frontend.collectives import all_reduce
from pdg.frontend.dtypes import numpy_dtype
from pdg.frontend.errors import ProgramError
from pdg.frontend.tensor import CasesDef, Dim, RecurrentTensor, TensorLike

from .checkpoint import load_checkpoint, save_checkpoint
from .optimizers import Optimizer

STEP_INPUT = "start_step"  # the global step of the first iteration (resuming)


@dataclass
class Training:
    """What minimize() added: per parameter path, the gradient, the updated
    value and the optimizer state (each over the iteration dim), and the
    global norm of the gradients before any clipping (a scalar per
    iteration; a node the compiler drops unless something reads it)."""

    dim: Dim
    loss: TensorLike
    params: dict[str, RecurrentTensor]
    grads: dict[str, RecurrentTensor]
    updated: dict[str, TensorLike]
    state: dict[str, dict[str, RecurrentTensor]]  # path -> slot -> value over [i]
    state_next: dict[str, dict[str, TensorLike]]
    grad_norm: TensorLike | None = None
    state_inputs: dict[str, dict[str, str]] = field(default_factory=dict)

    def add_outputs(self, prefix: str = "final") -> None:
        """Outputs `final.<param>` (weights after the last iteration) and
        `final.<param>.<slot>` (optimizer state): what a checkpoint holds."""
        program = self.loss.program
        last = self.dim.size - 1
        for path, value in self.updated.items():
            program.output(_name(prefix, path), _at(value, self.dim, last))
            for slot, s in self.state_next[path].items():
                program.output(_name(prefix, path, slot), _at(s, self.dim, last))

    def final_state(self, outputs: Mapping, prefix: str = "final"):
        """(weights by path, optimizer state by path then slot) after the
        last iteration, from a run's outputs (see add_outputs)."""
        weights, state = {}, {}
        for path in self.params:
            weights[path] = np.asarray(outputs[_name(prefix, path)])
            state[path] = {
                slot: np.asarray(outputs[_name(prefix, path, slot)]) for slot in self.state[path]
            }
        return weights, state

    def save(self, path, outputs: Mapping, next_step: int):
        """A checkpoint of the run's final weights and optimizer state."""
        weights, state = self.final_state(outputs)
        arrays = {f"weight/{p}": w for p, w in weights.items()}
        for p, slots in state.items():
            arrays.update({f"state/{p}/{slot}": v for slot, v in slots.items()})
        return save_checkpoint(path, arrays, next_step)

    def load(self, path):
        """(weights, optimizer state, step to resume at) from a checkpoint."""
        arrays, step = load_checkpoint(path)
        weights, state = {}, {p: {} for p in self.params}
        for key, value in arrays.items():
            kind, _, rest = key.partition("/")
            if kind == "weight":
                weights[rest] = value
            elif kind == "state":
                p, _, slot = rest.rpartition("/")
                state.setdefault(p, {})[slot] = value
        missing = [p for p in self.params if p not in weights] + [
            f"{p}/{slot}" for p in self.params for slot in self.state[p] if slot not in state[p]
        ]
        if missing:
            raise ValueError(f"checkpoint {path} lacks {', '.join(missing[:5])}")
        return weights, state, step

    def initial_inputs(self, weights: Mapping[str, np.ndarray], state=None, start_step=0):
        """Program inputs for the weights by path, the optimizer state (zeros
        unless given, by path then slot) and the first step's number."""
        program = self.loss.program
        out = {}
        for path, p in self.params.items():
            if path not in weights:
                raise ProgramError(f"missing weight '{path}'")
            dtype = numpy_dtype(p.dtype)
            out[program.initial_value(p).definition.name] = np.asarray(weights[path], dtype)
            for slot, name in self.state_inputs[path].items():
                given = (state or {}).get(path, {}).get(slot)
                # Zeros shaped like the weight's input (a split one's shares).
                zero = np.zeros(np.shape(weights[path]), dtype)
                out[name] = zero if given is None else np.asarray(given, dtype)
        out[STEP_INPUT] = np.asarray(start_step, np.int64)
        return out


def minimize(
    loss: TensorLike,
    params: Mapping[str, RecurrentTensor] | Sequence[RecurrentTensor],
    optimizer: Optimizer,
    clip_norm: float | None = None,
) -> Training:
    """Defines every parameter after the first iteration as the optimizer's
    update of the one before, from the gradient of `loss` (a scalar per
    iteration) at that iteration."""
    if not isinstance(optimizer, Optimizer):
        raise ProgramError("minimize() needs an optimizer, e.g. pdg.optim.Adam(lr=1e-3)")
    if not isinstance(params, Mapping):
        params = {p.name or f"p{k}": p for k, p in enumerate(params)}
    params = dict(params)
    program = loss.program
    dim = program.parameter_dim
    if dim is None:
        raise ProgramError(
            "minimize() needs parameters over the iteration dim",
            hint="call program.iterate_parameters(i) before creating the model",
        )
    for path, p in params.items():
        if program.initial_value(p) is p or not isinstance(p.definition, CasesDef):
            raise ProgramError(
                f"parameter '{path}' does not live over the iteration dim '{dim.name}'",
                hint="create it after program.iterate_parameters(i) (program.parameter or nn)",
            )
        if len(p.definition.cases) != 1:
            raise ProgramError(f"parameter '{path}' is already updated by another optimizer")
    if all(d.name != dim.name for d in loss.domain) or len(loss.domain) != 1:
        raise ProgramError(
            f"minimize() needs a loss over exactly [{dim.name}], got "
            f"[{', '.join(d.name for d in loss.domain)}]",
            hint="reduce the other dims, e.g. nll[0 : B, 0 : T].mean()",
        )
    grads = dict(zip(params, grad(loss, list(params.values())), strict=True))
    norm = global_norm(grads)
    if clip_norm is not None:
        grads, norm = clip_by_global_norm(grads, clip_norm, norm)
    start = program.input(STEP_INPUT, (), "i64")
    step = (ops.coordinate(dim) + start).astype(loss.dtype)

    updated, state, state_next, state_inputs = {}, {}, {}, {}
    for path, w in params.items():
        base = program.initial_value(w).definition.name
        slots, inputs = {}, {}
        # A weight split over ranks keeps its optimizer state split alike.
        shares = [d for d in w.domain if d is not dim]
        for slot in optimizer.slots:
            inputs[slot] = f"{base}__{slot}"
            first = program.input(inputs[slot], w.shape, w.dtype, domain=shares)
            s = program.recurrent(w.shape, w.dtype, domain=w.domain, name=f"{base}_{slot}")
            s[dim == 0] = first
            slots[slot] = s
        new_w, new_slots = optimizer.update(w, grads[path], slots, step)
        w[dim > 0] = new_w[dim - 1]
        for slot, s in slots.items():
            s[dim > 0] = new_slots[slot][dim - 1]
        updated[path], state[path], state_next[path] = new_w, slots, new_slots
        state_inputs[path] = inputs
    return Training(dim, loss, params, grads, updated, state, state_next, norm, state_inputs)


def global_norm(grads: dict) -> TensorLike:
    """The 2-norm of all the gradients together (what
    torch.nn.utils.clip_grad_norm_ returns)."""
    # Weights split over ranks (a worker dim in their domain) add their
    # shares' squares on the rank, then one all-reduce adds the ranks'.
    total, split = None, {}  # split: worker dim name -> (dim, squares on the rank)
    for g in grads.values():
        sq = (g * g).sum() if g.ndim else g * g
        worker = next((d for d in g.domain if d.worker), None)
        if worker is None:
            total = sq if total is None else total + sq
        else:
            _, local = split.get(worker.name, (worker, None))
            split[worker.name] = (worker, sq if local is None else local + sq)
    for worker, local in split.values():
        summed = all_reduce(local, over=worker)
        total = summed if total is None else total + summed
    return ops.sqrt(total)


def clip_by_global_norm(grads: dict, max_norm: float, norm: TensorLike | None = None):
    """Scales every gradient by min(1, max_norm / (norm + 1e-6)), the norm
    taken over all of them together (as torch.nn.utils.clip_grad_norm_);
    `norm`: that norm when already computed."""
    if not isinstance(max_norm, (int, float)) or max_norm <= 0:
        raise ProgramError(f"clip norm must be a positive number, got {max_norm!r}")
    if norm is None:
        norm = global_norm(grads)
    scale = ops.minimum(max_norm / (norm + 1e-6), 1.0)
    return {k: g * scale for k, g in grads.items()}, norm


def _at(value: TensorLike, dim: Dim, index):
    if isinstance(value, RecurrentTensor):
        return value[index]
    return ops.cast_to(value, value.dtype)[index]


def _name(prefix: str, *parts: str) -> str:
    return "__".join([prefix, *(p.replace(".", "_") for p in parts)])
