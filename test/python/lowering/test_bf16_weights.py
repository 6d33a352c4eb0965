"""Weights stored in bf16 (GPTConfig(weight_dtype="bf16")): the decode
program against the same program with f32 weights, interpreted and
compiled. bf16 keeps 8 bits of mantissa, so each weight moves by up to
2^-9 relative; the products sum in f32, and the logits stay within 1e-2
(max abs difference over max abs value; 3e-3 to 7e-3 at each step here)
and greedy tokens agree. The weights are normal * 0.1: at scale 1 the
attention scores reach the hundreds, a softmax near a tie turns the
rounding into a different choice of key (a step 0.16 off, then another
token after 9 steps, measured on these shapes), which says nothing of
the products.

The model is large enough for both of the compiled products' kernels: the
layers' matrices take the register tile, the tied logits' (64 x 2048 bf16:
256 KiB) are streamed."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from decode_programs import small_decode
from pdg.frontend import ProgramError
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.nn import GPTConfig
from pdg.runtime.loader import RunError

PROMPTS = [[1, 2, 3], [4], [9, 7]]
STEPS = 10
SHAPE = {"vocab": 2048, "d_model": 64, "heads": 4, "layers": 2, "max_len": 16}
TOLERANCE = 1e-2  # relative, on the logits
WEIGHT_SCALE = 0.1


def _decode(weight_dtype: str | None):
    decode = small_decode(
        "full",
        **SHAPE,
        eos=None,
        prompt_width=3,
        response_limit=True,
        weight_dtype=weight_dtype,
    )
    return decode, str(decode.program.build())


@pytest.fixture(scope="module")
def weights():
    decode, _ = _decode(None)
    return decode.model.init_weights(seed=3, scale=WEIGHT_SCALE)  # f32


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """(decode, text, compiled) for f32 and bf16 weights."""
    out = {}
    for kind in ("f32", "bf16"):
        decode, text = _decode(None if kind == "f32" else "bf16")
        path = tmp_path_factory.mktemp(kind) / "decode.pdgx"
        compile_module(parse_text(text, "decode", make_context()), path)
        out[kind] = (decode, text, pdg.runtime.load(path))
    return out


def _relative_error(ref, got) -> float:
    ref, got = (
        np.concatenate([np.asarray(r) for r in ref]),
        np.concatenate([np.asarray(g) for g in got]),
    )
    assert ref.shape == got.shape
    return float(np.abs(ref - got).max() / np.abs(ref).max())


def _inputs(decode, weights):
    return decode.inputs(weights, PROMPTS, [STEPS] * len(PROMPTS))


def _interpret(decode, text, weights):
    inputs = _inputs(decode, weights)
    return interpret(parse_text(text, "ref", make_context()), inputs, symbols={"B": len(PROMPTS)})


def test_bf16_weights_are_program_inputs_in_bf16(programs, weights):
    decode, _, program = programs["bf16"]
    inputs = _inputs(decode, weights)
    # Matrices and tables in bf16 (converted from the f32 arrays given);
    # norms and biases stay f32.
    assert inputs["h0_attn_q_w"].dtype == ml_dtypes.bfloat16
    assert inputs["wte_w"].dtype == ml_dtypes.bfloat16
    assert inputs["h0_attn_q_b"].dtype == np.float32
    assert inputs["ln_f_g"].dtype == np.float32
    specs = {s["name"]: s["element"] for s in program.manifest["abi"]["inputs"]}
    assert specs["h1_mlp_fc_w"] == "bf16" and specs["h1_mlp_fc_b"] == "f32"
    # Half the bytes of f32 weights in the compiler's plan of the inputs.
    w32 = sum(v.nbytes for k, v in weights.items() if k.endswith(".w"))
    w16 = sum(v.nbytes for k, v in inputs.items() if k.endswith("_w"))
    assert w16 * 2 == w32


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_bf16_logits_and_tokens_match_f32(programs, weights, mode):
    results = {}
    for kind in ("f32", "bf16"):
        decode, text, program = programs[kind]
        if mode == "interpreted":
            results[kind] = _interpret(decode, text, weights)
        else:
            results[kind] = program.run(_inputs(decode, weights), {"B": len(PROMPTS)})
    f32, bf16 = results["f32"], results["bf16"]
    error = _relative_error(f32.outputs["logits"], bf16.outputs["logits"])
    print(f"{mode}: bf16 logits differ from f32 by {error:.2e} relative")
    assert 0 < error < TOLERANCE  # not the same bits: the weights did round
    for a, b in zip(f32.outputs["tokens"], bf16.outputs["tokens"], strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert len(a) == STEPS


def test_compiled_bf16_matches_interpreted_bf16(programs, weights):
    """The compiled kernels widen and sum as the interpreter does: the two
    agree as closely as f32 programs do (1e-5), far inside the bf16
    tolerance."""
    decode, text, program = programs["bf16"]
    ref = _interpret(decode, text, weights)
    got = program.run(_inputs(decode, weights), {"B": len(PROMPTS)})
    assert _relative_error(ref.outputs["logits"], got.outputs["logits"]) < 1e-5


def test_compiled_bf16_takes_bf16_arrays_only(programs, weights):
    decode, _, program = programs["bf16"]
    inputs = _inputs(decode, weights)
    inputs["h0_attn_q_w"] = inputs["h0_attn_q_w"].astype(np.float32)
    with pytest.raises(RunError, match=r"h0_attn_q_w has dtype float32.*ml_dtypes\.bfloat16"):
        program.run(inputs, {"B": len(PROMPTS)})


def test_bf16_weight_dtype_errors():
    with pytest.raises(ProgramError, match="weight_dtype='f16'"):
        GPTConfig(weight_dtype="f16")
    with pytest.raises(ProgramError, match="weight_dtype='bf16' with dtype='f64'"):
        GPTConfig(weight_dtype="bf16", dtype="f64")
    prog = pf.Program("p")
    w = prog.input("w", (4, 4), "bf16")
    x = prog.input("x", (4,), "f64")
    with pytest.raises(ProgramError, match="different dtypes"):
        pf.matmul(x, w)
    with pytest.raises(ProgramError, match="cannot cast bf16 to i64"):
        w.astype("i64")
    with pytest.raises(ProgramError, match="add of bf16 tensors"):
        w + w
    with pytest.raises(ProgramError, match="sum of a bf16 tensor"):
        w.sum()


def test_vectorized_bf16_matches_interpreted_bf16(weights, tmp_path):
    """With the batch folded into the points (compile_module(vectorize=True),
    bench/scale.py's pdg-vec), the products of rows by bf16 weights widen
    them too."""
    decode, text = _decode("bf16")
    path = tmp_path / "vectorized.pdgx"
    compile_module(parse_text(text, "decode", make_context()), path, vectorize=True)
    got = pdg.runtime.load(path).run(_inputs(decode, weights), {"B": len(PROMPTS)})
    ref = _interpret(decode, text, weights)
    assert _relative_error(ref.outputs["logits"], got.outputs["logits"]) < 1e-5
    for a, b in zip(ref.outputs["tokens"], got.outputs["tokens"], strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_bf16_inputs_through_an_npz_file(programs, weights, tmp_path):
    """`pdg run --inputs in.npz`: NumPy writes ml_dtypes' bfloat16 as 2-byte
    voids and reads them back so; where the program takes bf16 they are
    read as bf16 again, compiled and interpreted, and give the same run."""
    decode, text, program = programs["bf16"]
    inputs = _inputs(decode, weights)
    np.savez(tmp_path / "in.npz", **inputs)
    loaded = dict(np.load(tmp_path / "in.npz"))
    assert loaded["h0_attn_q_w"].dtype == np.dtype("V2")
    symbols = {"B": len(PROMPTS)}
    want = program.run(inputs, symbols).outputs["logits"]
    got = program.run(loaded, symbols).outputs["logits"]
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    ref = interpret(parse_text(text, "ref", make_context()), loaded, symbols=symbols)
    assert _relative_error(ref.outputs["logits"], got) < 1e-5
