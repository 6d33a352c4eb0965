"""What from_torch refuses, and how: an op pdg bodies do not hold (named,
with the module's line), writes in place, shapes that depend on values,
inputs that do not fit the import, gradients through a frozen import; and
that torch-mlir never enters pdg's process."""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import pdg.frontend as pf  # noqa: E402
from pdg.autodiff import grad  # noqa: E402
from pdg.frontend import ProgramError  # noqa: E402
from pdg.frontend.torch_import import importer  # noqa: E402
from pdg.frontend.torch_import.errors import TorchImportError  # noqa: E402
from pdg.frontend.torch_import.importer import Imported  # noqa: E402
from pdg.frontend.torch_import.validate import check_ops  # noqa: E402
from pdg.nn import from_torch  # noqa: E402
from torch import nn  # noqa: E402

HERE = __file__


def _line_of(cls, text: str) -> int:
    lines, start = inspect.getsourcelines(cls)
    return start + next(i for i, line in enumerate(lines) if text in line)


class CumulativeSum(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cumsum(self.fc(x), dim=0)


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(4))

    def forward(self, x):
        self.count.add_(x)
        return x * 2


class Positives(nn.Module):
    def forward(self, x):
        return x[x > 0]


def test_01_an_op_without_a_body_lowering_is_named_with_its_line(import_cache):
    with pytest.raises(TorchImportError) as e:
        from_torch(CumulativeSum(), (torch.randn(3, 4),), cache_dir=import_cache)
    message = str(e.value)
    line = _line_of(CumulativeSum, "torch.cumsum")
    assert f"op 'tm_tensor.scan' at {HERE}:{line} cannot be part of a pdg body" in message
    assert "hint: tm_tensor ops (from cumsum" in message
    assert message.startswith(f"{HERE}:")  # reported at the from_torch() call


def test_02_check_ops_picks_the_modules_own_frame():
    """The location is a callsite chain (torch's layer, the module's line,
    pdg's wrapper): the module's frame is named."""
    torch_file = torch.nn.modules.linear.__file__
    location = (
        f'loc(callsite("{torch_file}":134:0 at callsite("/models/rm.py":12:0 at '
        f'"{importer.__file__}":141:0)))'
    )
    imported = Imported("", (("linalg.matmul", "loc(unknown)"), ("memref.alloc", location)))
    with pytest.raises(TorchImportError, match=r"op 'memref.alloc' at /models/rm.py:12 cannot"):
        check_ops(imported, "RM")


def test_03_in_place_writes_are_refused():
    with pytest.raises(TorchImportError) as e:
        from_torch(Counter(), (torch.randn(4),), cache_dir=None)
    line = _line_of(Counter, "self.count.add_")
    assert "Counter writes in place into 'count' (add_" in str(e.value)
    assert f"{HERE}:{line})" in str(e.value)


def test_04_shapes_that_depend_on_values_are_refused():
    with pytest.raises(TorchImportError) as e:
        from_torch(Positives(), (torch.randn(4),), cache_dir=None)
    message = str(e.value)
    assert "depends on tensor values" in message and "torch.where" in message


def test_05_bad_arguments():
    with pytest.raises(TorchImportError, match="imports a torch.nn.Module, got function"):
        from_torch(lambda x: x, (torch.randn(2),))
    with pytest.raises(TorchImportError, match="example input 0 has dtype torch.float16"):
        from_torch(nn.Identity(), (torch.randn(2).half(),))
    with pytest.raises(TorchImportError, match="one entry per example input"):
        from_torch(nn.Identity(), (torch.randn(4, 2),), dynamic_shapes={0: "seq"})
    with pytest.raises(TorchImportError, match="size 1 on dynamic axis 0"):
        from_torch(nn.Identity(), (torch.randn(1, 2),), dynamic_shapes=[{0: "seq"}])
    with pytest.raises(TorchImportError, match="the size 'n' names two axes"):
        from_torch(nn.Identity(), (torch.randn(3, 3),), dynamic_shapes=[{0: "n", 1: "n"}])


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4) * 2)

    def forward(self, x):
        return x * self.w


