"""Gradients through imported PyTorch modules (from_torch(..., trainable=True)):
the gradient of a loss over every point, with respect to the module's
inputs and weights, equals torch autograd's within 1e-5 (float32),
interpreted and compiled, for an MLP, a layer norm and an attention block
over a slice of dynamic length."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import pdg.frontend as pf  # noqa: E402
from pdg.autodiff import grad  # noqa: E402
from pdg.frontend import ProgramError  # noqa: E402
from pdg.frontend.torch_import.errors import TorchImportError  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.ir import make_context, parse_text  # noqa: E402
from pdg.lowering.artifact import compile_module  # noqa: E402
from pdg.nn import from_torch  # noqa: E402
from pdg.runtime import load  # noqa: E402
from torch import nn  # noqa: E402

from .conftest import assert_close, run_both  # noqa: E402
from .test_modules import MLP, Attention  # noqa: E402


def _outputs_of_gradients(prog, m, x, y):
    """Outputs dx and d_<weight> of loss = sum over points of sum(y * c)
    (c a fixed tensor, so every output element weighs differently)."""
    c = prog.input("c", y.shape, "f32")
    loss = (y * c).sum()
    params = m.trainable_parameters()
    assert list(params) == list(m.parameters())  # trainable: every weight
    grads = grad(loss, [x, *params.values()])
    prog.output("dx", grads[0])
    for path, g in zip(params, grads[1:], strict=True):
        prog.output("d_" + path.split(".", 1)[1].replace(".", "_"), g)


def _check(outputs, model, dx):
    """dx and every weight's gradient against torch autograd's."""
    assert_close(outputs["dx"], dx)
    for name, p in model.named_parameters():
        assert_close(outputs["d_" + name.replace(".", "_")], p.grad.numpy())


def _pointwise_gradients_match(model, imported, path, xs, cs, tmp_path):
    """The module applied at each point of b (xs: one row per point), the
    loss sum over b of sum(y * cs): its gradients, interpreted and
    compiled, against autograd's."""
    prog = pf.Program(f"{path}_grad")
    b = prog.dim("b", xs.shape[0])
    x = prog.input("x", xs.shape[1:], "f32", domain=[b])
    m = imported.bind(prog, path)
    _outputs_of_gradients(prog, m, x, m(x))
    inputs = {**m.inputs_from(model.state_dict()), "x": xs, "c": cs}
    interpreted, compiled = run_both(prog, inputs, {}, tmp_path)

    xt = torch.tensor(xs, requires_grad=True)
    (model(xt) * torch.tensor(cs)).sum().backward()
    for outputs in (interpreted, compiled):
        _check(outputs, model, xt.grad.numpy())


def test_01_mlp_gradients_match_autograd(import_cache, tmp_path):
    torch.manual_seed(10)
    model = MLP()
    mlp = from_torch(model, (torch.randn(8),), cache_dir=import_cache, trainable=True)
    rng = np.random.default_rng(10)
    xs = rng.standard_normal((5, 8)).astype(np.float32)
    cs = rng.standard_normal(4).astype(np.float32)
    _pointwise_gradients_match(model, mlp, "mlp", xs, cs, tmp_path)


def test_02_layer_norm_gradients_match_autograd(import_cache, tmp_path):
    torch.manual_seed(11)
    model = nn.LayerNorm(16)
    with torch.no_grad():
        model.weight.normal_()
        model.bias.normal_()
    ln = from_torch(model, (torch.randn(3, 16),), cache_dir=import_cache, trainable=True)
    rng = np.random.default_rng(11)
    xs = (rng.standard_normal((4, 3, 16)) * 3 + 1).astype(np.float32)
    cs = rng.standard_normal((3, 16)).astype(np.float32)
    _pointwise_gradients_match(model, ln, "ln", xs, cs, tmp_path)


