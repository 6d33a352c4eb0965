"""A pdg program: dims, inputs, recurrent tensors, host callbacks, outputs.

    prog = Program("count")
    t = prog.dim("t", 8)
    x = prog.recurrent((), "i64", domain=[t], name="x")
    x[t == 0] = 0
    x[t > 0] = x[t - 1] + 1
    prog.output("x", x)
    module = prog.build()          # a verified pdg.graph (mlir ir.Module)

`build()` turns the program into the pdg dialect (emit.py) and verifies it;
any mistake is a ProgramError at the user's source line.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Sequence
from contextlib import contextmanager

from . import ops
from .dtypes import TensorType, canonical_dtype
from .errors import ProgramError, user_location
from .tensor import CasesDef, Dim, InputDef, RecurrentTensor, TensorLike, UdfDef, View

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED = {
    "max",
    "min",
    "floordiv",
    "ceildiv",
    "mod",
    "case",
    "default",
    "launch",
    "dynamic",
    "until",
}


def _check_name(name: str, what: str, in_expressions: bool = False) -> None:
    """Names must be identifiers; those used inside index expressions (dims,
    bound symbols) must also avoid the access syntax's words."""
    reserved = in_expressions and (name in _RESERVED or keyword.iskeyword(name))
    if not isinstance(name, str) or not _NAME.match(name) or reserved:
        extra = f" and not one of {', '.join(sorted(_RESERVED))}" if in_expressions else ""
        raise ProgramError(
            f"{what} name {name!r} must be an identifier (letters, digits, '_'){extra}"
        )


