"""pdg.ir parsing helpers: parse_text / parse_file, ParseFailure and its
`file:line:col` diagnostics, plus the split-input and expected-diagnostics
helpers pdg-opt builds on."""

from __future__ import annotations

import re

import pdg.ir
import pytest
from mlir import ir
from pdg.dialects import pdg as P
from pdg.ir import ParseFailure, parse_file, parse_text
from pdg.ir.expected_diagnostics import check, parse_expectations
from pdg.ir.source import Diagnostic
from pdg.ir.split import split_input
from sample_programs import BAD_DIM_PROGRAM

LOCATION = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+)$")

# Line 4 reads %y, which is never defined: a parse (not verifier) error.
SYNTAX_ERROR = """\
pdg.graph @g {
  pdg.dim @t < 8
  %x = pdg.node "x" [t] -> tensor<f32> {
    pdg.yield %y : tensor<f32>
  }
}
"""

# Parses, but the recurrence on line 3 has no base case.
VERIFIER_ERROR = """\
pdg.graph @g {
  pdg.dim @t < 8
  %x = pdg.node "x" [t] (%p = %x[t - 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %p : tensor<f32>
  }
}
"""


def only_error(failure: ParseFailure) -> Diagnostic:
    errors = [d for d in failure.diagnostics if d.severity == "error"]
    assert len(errors) == 1, failure.diagnostics
    return errors[0]


def test_01_parse_text_returns_a_verified_module(ctx, small_program):
    module = parse_text(small_program, "small.mlir", ctx)
    assert isinstance(module, ir.Module)
    assert module.context is ctx
    [graph] = module.body.operations
    assert graph.operation.name == "pdg.graph"
    names = [op.operation.name for op in graph.regions[0].blocks[0].operations]
    assert names == ["pdg.dim", "pdg.input"] + ["pdg.node"] * 3 + ["pdg.output"]
    assert module.operation.verify()


def test_02_parse_text_of_empty_input_is_an_empty_module(ctx):
    module = parse_text("", "empty.mlir", ctx)
    assert len(module.body.operations) == 0


def test_03_syntax_error_raises_parse_failure_with_file_line_col(ctx):
    with pytest.raises(ParseFailure) as info:
        parse_text(SYNTAX_ERROR, "syntax.mlir", ctx)
    d = only_error(info.value)
    assert d.location == "syntax.mlir:4:15"
    assert "use of undeclared SSA value name" in d.message
    assert str(info.value).startswith("syntax.mlir:4:15: error: use of undeclared SSA value")


def test_04_verifier_error_raises_parse_failure_with_file_line_col(ctx):
    with pytest.raises(ParseFailure) as info:
        parse_text(VERIFIER_ERROR, "verify.mlir", ctx)
    d = only_error(info.value)
    assert d.location == "verify.mlir:3:8"
    assert "'pdg.node' op recurrence without a base case" in d.message
    assert "guard this case with (t >= 1)" in d.message
    assert d.render().startswith("verify.mlir:3:8: error: 'pdg.node' op recurrence")


def test_05_dim_verifier_error_points_at_the_dim(ctx):
    with pytest.raises(ParseFailure) as info:
        parse_text(BAD_DIM_PROGRAM, "dim.mlir", ctx)
    d = only_error(info.value)
    assert d.location == "dim.mlir:2:3"
    assert "bound of dim 't' must be at least 1, got 0" in d.message


