"""pdg's Python pass registry and the pipeline runner that mixes Python
passes with MLIR-registered ones (pdg-dce, canonicalize)."""

from __future__ import annotations

import io

import pytest
from mlir import ir
from pdg.ir import parse_text
from pdg.passes import PassError, PdgPass, get_pass, register, registered_passes
from pdg.passes.pipeline import PipelineError, Stage, parse_pipeline, run_pipeline

MARK = "test.marked"


def graphs(module: ir.Module) -> list:
    return [op for op in module.body.operations if op.operation.name == "pdg.graph"]


def node_names(module: ir.Module) -> list[str]:
    names = []
    for graph in graphs(module):
        for op in graph.regions[0].blocks[0].operations:
            if op.operation.name == "pdg.node":
                names.append(ir.StringAttr(op.operation.attributes["name"]).value)
    return names


def mark_graphs(module: ir.Module) -> None:
    """Test pass: sets a unit attribute on every pdg.graph."""
    for graph in graphs(module):
        graph.operation.attributes[MARK] = ir.UnitAttr.get(module.context)


def fail_on_first_graph(module: ir.Module) -> None:
    """Test pass: rejects the input, pointing at the first graph."""
    raise PassError("boom: this graph is unfit", location=graphs(module)[0].location)


@pytest.fixture
def small(ctx, small_program) -> ir.Module:
    return parse_text(small_program, "small.mlir", ctx)


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------


def test_01_register_makes_a_pass_findable(python_pass):
    assert get_pass("test-mark") is None
    fn = python_pass("test-mark", mark_graphs, summary="marks graphs")
    assert fn is mark_graphs  # the decorator returns the function unchanged
    p = get_pass("test-mark")
    assert p == PdgPass("test-mark", "marks graphs", mark_graphs)
    assert p in registered_passes()


def test_02_registered_passes_are_sorted_by_name(python_pass):
    python_pass("test-zz", mark_graphs)
    python_pass("test-aa", mark_graphs)
    names = [p.name for p in registered_passes()]
    assert names.index("test-aa") < names.index("test-zz")
    assert names == sorted(names)


def test_03_registering_a_name_twice_is_an_error(python_pass):
    python_pass("test-twice", mark_graphs)
    with pytest.raises(ValueError, match="registered twice"):
        register("test-twice", "again")(fail_on_first_graph)
    assert get_pass("test-twice").run is mark_graphs


# --------------------------------------------------------------------------
# parse_pipeline
# --------------------------------------------------------------------------


def test_04_parse_pipeline_groups_registry_passes_between_python_passes(python_pass):
    python_pass("test-mark", mark_graphs)
    stages = parse_pipeline("builtin.module(test-mark, canonicalize, pdg-dce, test-mark)")
    assert stages == [
        Stage(python="test-mark"),
        Stage(upstream=["canonicalize", "pdg-dce"]),
        Stage(python="test-mark"),
    ]
    assert [s.describe() for s in stages] == ["test-mark", "canonicalize,pdg-dce", "test-mark"]


def test_05_parse_pipeline_accepts_a_bare_list_and_nesting(python_pass):
    python_pass("test-mark", mark_graphs)
    stages = parse_pipeline("pdg.graph(pdg-dce), canonicalize{max-iterations=3}, test-mark")
    assert stages == [
        Stage(upstream=["pdg.graph(pdg-dce)", "canonicalize{max-iterations=3}"]),
        Stage(python="test-mark"),
    ]
    assert parse_pipeline("") == []
    assert parse_pipeline("builtin.module()") == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("builtin.module(canonicalize, no-such-pass)", "unknown pass 'no-such-pass'"),
        ("builtin.module(test-mark{x=1})", "pdg pass 'test-mark' takes no options"),
        ("builtin.module(canonicalize", "unbalanced brackets"),
        ("canonicalize,,pdg-dce", "empty pass name"),
        ("any(canonicalize)", "must be builtin.module"),
    ],
)
def test_06_parse_pipeline_rejects_bad_pipelines(python_pass, text, message):
    python_pass("test-mark", mark_graphs)
    with pytest.raises(PipelineError, match=message):
        parse_pipeline(text)


def test_07_unregistered_python_pass_name_is_unknown():
    assert get_pass("test-not-registered") is None
    with pytest.raises(PipelineError, match="unknown pass 'test-not-registered'"):
        parse_pipeline("builtin.module(test-not-registered)")


# --------------------------------------------------------------------------
# run_pipeline
# --------------------------------------------------------------------------


def test_08_mixed_pipeline_runs_stages_in_order(python_pass, small):
    snapshots: list[tuple[list[str], str]] = []

    def record(module: ir.Module) -> None:
        snapshots.append((node_names(module), str(module)))

    python_pass("test-record", record)
    stages = parse_pipeline(
        "builtin.module(test-record, pdg-dce, test-record, canonicalize, test-record)"
    )
    assert run_pipeline(small, stages) == []
    assert [names for names, _ in snapshots] == [["x", "p", "q"], ["x"], ["x"]]
    # pdg-dce ran before the 2nd snapshot, canonicalize only before the 3rd.
    assert "%arg1 = %w[]" in snapshots[1][1]
    assert "%arg1 = %w[]" not in snapshots[2][1]


