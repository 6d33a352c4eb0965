"""PyTorch modules imported as node bodies (pdg.nn.from_torch): an MLP, a
layer norm, an attention block over a slice of dynamic length and a Hugging
Face GPT-2 block, each run per point interpreted and compiled and checked
against PyTorch within 1e-5; one compiled artifact takes new weights."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import pdg.frontend as pf  # noqa: E402
from pdg.ir import make_context, parse_text  # noqa: E402
from pdg.lowering.artifact import compile_module  # noqa: E402
from pdg.nn import from_torch  # noqa: E402
from pdg.runtime import load  # noqa: E402
from torch import nn  # noqa: E402

from .conftest import assert_close, run_both  # noqa: E402


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 32)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        return self.out(nn.functional.gelu(self.fc(x), approximate="tanh"))


class Attention(nn.Module):
    """Pre-norm multi-head self-attention with a residual; the output at the
    last position (the query of the current step, over every earlier key)."""

    def __init__(self, d=16, heads=4):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):  # x: (seq, d)
        seq, d = x.shape
        h = self.ln(x)
        q, k, v = self.qkv(h).split(d, dim=-1)
        q, k, v = (a.reshape(seq, self.heads, d // self.heads).transpose(0, 1) for a in (q, k, v))
        w = torch.softmax(q @ k.transpose(1, 2) / (d // self.heads) ** 0.5, dim=-1)
        out = (w @ v).transpose(0, 1).reshape(seq, d)
        return (x + self.proj(out))[-1]


def _points(fn, xs):
    return np.stack([fn(torch.tensor(x)).detach().numpy() for x in xs])


def test_01_mlp_per_point(import_cache, tmp_path):
    torch.manual_seed(0)
    model = MLP()
    mlp = from_torch(model, (torch.randn(8),), cache_dir=import_cache)
    prog = pf.Program("mlp")
    b = prog.dim("b", 5)
    x = prog.input("x", (8,), "f32", domain=[b])
    m = mlp.bind(prog, "mlp")
    prog.output("y", m(x))
    xs = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
    inputs = {**m.inputs_from(model.state_dict()), "x": xs}
    interpreted, compiled = run_both(prog, inputs, {}, tmp_path)
    expected = _points(model, xs)
    assert_close(interpreted["y"], expected)
    assert_close(compiled["y"], expected)


def test_02_layer_norm(import_cache, tmp_path):
    torch.manual_seed(1)
    model = nn.LayerNorm(16)
    with torch.no_grad():  # not the identity gains and zero biases
        model.weight.normal_()
        model.bias.normal_()
    ln = from_torch(model, (torch.randn(3, 16),), cache_dir=import_cache)
    prog = pf.Program("ln")
    b = prog.dim("b", 4)
    x = prog.input("x", (3, 16), "f32", domain=[b])
    m = ln.bind(prog, "ln")
    prog.output("y", m(x))
    xs = (np.random.default_rng(1).standard_normal((4, 3, 16)) * 3 + 1).astype(np.float32)
    inputs = {**m.inputs_from(model.state_dict()), "x": xs}
    interpreted, compiled = run_both(prog, inputs, {}, tmp_path)
    expected = _points(model, xs)
    assert_close(interpreted["y"], expected)
    assert_close(compiled["y"], expected)


def _causal_program(name, block, d):
    """y[t] = block(x[0 : t + 1]): the input's slice grows with t."""
    prog = pf.Program(name)
    t = prog.dim("t", launch="T")
    x = prog.input("x", (d,), "f32", domain=[t])
    m = block.bind(prog, name)
    prog.output("y", m(x[0 : t + 1]))
    return prog, m


def _causal_reference(fn, xs):
    return np.stack([fn(torch.tensor(xs[: i + 1])).detach().numpy() for i in range(len(xs))])


def test_03_attention_over_a_dynamic_length(import_cache, tmp_path):
    torch.manual_seed(2)
    model = Attention()
    attn = from_torch(
        model, (torch.randn(5, 16),), dynamic_shapes=[{0: "seq"}], cache_dir=import_cache
    )
    assert attn.function.input_types[0].shape == (None, 16)
    prog, m = _causal_program("attn", attn, 16)
    rng = np.random.default_rng(2)
    weights = m.inputs_from(model.state_dict())
    module = prog.build()
    compile_module(parse_text(str(module), "attn", make_context()), tmp_path / "a.pdgx", gpu=False)
    compiled = load(tmp_path / "a.pdgx")
    for steps in (1, 7):  # one artifact, any length
        xs = rng.standard_normal((steps, 16)).astype(np.float32)
        expected = _causal_reference(model, xs)
        interpreted, _ = run_both(prog, {**weights, "x": xs}, {"T": steps}, tmp_path, "attn2")
        assert_close(interpreted["y"], expected)
        assert_close(compiled.run({**weights, "x": xs}, {"T": steps}).outputs["y"], expected)