@pytest.mark.parametrize(
    "text, location, message",
    [
        pytest.param(
            "pdg.graph @g {\n  pdg.dim @t < sometimes 4\n}\n",
            "2:16",
            "expected a static bound (an integer), 'launch', 'world' or 'dynamic', got 'sometimes'",
            id="dim-bound-keyword",
        ),
        pytest.param(
            "pdg.graph @g {\n  pdg.dim @t < 4\n"
            '  %x = pdg.node "x" [t, t] -> tensor<f32> {\n  }\n}\n',
            "3:25",
            "dim 't' appears twice in the domain",
            id="node-domain-twice",
        ),
        pytest.param(
            'pdg.graph @g {\n  pdg.dim @t < 4\n  %x = pdg.node "x" [t] -> f32 {\n  }\n}\n',
            "3:28",
            "a node's value at one point must be a ranked tensor, got 'f32'",
            id="node-point-type",
        ),
        pytest.param(
            "pdg.graph @g attributes {a = #pdg.access<(d0, d0) : [d0]>} {\n}\n",
            "1:47",
            "'d0' cannot be bound twice or reserved",
            id="access-attr-binder",
        ),
        pytest.param(
            "pdg.graph @g {\n  pdg.dim @t < 4\n"
            '  %w = pdg.input "w" : !pdg.value<[s], tensor<f32>>\n}\n',
            "3:8",
            "uses unknown dim 's' in the domain of input 'w'",
            id="unknown-domain-dim",
        ),
    ],
)
def test_06_pdg_syntax_and_verifier_errors_carry_positions(ctx, text, location, message):
    with pytest.raises(ParseFailure) as info:
        parse_text(text, "case.mlir", ctx)
    d = only_error(info.value)
    assert d.location == f"case.mlir:{location}"
    assert message in d.message


def test_07_value_type_error_in_source_reports_the_line(ctx):
    text = 'pdg.graph @g {\n  %w = pdg.input "w" : !pdg.value<[b, b], tensor<f32>>\n}\n'
    with pytest.raises(ParseFailure) as info:
        parse_text(text, "type.mlir", ctx)
    d = only_error(info.value)
    m = LOCATION.match(d.location)
    assert m and m["file"] == "type.mlir" and m["line"] == "2", d.location
    assert "dimension 'b' appears twice in the domain" in d.message


def test_08_locations_use_the_file_name_given(ctx):
    with pytest.raises(ParseFailure) as info:
        parse_text(SYNTAX_ERROR, "some/dir/prog v2.mlir", ctx)
    assert only_error(info.value).location == "some/dir/prog v2.mlir:4:15"


def test_09_parse_file_reports_the_real_path(ctx, write_file):
    path = write_file("broken.mlir", VERIFIER_ERROR)
    with pytest.raises(ParseFailure) as info:
        parse_file(path, ctx)
    assert only_error(info.value).location == f"{path}:3:8"


def test_10_parse_file_locations_of_a_good_module_name_the_file(ctx, write_file, small_program):
    path = write_file("small.mlir", small_program)
    module = parse_file(str(path), ctx)
    [graph] = module.body.operations
    loc = graph.location
    assert loc.is_a_file()
    assert (loc.filename, loc.start_line, loc.start_col) == (str(path), 1, 1)


def test_11_a_failed_parse_leaves_the_context_usable(ctx, small_program):
    with pytest.raises(ParseFailure):
        parse_text(SYNTAX_ERROR, "bad.mlir", ctx)
    module = parse_text(small_program, "good.mlir", ctx)
    assert module.operation.verify()


def test_12_each_make_context_is_independent(small_program):
    a, b = pdg.ir.make_context(), pdg.ir.make_context()
    assert a is not b
    ma = parse_text(small_program, "a.mlir", a)
    mb = parse_text(small_program, "b.mlir", b)
    assert ma.context is a and mb.context is b
    assert str(ma) == str(mb)


def test_13_parse_text_verify_false_skips_the_verifier(ctx):
    module = parse_text(VERIFIER_ERROR, "noverify.mlir", ctx, verify=False)
    assert module.body.operations[0].operation.name == "pdg.graph"


def test_14_parsed_ops_are_downcast_to_generated_op_classes(ctx, small_program):
    module = parse_text(small_program, "small.mlir", ctx)
    [graph] = module.body.operations
    assert isinstance(graph, P.GraphOp)
    kinds = {type(op) for op in graph.body.blocks[0].operations}
    assert {P.DimOp, P.InputOp, P.NodeOp, P.OutputOp} <= kinds


# --------------------------------------------------------------------------
# split_input / expected diagnostics (the helpers behind pdg-opt's flags)
# --------------------------------------------------------------------------