@pytest.fixture(scope="module")
def scale(tmp_path_factory):
    return from_torch(Scale(), (torch.randn(4),), cache_dir=tmp_path_factory.mktemp("c"))


def test_06_inputs_must_fit_the_import(scale):
    prog = pf.Program("p")
    t = prog.dim("t", 5)
    x = prog.input("x", (4,), "f32", domain=[t])
    m = scale.bind(prog, "s")
    with pytest.raises(ProgramError) as e:
        m(x[0 : t + 1])
    assert "input 0 is tensor<?x4xf32> per point; the module was imported for tensor<4xf32>" in str(
        e.value
    )
    assert "hint: import the module with an example input of rank 2" in str(e.value)
    y = prog.input("y", (4,), "f64", domain=[t])
    with pytest.raises(ProgramError, match="input 0 is tensor<4xf64> per point"):
        m(y)
    with pytest.raises(ProgramError, match="Scale takes 1 inputs, got 2"):
        m(x, x)
    with pytest.raises(ProgramError, match="missing weight 'w' of Scale"):
        m.inputs_from({})


def test_07_imports_are_frozen(scale):
    """A gradient through an imported module is refused, naming it; its
    weights are inputs no optimizer updates."""
    prog = pf.Program("p")
    x = prog.parameter("x", (4,))
    m = scale.bind(prog, "s")
    assert m.trainable_parameters() == {}
    loss = pf.sum(m(x))
    with pytest.raises(ProgramError) as e:
        grad(loss, [x])
    assert "'Scale' (s): an imported PyTorch module is frozen" in str(e.value)


def test_08_cached_imports_need_no_worker(scale, tmp_path, monkeypatch):
    """A second process (here: an empty memory cache) finds the import in
    the cache directory; torch-mlir is never loaded into pdg's process."""
    cache = tmp_path / "cache"
    first = from_torch(Scale(), (torch.randn(4),), cache_dir=cache)
    assert len(list(cache.glob("*.json"))) == 1
    monkeypatch.setattr(importer, "_MEMORY", {})

    def no_worker(*args, **kwargs):
        raise AssertionError("the worker ran again")

    monkeypatch.setattr(importer, "_run_worker", no_worker)
    again = from_torch(Scale(), (torch.randn(4),), cache_dir=cache)
    assert again.function == first.function
    assert "torch_mlir" not in sys.modules
    prog = pf.Program("p")
    x = prog.input("x", (4,), "f32")
    m = again.bind(prog, "s")
    prog.output("y", m(x))
    from pdg.interpreter import interpret

    w = {"w": torch.full((4,), 3.0)}
    out = interpret(prog.build(), {**m.inputs_from(w), "x": np.ones(4, np.float32)}).outputs["y"]
    np.testing.assert_array_equal(out, np.full(4, 3.0, np.float32))


class SizeMinus(nn.Module):
    def forward(self, x):
        return x.shape[0] - x.sum(dim=0)  # an int minus a tensor: no torch-mlir lowering


def test_torch_mlirs_own_diagnostic_is_in_the_error(import_cache):
    """torch-mlir's exception says only that a pipeline failed; the MLIR
    diagnostic on the worker's stderr names the op and the module's line."""
    with pytest.raises(TorchImportError) as e:
        from_torch(
            SizeMinus(), (torch.randn(3, 4),), dynamic_shapes=[{0: "n"}], cache_dir=import_cache
        )
    message = str(e.value)
    line = _line_of(SizeMinus, "x.shape[0] - x")
    assert f"test_errors.py:{line}: 'torch.aten.sub.Tensor' op operand #0" in message
    assert "torch-mlir-opt" not in message and "For Torch-MLIR developers" not in message
