"""The sample program examples/decode_step.mlir: it parses, round-trips in
the custom and generic forms, and pdg-dce removes its dead node."""

from __future__ import annotations

import pytest
from mlir import ir
from pdg.ir import make_context, parse_file, parse_text
from pdg.passes.pipeline import parse_pipeline, run_pipeline

LIVE_NODES = ["tok", "h", "q", "k", "v", "att", "logits", "next", "done"]


def node_names(module: ir.Module) -> list[str]:
    [graph] = module.body.operations
    return [
        ir.StringAttr(op.operation.attributes["name"]).value
        for op in graph.regions[0].blocks[0].operations
        if op.operation.name == "pdg.node"
    ]


@pytest.fixture
def decode(ctx, decode_step_path) -> ir.Module:
    return parse_file(decode_step_path, ctx)


def test_01_decode_step_parses_and_verifies(decode):
    assert decode.operation.verify()
    [graph] = decode.body.operations
    assert graph.operation.name == "pdg.graph"
    assert ir.StringAttr(graph.operation.attributes["sym_name"]).value == "decode"
    assert node_names(decode) == LIVE_NODES + ["unused"]


def test_02_custom_form_round_trip_is_stable(ctx, decode):
    first = str(decode)
    second = str(parse_text(first, "first.mlir", ctx))
    assert second == first
    assert str(parse_text(second, "second.mlir", ctx)) == first


def test_03_printed_form_uses_named_dims_and_expands_aliases(decode):
    text = str(decode)
    assert "pdg.dim @t < dynamic T max 256 until %done : !pdg.value<[b, t], tensor<i1>>" in text
    assert "case (t >= 1) (%arg0 = %next[b, t - 1] : !pdg.value<[b, t], tensor<i64>>) {" in text
    assert "%arg1 = %k[b, max(0, t - 15) : t + 1] : !pdg.value<[b, t], tensor<32xf32>>" in text
    assert "!tok" not in text


def test_04_generic_form_round_trip_is_stable(ctx, decode):
    generic = decode.operation.get_asm(print_generic_op_form=True)
    assert '"pdg.node"' in generic and '"pdg.graph"' in generic
    assert 'pdg.node "tok"' not in generic
    reparsed = parse_text(generic, "generic.mlir", ctx)
    assert reparsed.operation.get_asm(print_generic_op_form=True) == generic
    # And the generic form denotes the same IR as the custom one.
    assert str(reparsed) == str(decode)


def test_05_round_trip_across_contexts(decode, decode_step_path):
    other = parse_file(decode_step_path, make_context())
    assert other.context is not decode.context
    assert str(other) == str(decode)
    assert other.operation.get_asm(print_generic_op_form=True) == decode.operation.get_asm(
        print_generic_op_form=True
    )


def test_06_pdg_dce_removes_only_the_unused_node(decode):
    assert run_pipeline(decode, parse_pipeline("builtin.module(pdg-dce)")) == []
    assert node_names(decode) == LIVE_NODES
    text = str(decode)
    assert 'pdg.node "unused"' not in text
    assert text.count("pdg.input") == 5 and text.count("pdg.output") == 2


def test_07_pdg_dce_is_idempotent_and_its_output_round_trips(ctx, decode):
    run_pipeline(decode, parse_pipeline("pdg-dce"))
    once = str(decode)
    assert run_pipeline(decode, parse_pipeline("pdg-dce")) == []
    assert str(decode) == once
    assert str(parse_text(once, "dce.mlir", ctx)) == once


def test_08_pdg_opt_on_the_example(opt, decode_step_path):
    plain = opt(str(decode_step_path))
    assert plain.rc == 0 and plain.err == ""
    assert 'pdg.node "unused"' in plain.out
    dce = opt(str(decode_step_path), "--pdg-dce", "--canonicalize")
    assert dce.rc == 0, dce.err
    assert 'pdg.node "unused"' not in dce.out
    for name in LIVE_NODES:
        assert f'%{name} = pdg.node "{name}"' in dce.out