class LastPosition(nn.Module):
    """A Hugging Face block on one sequence (seq, d): its output at the
    last position, i.e. causal attention of the current step."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return self.block(x.unsqueeze(0))[0, -1]


def test_04_hugging_face_gpt2_block(import_cache, tmp_path):
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    config = GPT2Config(n_embd=32, n_head=4, n_layer=1, n_positions=64, vocab_size=16)
    config._attn_implementation = "eager"
    torch.manual_seed(3)
    model = LastPosition(GPT2Block(config, layer_idx=0)).eval()
    with torch.no_grad():  # larger than the init's 0.02, so every part matters
        for p in model.parameters():
            p.normal_(0, 0.2)
    block = from_torch(
        model, (torch.randn(5, 32),), dynamic_shapes=[{0: "seq"}], cache_dir=import_cache
    )
    names = [p.name for p in block.function.params]
    assert "block.attn.c_attn.weight" in names and "block.mlp.c_proj.bias" in names
    prog, m = _causal_program("gpt2", block, 32)
    xs = np.random.default_rng(3).standard_normal((6, 32)).astype(np.float32)
    inputs = {**m.inputs_from(model.state_dict()), "x": xs}
    interpreted, compiled = run_both(prog, inputs, {"T": 6}, tmp_path)
    expected = _causal_reference(model, xs)
    assert_close(interpreted["y"], expected)
    assert_close(compiled["y"], expected)


def test_05_one_artifact_serves_new_weights(import_cache, tmp_path):
    """The weights are program inputs, not constants of the body: the
    artifact compiled for one model's weights runs another's."""
    torch.manual_seed(4)
    first, second = MLP(), MLP()
    mlp = from_torch(first, (torch.randn(8),), cache_dir=import_cache)
    # Same code and shapes, other weights: the same import.
    assert from_torch(second, (torch.randn(8),), cache_dir=import_cache).function is not None
    prog = pf.Program("mlp")
    b = prog.dim("b", 3)
    x = prog.input("x", (8,), "f32", domain=[b])
    m = mlp.bind(prog, "mlp")
    prog.output("y", m(x))
    text = str(prog.build())
    assert "dense<" not in text.replace("dense<0.000000e+00>", "")  # no weight is baked in
    compile_module(parse_text(text, "mlp", make_context()), tmp_path / "m.pdgx", gpu=False)
    program = load(tmp_path / "m.pdgx")
    xs = np.random.default_rng(4).standard_normal((3, 8)).astype(np.float32)
    for model in (first, second):
        out = program.run({**m.inputs_from(model.state_dict()), "x": xs}, {}).outputs["y"]
        assert_close(out, _points(model, xs))


class SumOfLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):  # x: (seq, 4); seq may be 0
        return self.lin(x).sum(0)


def test_an_empty_slice_is_read_as_zero_rows(import_cache, tmp_path):
    """x[0 : t] at t = 0 is a (0, 4) read: the imported body runs on it as
    PyTorch does (a sum over no rows is 0), interpreted and compiled."""
    torch.manual_seed(3)
    model = SumOfLinear()
    imported = from_torch(
        model, (torch.randn(5, 4),), dynamic_shapes=[{0: "seq"}], cache_dir=import_cache
    )
    prog = pf.Program("empty_slice")
    t = prog.dim("t", launch="T")
    x = prog.input("x", (4,), "f32", domain=[t])
    m = imported.bind(prog, "m")
    prog.output("y", m(x[0:t]))
    xs = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    inputs = {**m.inputs_from(model.state_dict()), "x": xs}
    interpreted, compiled = run_both(prog, inputs, {"T": 3}, tmp_path)
    expected = np.stack([model(torch.tensor(xs[:k])).detach().numpy() for k in range(3)])
    assert not expected[0].any()
    assert_close(interpreted["y"], expected)
    assert_close(compiled["y"], expected)