class Program:
    def __init__(self, name: str = "main"):
        _check_name(name, "program")
        self.name = name
        self.dims: list[Dim] = []
        self.values: list[RecurrentTensor] = []
        self.outputs: list[tuple[str, RecurrentTensor]] = []
        self.udfs: dict[str, Callable] = {}
        self.input_names: list[str] = []
        # Parameters (weights) live over this dim when set: one value per
        # training iteration (see parameter()).
        self.parameter_dim: Dim | None = None
        self._frozen = 0  # > 0 inside frozen_parameters()
        self.initial_values: dict[int, RecurrentTensor] = {}

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc) -> None:
        return None

    # -- the graph, for tensors and operators --------------------------------
    # Values and operators (tensor.py, ops.py, autodiff) build the program
    # through these; a user reaches the same through the declarations below.
    def add_value(self, value: RecurrentTensor) -> None:
        """Records a new value of this program. Every RecurrentTensor calls
        it once, when created: the program emits its values in this order."""
        self.values.append(value)

    def dims_by_name(self) -> dict[str, Dim]:
        """The declared dims, by name, in declaration order."""
        return {d.name: d for d in self.dims}

    def bound_symbols(self) -> set[str]:
        """The names of the launch and dynamic dims' bounds (`B`, `T`): the
        symbols an index expression may use besides dims."""
        return {d.symbol for d in self.dims if d.symbol}

    def ordered_dims(self, names: set[str]) -> tuple[Dim, ...]:
        """The dims with these names in declaration order (outermost first),
        the one order of every domain."""
        return tuple(d for d in self.dims if d.name in names)

    def checked_domain(self, domain: Sequence) -> tuple[Dim, ...]:
        """A domain the user wrote, checked (dims of this program, each
        once) and in declaration order."""
        dims = []
        for d in domain:
            if not isinstance(d, Dim) or d.program is not self:
                raise ProgramError(f"domain entries must be dims of this program, got {d!r}")
            if any(x is d for x in dims):
                raise ProgramError(f"dim '{d.name}' appears twice in the domain")
            dims.append(d)
        return self.ordered_dims({d.name for d in dims})

    # -- declarations ---------------------------------------------------------
    def dim(
        self,
        name: str,
        size: int | None = None,
        *,
        launch: str | None = None,
        dynamic: str | None = None,
        max: int | None = None,  # noqa: A002
        world: str | None = None,
    ) -> Dim:
        """A dimension: `dim("i", 10)` static, `dim("b", launch="B")` given at
        run time, `dim("t", dynamic="T", max=256)` ended by `t.until(cond)`,
        `dim("w", world="W")` the ranks of an MPI run (a worker dim: a value
        over it has one point per rank; see pdg.frontend.collectives)."""
        _check_name(name, "dim", in_expressions=True)
        given = [x is not None for x in (size, launch, dynamic, world)]
        if sum(given) != 1:
            raise ProgramError(
                f"dim '{name}' needs exactly one of: a static size, launch='SYMBOL', "
                "dynamic='SYMBOL', world='SYMBOL'"
            )
        if world is not None:
            dim = self.dim(name, launch=world, max=max)
            dim.worker = True
            return dim
        if name in self.dims_by_name() or name in self.bound_symbols():
            raise ProgramError(f"'{name}' is already a dim or bound symbol")
        if max is not None and (not isinstance(max, int) or max < 1):
            raise ProgramError(f"max of dim '{name}' must be a positive int, got {max!r}")
        if size is not None:
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise ProgramError(f"size of dim '{name}' must be a positive int, got {size!r}")
            dim = Dim(self, name, "static", size=size)
        else:
            symbol = launch if launch is not None else dynamic
            _check_name(symbol, "bound symbol", in_expressions=True)
            if symbol in self.dims_by_name() or symbol in self.bound_symbols() or symbol == name:
                raise ProgramError(f"bound symbol '{symbol}' is already used")
            kind = "launch" if launch is not None else "dynamic"
            dim = Dim(self, name, kind, symbol=symbol, max=max)
        self.dims.append(dim)
        return dim

    def input(
        self, name: str, shape: Sequence[int] = (), dtype="f32", domain: Sequence = ()
    ) -> RecurrentTensor:
        """A program input (weights, prompts): `shape` per point of `domain`."""
        _check_name(name, "input")
        if name in self.input_names:
            raise ProgramError(f"input '{name}' is declared twice")
        shape = tuple(shape)
        if any(not isinstance(d, int) or d < 0 for d in shape):
            raise ProgramError(f"input '{name}' needs a static shape of ints, got {shape}")
        self.input_names.append(name)
        type_ = TensorType(shape, canonical_dtype(dtype))
        return RecurrentTensor(self, self.checked_domain(domain), type_, InputDef(name), name=name)

    def iterate_parameters(self, dim: Dim) -> None:
        """Parameters created from now on (`parameter()`, every nn layer's
        weights) hold one value per point of `dim`, the training iteration:
        the program input of the same name at the first, and the
        optimizer's update of the previous one after (pdg.optim.minimize)."""
        if not isinstance(dim, Dim) or dim.program is not self:
            raise ProgramError("iterate_parameters() needs a dim of this program")
        if dim.kind == "dynamic":
            raise ProgramError("training iterations need a static or launch dim, not a dynamic one")
        self.parameter_dim = dim

    @contextmanager
    def frozen_parameters(self):
        """Parameters created inside stay the inputs they start from, even
        after iterate_parameters(i): weights that do not train (LoRA's base
        model), with no copy per iteration, gradient or optimizer state."""
        self._frozen += 1
        try:
            yield
        finally:
            self._frozen -= 1

    @property
    def parameters_frozen(self) -> bool:
        return self._frozen > 0

    def parameter(
        self, name: str, shape: Sequence[int] = (), dtype="f32", domain: Sequence = ()
    ) -> RecurrentTensor:
        """A weight: the input `name`, or with iterate_parameters(i) a value
        over [i] that starts at that input (unless created inside
        frozen_parameters()). `domain`: dims it varies over besides the
        iteration (a tensor-parallel weight's worker dim: one share per rank)."""
        initial = self.input(name, shape, dtype, domain=domain)
        i = self.parameter_dim
        if i is None or self._frozen:
            return initial
        w = self.recurrent(shape, dtype, domain=[i, *domain], name=f"{name}_at")
        w[i == 0] = initial
        self.initial_values[id(w)] = initial
        return w

    def initial_value(self, param: RecurrentTensor) -> RecurrentTensor:
        """The input a parameter starts from (the parameter itself if it is one)."""
        return self.initial_values.get(id(param), param)

    def recurrent(
        self, shape: Sequence[int] = (), dtype="f32", domain: Sequence = (), name: str | None = None
    ) -> RecurrentTensor:
        """A value defined by cases: `x[t == 0] = a; x[t > 0] = f(x[t - 1])`."""
        if name is not None:
            _check_name(name, "value")
        type_ = TensorType(tuple(shape), canonical_dtype(dtype))
        return RecurrentTensor(self, self.checked_domain(domain), type_, CasesDef(), name=name)

    def udf(
        self,
        fn: Callable,
        inputs: Sequence[TensorLike],
        shape: Sequence[int] = (),
        dtype="f32",
        domain: Sequence | None = None,
        name: str | None = None,
    ) -> RecurrentTensor:
        """A value computed by the Python callable `fn(*input_arrays)` at each
        point, e.g. a reward on decoded text."""
        if not callable(fn):
            raise ProgramError(f"udf needs a callable, got {type(fn).__name__}")
        callee = name or getattr(fn, "__name__", "udf")
        _check_name(callee, "udf")
        if callee in self.udfs and self.udfs[callee] is not fn:
            raise ProgramError(f"another callable is already registered as udf '{callee}'")
        names = set()
        for x in inputs:
            if not isinstance(x, TensorLike):
                raise ProgramError("udf inputs must be tensors")
            names |= {d.name for d in x.domain}
        dims = self.ordered_dims(names) if domain is None else self.checked_domain(domain)
        if names - {d.name for d in dims}:
            raise ProgramError(
                f"udf inputs depend on dims {sorted(names - {d.name for d in dims})} "
                "outside its domain"
            )
        self.udfs[callee] = fn
        type_ = TensorType(tuple(shape), canonical_dtype(dtype))
        operands = [x.operand() for x in inputs]
        return RecurrentTensor(self, dims, type_, UdfDef(callee, operands), name=callee)

    def constant(self, value, shape: Sequence[int] = (), dtype="f32") -> RecurrentTensor:
        return ops.constant(self, value, shape, dtype)

    def constant_array(self, values, dtype=None) -> RecurrentTensor:
        """A tensor holding `values` (a NumPy array or nested lists)."""
        return ops.constant_array(self, values, dtype)

    def coordinate(self, dim: Dim, domain: Sequence | None = None) -> RecurrentTensor:
        """The current coordinate along `dim` (an i64 scalar), e.g. positions;
        over [dim], or over `domain` (which includes dim)."""
        return ops.coordinate(dim, domain)

    def output(self, name: str, value: TensorLike) -> None:
        _check_name(name, "output")
        if any(n == name for n, _ in self.outputs):
            raise ProgramError(f"output '{name}' is declared twice")
        if not isinstance(value, TensorLike) or value.program is not self:
            raise ProgramError(f"output '{name}' must be a tensor of this program")
        if isinstance(value, View):
            value = ops.cast_to(value, value.dtype)
        self.outputs.append((name, value))

    # -- compilation ----------------------------------------------------------
    def to_mlir(self) -> str:
        """The program in the pdg dialect, as text."""
        from .emit import emit_program

        return emit_program(self)

    def build(self, context=None):
        """The verified pdg.graph, as an `mlir.ir.Module`."""
        from pdg.ir import ParseFailure, make_context, parse_text

        text = self.to_mlir()
        ctx = context or make_context()
        try:
            return parse_text(text, f"<pdg program {self.name}>", ctx)
        except ParseFailure as failure:
            first = failure.diagnostics[0]
            if first.location.startswith("<pdg program"):
                raise RuntimeError(
                    "internal error: pdg emitted IR that does not verify:\n"
                    f"{failure}\n--- IR ---\n{text}"
                ) from None
            # The verifier speaks of ops; the user wrote values.
            message = re.sub(r"^'pdg\.\w+' op ", "", first.message)
            raise ProgramError(message, loc=_parse_loc(first.location)) from None


def _parse_loc(location: str):
    from .errors import SourceLoc

    m = re.match(r"^(.*):(\d+):(\d+)$", location)
    if not m:
        return user_location()
    return SourceLoc(m.group(1), int(m.group(2)))
