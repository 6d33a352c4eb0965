"""pdg-opt refuses option values it used to accept silently: --pdg-symbols
values that are negative, unknown or beyond a dim's max (a negative memory
report), --pdg-symbols without --pdg-memory-report, pass options glued with
a comma (MLIR reads `{dim=b,foo=1}` as dim = "b,foo=1", so an unknown or
misspelled option after the comma was never reported) and a pdg-vectorize
dim the program does not have."""

from __future__ import annotations

import pytest

PROGRAM = """\
pdg.graph @p {
  pdg.dim @b < launch B max 8
  pdg.dim @t < dynamic T max 16 until %done : !pdg.value<[b, t], tensor<i1>>
  %x = pdg.input "x" : !pdg.value<[b], tensor<4xf32>>
  %y = pdg.node "y" [b, t] (%a = %x[b] : !pdg.value<[b], tensor<4xf32>>) -> tensor<4xf32> {
    pdg.yield %a : tensor<4xf32>
  }
  %done = pdg.node "done" [b, t] (%a = %x[b] : !pdg.value<[b], tensor<4xf32>>) -> tensor<i1> {
    %c = arith.constant dense<true> : tensor<i1>
    pdg.yield %c : tensor<i1>
  }
  pdg.output "y" %y : !pdg.value<[b, t], tensor<4xf32>>
}
"""
REPORT = ("--pdg-plan-storage", "--pdg-memory-report")


def refused(r, message: str) -> None:
    assert r.rc == 1, r.err
    assert f"pdg-opt: error: {message}" in r.err, r.err
    assert r.out == "" and "Traceback" not in r.err and "internal error" not in r.err


def test_01_memory_report_with_valid_symbols(opt, write_file):
    r = opt(str(write_file("p.mlir", PROGRAM)), *REPORT, "--pdg-symbols", "B=8,T=16")
    assert r.rc == 0, r.err
    assert "memory report for @p (symbols: B=8, T=16)" in r.out


@pytest.mark.parametrize(
    "symbols, message",
    [
        ("B=-5", "--pdg-symbols B=-5: B bounds dim 'b' of @p, a count of points: give at least 1"),
        ("B=0", "--pdg-symbols B=0: B bounds dim 'b' of @p"),
        ("B=2,Q=3", "--pdg-symbols: 'Q' is not a bound symbol of the program (its symbols: B, T)"),
        ("b=2", "--pdg-symbols: 'b' is not a bound symbol of the program"),
        ("B=9", "--pdg-symbols B=9: dim 'b' of @p is declared with max 8"),
        ("T=17", "--pdg-symbols T=17: dim 't' of @p is declared with max 16"),
    ],
)
def test_02_bad_symbol_values_are_refused(opt, write_file, symbols, message):
    refused(opt(str(write_file("p.mlir", PROGRAM)), *REPORT, "--pdg-symbols", symbols), message)


def test_03_symbols_without_the_memory_report_are_refused(opt, write_file):
    r = opt(str(write_file("p.mlir", PROGRAM)), "--pdg-symbols", "B=2")
    refused(r, "--pdg-symbols gives values for --pdg-memory-report")


@pytest.mark.parametrize(
    "args",
    [
        ("--pdg-vectorize=dim=b,foo=1",),
        ("--canonicalize=max-iterations=3,region-simplify=disabled",),
        ("--pass-pipeline", "builtin.module(pdg.graph(pdg-vectorize{dim=b, dimm=b}))"),
        ("--pass-pipeline", "builtin.module(func.func(cse),pdg-vectorize{dim=b,foo=1})"),
    ],
)
def test_04_options_glued_with_a_comma_are_refused(opt, write_file, args):
    r = opt(str(write_file("p.mlir", PROGRAM)), *args)
    refused(r, "invalid pass pipeline: pass options are separated by spaces, not commas")


def test_05_options_with_commas_inside_brackets_or_lists_are_kept(opt, write_file):
    path = str(write_file("p.mlir", PROGRAM))
    nested = "builtin.module(inline{op-pipelines=func.func(cse,canonicalize)})"
    r = opt(path, "--pass-pipeline", nested)
    assert r.rc == 0, r.err
    spaced = "--canonicalize=max-iterations=3 region-simplify=disabled"
    r = opt(path, "--pdg-vectorize=dim=b", spaced)
    assert r.rc == 0, r.err


def test_06_unknown_options_are_refused_by_mlir(opt, write_file):
    """What MLIR itself reports (no comma involved): kept that way."""
    r = opt(str(write_file("p.mlir", PROGRAM)), "--pdg-vectorize=foo=1")
    refused(r, "invalid pass pipeline:")
    assert "no such option foo" in r.err


def test_07_vectorize_dim_the_program_lacks_is_refused(opt, write_file):
    path = write_file("p.mlir", PROGRAM)
    r = opt(str(path), "--pdg-vectorize=dim=zz")
    assert r.rc == 1 and r.out == ""
    message = "'pdg.graph' op pdg-vectorize: no dim 'zz' to fold; its dims: b, t"
    assert f"{path}:1:1: error: {message}" in r.err