def test_03_attention_over_a_dynamic_length(import_cache, tmp_path):
    """y[t] = block(x[0 : t + 1]): x[s] gets gradient from every later step's
    read; one compiled artifact serves every length."""
    torch.manual_seed(12)
    model = Attention()
    attn = from_torch(
        model,
        (torch.randn(5, 16),),
        dynamic_shapes=[{0: "seq"}],
        cache_dir=import_cache,
        trainable=True,
    )
    prog = pf.Program("attn_grad")
    t = prog.dim("t", launch="T", max=8)  # the gradient's window needs a largest size
    x = prog.input("x", (16,), "f32", domain=[t])
    m = attn.bind(prog, "attn")
    _outputs_of_gradients(prog, m, x, m(x[0 : t + 1]))
    rng = np.random.default_rng(12)
    cs = rng.standard_normal(16).astype(np.float32)
    module = prog.build()
    compile_module(parse_text(str(module), "attn", make_context()), tmp_path / "a.pdgx", gpu=False)
    artifact = load(tmp_path / "a.pdgx")
    for steps in (1, 6):
        xs = rng.standard_normal((steps, 16)).astype(np.float32)
        inputs = {**m.inputs_from(model.state_dict()), "x": xs, "c": cs}
        interpreted = interpret(module, inputs, symbols={"T": steps}).outputs
        compiled = artifact.run(inputs, {"T": steps}).outputs

        model.zero_grad()
        xt = torch.tensor(xs, requires_grad=True)
        loss = sum((model(xt[: i + 1]) * torch.tensor(cs)).sum() for i in range(steps))
        loss.backward()
        for outputs in (interpreted, compiled):
            _check(outputs, model, xt.grad.numpy())


class Lookup(nn.Module):
    """An embedding: its weight's gradient is a scatter (index_put), an op
    pdg bodies cannot hold."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, ids, x):
        return self.emb(ids).sum(0) * x


def test_04_a_gradient_op_pdg_cannot_hold_is_named(import_cache):
    torch.manual_seed(13)
    model = Lookup()
    example = (torch.tensor([1, 2, 3]), torch.randn(4))
    from_torch(model, example, cache_dir=import_cache)  # frozen: fine
    with pytest.raises(TorchImportError) as e:
        from_torch(model, example, cache_dir=import_cache, trainable=True)
    message = str(e.value)
    assert "Lookup" in message and "tm_tensor.scatter" in message, message


def test_05_frozen_modules_say_how_to_train_them(import_cache):
    torch.manual_seed(14)
    mlp = from_torch(MLP(), (torch.randn(8),), cache_dir=import_cache)
    prog = pf.Program("frozen")
    x = prog.input("x", (8,), "f32")
    m = mlp.bind(prog, "mlp")
    assert m.trainable_parameters() == {}  # no optimizer state for a frozen module
    with pytest.raises(ProgramError) as e:
        grad(m(x).sum(), [x])
    assert "is frozen" in str(e.value) and "trainable=True" in str(e.value)


def test_06_an_output_of_dynamic_length(import_cache, tmp_path):
    """A layer norm over x[0 : t + 1]: its output (seq, 16) has the input's
    dynamic size, and so has the cotangent its gradient body takes. (The
    weight gradients' sums over t read points of dynamic size: compiling
    them aborted in pdg-contract-reductions before it left those alone.)"""
    torch.manual_seed(15)
    model = nn.LayerNorm(16)
    with torch.no_grad():
        model.weight.normal_()
        model.bias.normal_()
    ln = from_torch(
        model,
        (torch.randn(5, 16),),
        dynamic_shapes=[{0: "seq"}],
        cache_dir=import_cache,
        trainable=True,
    )
    assert ln.gradient.functions[0].input_types[-1].shape == (None, 16)  # the cotangent
    prog = pf.Program("ln_dyn_grad")
    t = prog.dim("t", 4)
    x = prog.input("x", (16,), "f32", domain=[t])
    m = ln.bind(prog, "ln")
    y = m(x[0 : t + 1])
    params = m.trainable_parameters()
    grads = grad((y * y).sum(), [x, *params.values()])
    prog.output("dx", grads[0])
    for path, g in zip(params, grads[1:], strict=True):
        prog.output("d_" + path.split(".", 1)[1].replace(".", "_"), g)
    xs = (np.random.default_rng(15).standard_normal((4, 16)) * 2).astype(np.float32)
    inputs = {**m.inputs_from(model.state_dict()), "x": xs}
    interpreted, compiled = run_both(prog, inputs, {}, tmp_path)

    xt = torch.tensor(xs, requires_grad=True)
    sum((model(xt[: i + 1]) ** 2).sum() for i in range(4)).backward()
    for outputs in (interpreted, compiled):
        _check(outputs, model, xt.grad.numpy())