def test_09_python_pass_changes_are_kept_by_later_passes(python_pass, ctx, small_program):
    python_pass("test-mark", mark_graphs)
    two_graphs = small_program + small_program.replace("@small", "@other")
    module = parse_text(two_graphs, "two.mlir", ctx)
    failures = run_pipeline(
        module, parse_pipeline("builtin.module(test-mark,canonicalize,pdg-dce)")
    )
    assert failures == []
    assert all(MARK in g.operation.attributes for g in graphs(module))
    text = str(module)
    assert "pdg.graph @small attributes {test.marked} {" in text
    assert "pdg.graph @other attributes {test.marked} {" in text
    assert node_names(module) == ["x", "x"]


def test_10_pass_error_becomes_a_located_diagnostic(python_pass, small):
    ran_after: list[bool] = []
    python_pass("test-fail", fail_on_first_graph)
    python_pass("test-after", lambda m: ran_after.append(True))
    stages = parse_pipeline("builtin.module(pdg-dce, test-fail, test-after)")
    [d] = run_pipeline(small, stages)
    assert d.severity == "error"
    assert d.location == "small.mlir:1:1"
    assert d.message == "test-fail: boom: this graph is unfit"
    assert d.render() == "small.mlir:1:1: error: test-fail: boom: this graph is unfit"
    assert ran_after == []  # the pipeline stops at the failure


def test_11_pass_error_without_location(python_pass, small):
    def fail(module):
        raise PassError("no place to point at")

    python_pass("test-fail-noloc", fail)
    [d] = run_pipeline(small, parse_pipeline("test-fail-noloc"))
    assert (d.location, d.message) == ("<unknown>", "test-fail-noloc: no place to point at")


def test_12_ir_broken_by_a_python_pass_is_caught_by_the_verifier(python_pass, small):
    def zero_bounds(module):
        for graph in graphs(module):
            for op in graph.regions[0].blocks[0].operations:
                if op.operation.name == "pdg.dim":
                    i64 = ir.IntegerType.get_signless(64, context=module.context)
                    op.operation.attributes["size"] = ir.IntegerAttr.get(i64, 0)

    python_pass("test-break", zero_bounds)
    failures = run_pipeline(small, parse_pipeline("test-break, canonicalize"))
    assert failures, "a broken module must not pass"
    assert any("bound of dim 't' must be at least 1, got 0" in d.message for d in failures)
    assert any(d.location == "small.mlir:2:3" for d in failures)


def test_13_print_after_all_dumps_python_stages(python_pass, small):
    python_pass("test-mark", mark_graphs)
    dump = io.StringIO()
    assert run_pipeline(small, parse_pipeline("test-mark"), print_after_all=True, dump=dump) == []
    text = dump.getvalue()
    assert text.startswith("// -----// IR Dump After test-mark //----- //\n")
    assert "pdg.graph @small attributes {test.marked}" in text


def test_14_empty_pipeline_leaves_the_module_alone(small):
    before = str(small)
    assert run_pipeline(small, []) == []
    assert str(small) == before


# --------------------------------------------------------------------------
# Python passes through pdg-opt
# --------------------------------------------------------------------------


def test_15_cli_runs_python_pass_flags_and_pipelines(python_pass, opt, write_file, small_program):
    python_pass("test-mark", mark_graphs)
    path = write_file("small.mlir", small_program)
    as_flags = opt(str(path), "--test-mark", "--pdg-dce")
    assert as_flags.rc == 0, as_flags.err
    assert "pdg.graph @small attributes {test.marked} {" in as_flags.out
    assert 'pdg.node "p"' not in as_flags.out
    as_pipeline = opt(str(path), "--pass-pipeline=builtin.module(test-mark,pdg-dce)")
    assert as_pipeline.rc == 0 and as_pipeline.out == as_flags.out


def test_16_cli_reports_pass_error_at_its_location(python_pass, opt, write_file, small_program):
    python_pass("test-fail", fail_on_first_graph)
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--canonicalize", "--test-fail")
    assert r.rc == 1
    assert r.out == ""
    assert f"{path}:1:1: error: test-fail: boom: this graph is unfit" in r.err
    assert "Traceback" not in r.err


def test_17_cli_verify_diagnostics_matches_pass_errors(python_pass, opt, write_file, small_program):
    python_pass("test-fail", fail_on_first_graph)
    path = write_file("expected.mlir", "// expected-error @below {{boom}}\n" + small_program)
    r = opt(str(path), "--test-fail", "--verify-diagnostics")
    assert (r.rc, r.err) == (0, "")


def test_18_cli_python_pass_rejects_options(python_pass, opt, write_file, small_program):
    python_pass("test-mark", mark_graphs)
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--test-mark=x")
    assert r.rc == 1
    assert "pdg pass 'test-mark' takes no options" in r.err


def test_19_cli_list_passes_shows_python_passes(python_pass, opt):
    python_pass("test-mark", mark_graphs, summary="Marks every graph (test only)")
    r = opt("--list-passes")
    assert r.rc == 0
    python_part, _, mlir_part = r.out.partition("Passes registered with MLIR")
    assert python_part.startswith("pdg passes (Python):\n")
    assert "--test-mark" in python_part and "Marks every graph (test only)" in python_part
    assert "--pdg-dce" in mlir_part


def test_20_cli_print_ir_after_all_includes_python_stages(
    python_pass, opt, write_file, small_program
):
    python_pass("test-mark", mark_graphs)
    path = write_file("small.mlir", small_program)
    r = opt(str(path), "--pdg-dce", "--test-mark", "--mlir-print-ir-after-all")
    assert r.rc == 0
    dce = r.err.index("IR Dump After PdgDeadNodeElimination (pdg-dce)")
    mark = r.err.index("IR Dump After test-mark")
    assert dce < mark
    assert "attributes {test.marked}" not in r.err[dce:mark]
    assert "attributes {test.marked}" in r.err[mark:]
