"""linalg.generic and named structured ops (programs/linalg.mlir and inline bodies)."""

from __future__ import annotations

import numpy as np
import pytest

from .helpers import run, run_body


@pytest.fixture(scope="module")
def linalg_run():
    rng = np.random.default_rng(7)
    inputs = {
        "A": rng.standard_normal((4, 3)).astype(np.float32),
        "B": rng.standard_normal((3, 5)).astype(np.float32),
        "v3": rng.standard_normal(3).astype(np.float32),
        "v4": rng.standard_normal(4).astype(np.float32),
        "s": np.array([1, 5, 2, 5, 0, 5], np.float32),
    }
    inputs["A16"] = inputs["A"].astype(np.float16)
    inputs["B16"] = inputs["B"].astype(np.float16)
    return inputs, run("linalg", inputs).outputs


def test_generic_elementwise_with_broadcast_and_index(linalg_run):
    i, o = linalg_run
    hundreds = (100 * np.arange(4, dtype=np.float32))[:, None]
    expected = i["A"] * i["v4"][:, None] + i["v3"][None, :] + hundreds
    np.testing.assert_array_equal(o["ew"], expected)
    assert o["ew"].dtype == np.float32


def test_generic_reduction_combines_with_init(linalg_run):
    i, o = linalg_run
    np.testing.assert_allclose(o["rowsum"], 1 + i["A"].sum(axis=1), rtol=1e-6)


def test_generic_contraction(linalg_run):
    i, o = linalg_run
    np.testing.assert_allclose(o["mm_generic"], i["A"] @ i["B"], rtol=1e-5, atol=1e-6)


def test_argmax_ties_go_to_the_first_index(linalg_run):
    i, o = linalg_run
    assert o["argmax"] == 1  # 5 appears at 1, 3 and 5
    np.testing.assert_array_equal(o["row_argmax"], np.argmax(i["A"], axis=1))


def test_named_contractions(linalg_run):
    i, o = linalg_run
    A, B, v3, v4 = i["A"], i["B"], i["v3"], i["v4"]
    np.testing.assert_allclose(o["matmul"], A @ B, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o["matvec"], A @ v3, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o["vecmat"], v4 @ A, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o["dot"], v3 @ v3, rtol=1e-6)
    up = i["A16"].astype(np.float32) @ i["B16"].astype(np.float32)
    np.testing.assert_allclose(o["matmul_mixed"], up, rtol=1e-6)
    assert o["matmul_mixed"].dtype == np.float32