def test_15_split_input_keeps_original_line_numbers():
    text = "a\nb\n// -----\nc\n  // -----  \nd\ne\n"
    chunks = split_input(text, split=True)
    assert [c.first_line for c in chunks] == [1, 4, 6]
    assert [c.text.splitlines() for c in chunks] == [
        ["a", "b"],
        ["", "", "", "c"],
        ["", "", "", "", "", "d", "e"],
    ]
    assert split_input(text, split=False)[0].text == text


def test_16_split_chunk_diagnostics_point_into_the_whole_file(ctx):
    text = "pdg.graph @a {\n}\n// -----\n" + BAD_DIM_PROGRAM
    good, bad = split_input(text, split=True)
    assert len(parse_text(good.text, "s.mlir", ctx).body.operations) == 1
    with pytest.raises(ParseFailure) as info:
        parse_text(bad.text, "s.mlir", ctx)
    assert only_error(info.value).location == "s.mlir:5:3"


def test_17_parse_expectations_resolves_relative_lines():
    text = "\n".join(
        [
            "// expected-error @+1 {{one}}",  # 1 -> 2
            "x",
            "y // expected-warning {{two}}",  # 3 -> 3
            "// expected-note@-2 {{three}}",  # 4 -> 2
            "// expected-error @above {{four}} expected-remark @below {{five}}",  # 5 -> 4, 6
        ]
    )
    got = [(e.severity, e.line, e.text, e.comment_line) for e in parse_expectations(text)]
    assert got == [
        ("error", 2, "one", 1),
        ("warning", 3, "two", 3),
        ("note", 2, "three", 4),
        ("error", 4, "four", 5),
        ("remark", 6, "five", 5),
    ]


def test_18_check_reports_unexpected_and_missing_diagnostics():
    expectations = parse_expectations("// expected-error @+1 {{wanted}}\nx\n")
    diagnostics = [
        Diagnostic("error", "f.mlir:2:1", "this is wanted indeed"),
        Diagnostic("error", "f.mlir:9:4", "surprise"),
        Diagnostic("remark", "f.mlir:3:1", "remarks may go unexpected"),
    ]
    problems = check(expectations, diagnostics, "f.mlir")
    assert problems == ["f.mlir:9:4: error: unexpected error: surprise"]

    missing = check(parse_expectations("x // expected-error {{absent}}\n"), [], "f.mlir")
    assert missing == ['f.mlir:1: error: expected error "absent" was not produced (on line 1)']


# Two graphs whose nodes fail verification: MLIR's parallel verifier used to
# call the Python diagnostic handler from a worker thread while the parser
# held the GIL, and hang. Contexts from make_context are single-threaded.
TWO_BAD_GRAPHS = """
pdg.graph @g0 {
  %n0 = pdg.node "n0" [] -> tensor<f32> {
  }
  %n1 = pdg.node "n1" [] -> tensor<f32> {
  }
}
pdg.graph @g1 {
  %n0 = pdg.node "n0" [] -> tensor<f32> {
  }
  %n1 = pdg.node "n1" [] -> tensor<f32> {
  }
}
"""


def test_40_failing_graphs_never_deadlock_the_verifier():
    import subprocess
    import sys

    for _ in range(10):
        r = subprocess.run(
            [sys.executable, "-m", "pdg.cli.opt"],
            input=TWO_BAD_GRAPHS,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 1 and "error" in r.stderr


def test_41_parsing_frees_its_context(small_program):
    """Collecting diagnostics once kept every parsed module's context alive
    (a cycle through the nanobind diagnostic handler, which Python's cycle
    collector cannot see): 2 MB per parse, 11 GB in a fuzzer's worker."""
    import gc

    gc.collect()
    before = ir.Context._get_live_count()
    for _ in range(3):
        parse_text(small_program, "small.mlir", pdg.ir.make_context())
        with pytest.raises(ParseFailure):
            parse_text("pdg.graph @g {", "bad.mlir", pdg.ir.make_context())
    gc.collect()
    assert ir.Context._get_live_count() == before
