"""arith/math semantics: integer wraparound, widths, NaN predicates, pdg.point,
gathers (programs/scalars.mlir and inline bodies)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from .helpers import run, run_body

I64_MIN = -(2**63)


@pytest.fixture(scope="module")
def scalars_run():
    inputs = {
        "a": np.array([2**62 + 3, -7, 7, 2**31 - 1, I64_MIN, 12], np.int64),
        "b": np.array([5, 2, -2, 1, -1, 3], np.int64),
        "x": np.array([1.0, 2.0, 123.456, -3.0, 0.5, 10.0]),
        "table": np.arange(8, dtype=np.float32) * 1.5,
        "perm": np.array([0, 3, 7, 2, 5], np.int64),
    }
    return inputs, run("scalars", inputs).outputs


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def test_integer_wraparound(scalars_run):
    inputs, o = scalars_run
    ints = o["ints"]
    for row, a, b in zip(ints, inputs["a"].tolist(), inputs["b"].tolist(), strict=True):
        assert row[0] == _wrap(a * b, 64)  # muli wraps at 64 bits
        assert row[1] == _wrap(_wrap(a, 32) + _wrap(b, 32), 32)  # i32 addi
        assert row[2] == _wrap(_trunc_div(a, b), 64)  # divsi truncates
        assert row[3] == a - _trunc_div(a, b) * b  # remsi: sign of a
        assert row[4] == _wrap(a // b, 64)  # floordivsi
        assert row[5] == (a % 2**64) >> 60  # shrui reads a as unsigned
        assert row[6] == int(a % 2**64 < b % 2**64)  # cmpi ult
        assert row[7] == -1  # i1: true + true = false, extsi(true) = -1


def test_f64_stays_f64(scalars_run):
    inputs, o = scalars_run
    out = o["f64"]
    assert out.dtype == np.float64
    x = inputs["x"]
    np.testing.assert_array_equal(out[:, 0], (x + 1e-10) - x)
    assert (out[:, 0] > 0).all()  # f32 would lose the 1e-10 entirely
    np.testing.assert_array_equal(out[:, 1], np.exp(x))


def test_pdg_point(scalars_run):
    _, o = scalars_run
    np.testing.assert_array_equal(o["point"], np.arange(6) * 10)


def test_gather_with_computed_index(scalars_run):
    inputs, o = scalars_run
    a, table, perm = inputs["a"].tolist(), inputs["table"], inputs["perm"]
    for t, row in enumerate(o["gather"]):
        k = _wrap(_wrap(3 * a[t], 64) + 1, 64)
        rem = (abs(k) % 8) * (1 if k >= 0 else -1)  # remsi: the sign of the dividend
        assert row[0] == table[(rem + 8) % 8]
        np.testing.assert_array_equal(row[1:], table[(perm + t) % 8])


_NAN = float("nan")
CMPF = {
    "false": lambda a, b: np.zeros_like(a, bool),
    "oeq": lambda a, b: a == b,
    "ogt": lambda a, b: a > b,
    "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b,
    "ole": lambda a, b: a <= b,
    "one": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),
    "ord": lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    "ueq": lambda a, b: (a == b) | np.isnan(a) | np.isnan(b),
    "ugt": lambda a, b: ~(a <= b),
    "uge": lambda a, b: ~(a < b),
    "ult": lambda a, b: ~(a >= b),
    "ule": lambda a, b: ~(a > b),
    "une": lambda a, b: a != b,
    "uno": lambda a, b: np.isnan(a) | np.isnan(b),
    "true": lambda a, b: np.ones_like(a, bool),
}


@pytest.mark.parametrize("pred", list(CMPF))
def test_cmpf_predicates_with_nan(pred):
    a = np.array([1.0, _NAN, 2.0, _NAN, 3.0], np.float32)
    b = np.array([1.0, 1.0, _NAN, _NAN, 2.0], np.float32)
    body = f"    %res = arith.cmpf {pred}, %a, %b : tensor<5xf32>"
    t = "tensor<5xf32>"
    out = run_body(body, {"a": (t, a), "b": (t, b)}, "tensor<5xi1>")
    np.testing.assert_array_equal(out, CMPF[pred](a, b))


CMPI = {
    "eq": lambda a, b, ua, ub: a == b,
    "ne": lambda a, b, ua, ub: a != b,
    "slt": lambda a, b, ua, ub: a < b,
    "sle": lambda a, b, ua, ub: a <= b,
    "sgt": lambda a, b, ua, ub: a > b,
    "sge": lambda a, b, ua, ub: a >= b,
    "ult": lambda a, b, ua, ub: ua < ub,
    "ule": lambda a, b, ua, ub: ua <= ub,
    "ugt": lambda a, b, ua, ub: ua > ub,
    "uge": lambda a, b, ua, ub: ua >= ub,
}


@pytest.mark.parametrize("pred", list(CMPI))
def test_cmpi_predicates_on_i8(pred):
    a = np.array([1, -1, 127, -128, 0], np.int8)
    b = np.array([1, 1, -128, 127, -1], np.int8)
    body = f"    %res = arith.cmpi {pred}, %a, %b : tensor<5xi8>"
    out = run_body(body, {"a": ("tensor<5xi8>", a), "b": ("tensor<5xi8>", b)}, "tensor<5xi1>")
    want = CMPI[pred](a, b, a.view(np.uint8), b.view(np.uint8))
    np.testing.assert_array_equal(out, want)


def test_i1_and_casts():
    body = """
    %t = arith.constant dense<[true, false, true]> : tensor<3xi1>
    %f = arith.constant dense<[true, true, false]> : tensor<3xi1>
    %mx = arith.maxsi %t, %f : tensor<3xi1>
    %mu = arith.maxui %t, %f : tensor<3xi1>
    %sx = arith.extsi %mx : tensor<3xi1> to tensor<3xi32>
    %ux = arith.extui %mu : tensor<3xi1> to tensor<3xi32>
    %s = arith.addi %sx, %ux : tensor<3xi32>
    %big = arith.constant dense<[300, -200, 65535]> : tensor<3xi32>
    %tr = arith.trunci %big : tensor<3xi32> to tensor<3xi8>
    %tx = arith.extsi %tr : tensor<3xi8> to tensor<3xi32>
    %res = arith.addi %s, %tx : tensor<3xi32>"""
    out = run_body(body, {}, "tensor<3xi32>")
    # maxsi on i1: true is -1, so max(true, true)=true, max(false, true)=false.
    mx = np.array([-1, 0, 0])
    mu = np.array([1, 1, 1])
    tr = np.array([300, -200, 65535]).astype(np.int8)
    np.testing.assert_array_equal(out, mx + mu + tr)
    assert out.dtype == np.int32


def test_float_int_casts_and_bitcast():
    body = """
    %x = arith.constant dense<[-2.75, 2.5, 1.0e10]> : tensor<3xf64>
    %f = arith.truncf %x : tensor<3xf64> to tensor<3xf32>
    %bits = arith.bitcast %f : tensor<3xf32> to tensor<3xi32>
    %back = arith.bitcast %bits : tensor<3xi32> to tensor<3xf32>
    %small = arith.constant dense<[-2.75, 2.5, 7.9]> : tensor<3xf32>
    %i = arith.fptosi %small : tensor<3xf32> to tensor<3xi16>
    %u = arith.constant dense<[-1, 2, 3]> : tensor<3xi16>
    %uf = arith.uitofp %u : tensor<3xi16> to tensor<3xf32>
    %si = arith.sitofp %i : tensor<3xi16> to tensor<3xf32>
    %a = arith.addf %uf, %si : tensor<3xf32>
    %res = arith.addf %a, %back : tensor<3xf32>"""
    out = run_body(body, {}, "tensor<3xf32>")
    expected = np.array([65535 - 2, 2 + 2, 3 + 7], np.float32) + np.array(
        [-2.75, 2.5, 1e10], np.float32
    )
    np.testing.assert_array_equal(out, expected)


def test_min_max_float_semantics():
    body = """
    %mx = arith.maximumf %a, %b : tensor<4xf32>
    %mn = arith.minnumf %a, %b : tensor<4xf32>
    %res = tensor.concat dim(0) %mx, %mn : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>"""
    a = np.array([-0.0, _NAN, 1.0, 0.0], np.float32)
    b = np.array([0.0, 1.0, _NAN, -0.0], np.float32)
    t = "tensor<4xf32>"
    out = run_body(body, {"a": (t, a), "b": (t, b)}, "tensor<8xf32>")
    mx, mn = out[:4], out[4:]
    assert mx[0] == 0 and not np.signbit(mx[0]) and not np.signbit(mx[3])  # +0 > -0
    assert np.isnan(mx[1]) and np.isnan(mx[2])  # maximumf propagates NaN
    np.testing.assert_array_equal(mn[1:3], [1.0, 1.0])  # minnumf ignores NaN


def test_math_functions():
    body = """
    %r = math.round %x : tensor<6xf32>
    %e = math.erf %x : tensor<6xf32>
    %q = math.rsqrt %y : tensor<6xf32>
    %f = math.fma %x, %y, %r : tensor<6xf32>
    %t = math.tanh %e : tensor<6xf32>
    %s = arith.addf %q, %f : tensor<6xf32>
    %res = arith.addf %s, %t : tensor<6xf32>"""
    x = np.array([-2.5, -0.5, 0.5, 1.5, 2.4999, 3.0], np.float32)
    y = np.array([1.0, 4.0, 0.25, 9.0, 2.0, 16.0], np.float32)
    t = "tensor<6xf32>"
    out = run_body(body, {"x": (t, x), "y": (t, y)}, t)
    r = np.array([-3, -1, 1, 2, 2, 3], np.float32)  # halves away from zero
    e = np.array([math.erf(v) for v in x], np.float32)
    want = (1 / np.sqrt(y)) + (x * y + r) + np.tanh(e)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert out.dtype == np.float32


def test_math_fpowi():
    """A float to an integer power, negative bases and exponents included."""
    body = """
    %res = math.fpowi %x, %n : tensor<5xf32>, tensor<5xi32>"""
    x = np.array([-2.0, -0.5, 1.5, 3.0, 0.25], np.float32)
    n = np.array([3, 2, -2, 0, 5], np.int32)
    t = "tensor<5xf32>"
    out = run_body(body, {"x": (t, x), "n": ("tensor<5xi32>", n)}, t)
    np.testing.assert_allclose(out, [-8.0, 0.25, 1 / 2.25, 1.0, 0.25**5], rtol=1e-6)
    assert out.dtype == np.float32


def test_tensor_ops():
    body = """
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %s = tensor.extract_slice %x[%c1, 0] [%c2, 3] [1, 2] : tensor<4x6xf32> to tensor<?x3xf32>
    %z = arith.constant 0.0 : f32
    %p = tensor.pad %s low[1, 0] high[0, 1] {
      ^bb0(%i: index, %j: index):
        tensor.yield %z : f32
    } : tensor<?x3xf32> to tensor<?x4xf32>
    %c = tensor.cast %p : tensor<?x4xf32> to tensor<3x4xf32>
    %g = tensor.generate {
      ^bb0(%i: index, %j: index):
        %k = arith.muli %i, %j : index
        %ki = arith.index_cast %k : index to i32
        %kf = arith.sitofp %ki : i32 to f32
        tensor.yield %kf : f32
    } : tensor<3x4xf32>
    %sum = arith.addf %c, %g : tensor<3x4xf32>
    %flat = tensor.collapse_shape %sum [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
    %two = tensor.expand_shape %flat [[0, 1]] output_shape [2, 6]
        : tensor<12xf32> into tensor<2x6xf32>
    %row = tensor.extract_slice %two[1, 0] [1, 6] [1, 1] : tensor<2x6xf32> to tensor<6xf32>
    %one = arith.constant 1.0 : f32
    %ins = tensor.insert %one into %row[%c2] : tensor<6xf32>
    %dst = tensor.splat %z : tensor<2x6xf32>
    %res = tensor.insert_slice %ins into %dst[%c1, 0] [1, 6] [1, 1]
        : tensor<6xf32> into tensor<2x6xf32>"""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = run_body(body, {"x": ("tensor<4x6xf32>", x)}, "tensor<2x6xf32>")
    s = x[1:3, 0:6:2]
    p = np.zeros((3, 4), np.float32)
    p[1:, :3] = s
    g = np.arange(3)[:, None] * np.arange(4)[None, :]
    row = (p + g).reshape(2, 6)[1].copy()
    row[2] = 1.0
    want = np.zeros((2, 6), np.float32)
    want[1] = row
    np.testing.assert_array_equal(out, want)


def test_scf_for_and_if():
    body = """
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %init = arith.constant dense<1> : tensor<i64>
    %res = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %init) -> (tensor<i64>) {
      %c2 = arith.constant 2 : index
      %m = arith.remui %i, %c2 : index
      %is_odd = arith.cmpi eq, %m, %c1 : index
      %next = scf.if %is_odd -> (tensor<i64>) {
        %d = arith.addi %acc, %acc : tensor<i64>
        scf.yield %d : tensor<i64>
      } else {
        %three = arith.constant dense<3> : tensor<i64>
        %d = arith.addi %acc, %three : tensor<i64>
        scf.yield %d : tensor<i64>
      }
      scf.yield %next : tensor<i64>
    }"""
    out = run_body(body, {}, "tensor<i64>")
    acc = 1
    for i in range(5):
        acc = acc * 2 if i % 2 else acc + 3
    assert out == acc


@pytest.mark.parametrize("width", [1, 9, 64, 1000])
def test_splat_constants_fill_every_element(width):
    """`dense<true> : tensor<Nxi1>`: MLIR's bindings hand a splat of i1 over
    as one byte viewed as N elements, so past the 8th the interpreter read
    whatever memory followed (a GRPO program's rows lost their lengths at
    random). Splats of every type are read as their one value."""
    import pdg.frontend as pf
    from pdg.interpreter import interpret

    prog = pf.Program("splats")
    prog.output("yes", prog.constant(1, (width,), "i1").astype("i64"))
    prog.output("half", prog.constant(0.5, (width,), "f32"))
    prog.output("seven", prog.constant(7, (width,), "i64"))
    out = interpret(prog.build(), {}).outputs
    np.testing.assert_array_equal(out["yes"], np.ones(width, np.int64))
    np.testing.assert_array_equal(out["half"], np.full(width, 0.5, np.float32))
    np.testing.assert_array_equal(out["seven"], np.full(width, 7, np.int64))