def test_softmax_transpose_broadcast(linalg_run):
    i, o = linalg_run
    A = i["A"]
    e = np.exp(A - A.max(axis=1, keepdims=True))
    np.testing.assert_allclose(o["softmax"], e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(o["transpose"], A.T)
    np.testing.assert_array_equal(o["broadcast"], np.broadcast_to(i["v3"], (4, 3)))


def test_named_elementwise_and_map(linalg_run):
    i, o = linalg_run
    A = i["A"]
    np.testing.assert_allclose(o["named_elementwise"], np.maximum(np.exp(A) + A, A) - A, rtol=1e-6)


def test_reduction_that_is_not_a_combiner_runs_in_order():
    # acc = acc * 2 + x over a row: not associative, so the loop order shows.
    body = """
    %e = tensor.empty() : tensor<2xi64>
    %z = arith.constant 0 : i64
    %init = linalg.fill ins(%z : i64) outs(%e : tensor<2xi64>) -> tensor<2xi64>
    %res = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                            affine_map<(i, j) -> (i)>],
                           iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<2x4xi64>) outs(%init : tensor<2xi64>) {
      ^bb0(%v: i64, %acc: i64):
        %two = arith.constant 2 : i64
        %d = arith.muli %acc, %two : i64
        %s = arith.addi %d, %v : i64
        linalg.yield %s : i64
    } -> tensor<2xi64>"""
    x = np.array([[1, 0, 1, 1], [0, 1, 1, 0]], np.int64)
    out = run_body(body, {"x": ("tensor<2x4xi64>", x)}, "tensor<2xi64>")
    np.testing.assert_array_equal(out, [0b1011, 0b0110])


def test_generic_with_constant_and_permuted_maps():
    # out[j, i] = x[i, 1] + y[j, i]: a constant index and a transposed output.
    body = """
    %e = tensor.empty() : tensor<3x2xf64>
    %res = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 1)>,
                                            affine_map<(i, j) -> (j, i)>,
                                            affine_map<(i, j) -> (j, i)>],
                           iterator_types = ["parallel", "parallel"]}
        ins(%x, %y : tensor<2x4xf64>, tensor<3x2xf64>) outs(%e : tensor<3x2xf64>) {
      ^bb0(%a: f64, %b: f64, %o: f64):
        %s = arith.addf %a, %b : f64
        linalg.yield %s : f64
    } -> tensor<3x2xf64>"""
    x = np.arange(8, dtype=np.float64).reshape(2, 4)
    y = np.arange(6, dtype=np.float64).reshape(3, 2) * 10
    out = run_body(
        body, {"x": ("tensor<2x4xf64>", x), "y": ("tensor<3x2xf64>", y)}, "tensor<3x2xf64>"
    )
    np.testing.assert_array_equal(out, x[:, 1][None, :] + y)
    assert out.dtype == np.float64


def test_batch_matmul_and_integer_reduce():
    body = """
    %e = tensor.empty() : tensor<2x3x3xi32>
    %z = arith.constant 0 : i32
    %init = linalg.fill ins(%z : i32) outs(%e : tensor<2x3x3xi32>) -> tensor<2x3x3xi32>
    %bm = linalg.batch_matmul ins(%x, %x : tensor<2x3x3xi32>, tensor<2x3x3xi32>)
                              outs(%init : tensor<2x3x3xi32>) -> tensor<2x3x3xi32>
    %e2 = tensor.empty() : tensor<2xi32>
    %one = arith.constant -1 : i32
    %i2 = linalg.fill ins(%one : i32) outs(%e2 : tensor<2xi32>) -> tensor<2xi32>
    %res = linalg.reduce ins(%bm : tensor<2x3x3xi32>) outs(%i2 : tensor<2xi32>) dimensions = [1, 2]
      (%in: i32, %acc: i32) {
        %m = arith.maxsi %in, %acc : i32
        linalg.yield %m : i32
      }"""
    x = np.arange(18, dtype=np.int32).reshape(2, 3, 3) - 9
    out = run_body(body, {"x": ("tensor<2x3x3xi32>", x)}, "tensor<2xi32>")
    np.testing.assert_array_equal(out, (x @ x).max(axis=(1, 2)))


def test_generic_with_an_affine_input_map_gathers():
    # A 1-d convolution: x is read at i + k.
    body = """
    %e = tensor.empty() : tensor<4xf32>
    %z = arith.constant 0.0 : f32
    %init = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %res = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i + k)>,
                                            affine_map<(i, k) -> (k)>,
                                            affine_map<(i, k) -> (i)>],
                           iterator_types = ["parallel", "reduction"]}
        ins(%x, %w : tensor<6xf32>, tensor<3xf32>) outs(%init : tensor<4xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>"""
    x = np.arange(6, dtype=np.float32)
    w = np.array([1, 10, 100], np.float32)
    out = run_body(body, {"x": ("tensor<6xf32>", x), "w": ("tensor<3xf32>", w)}, "tensor<4xf32>")
    np.testing.assert_array_equal(out, np.convolve(x, w[::-1], "valid"))


def test_output_map_dropping_a_dim_keeps_the_last_write():
    body = """
    %e = tensor.empty() : tensor<3xf32>
    %res = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                            affine_map<(i, j) -> (j)>],
                           iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<2x3xf32>) outs(%e : tensor<3xf32>) {
      ^bb0(%a: f32, %o: f32):
        linalg.yield %a : f32
    } -> tensor<3xf32>"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(
        run_body(body, {"x": ("tensor<2x3xf32>", x)}, "tensor<3xf32>"), x[-1]
    )
