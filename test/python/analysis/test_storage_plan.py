"""Storage planning on the reference decode program (GPT-style, d_model
256, 2 layers, 4 heads, vocab 1024): the KV values get window, exact full
and block stores, and the memory report's working set for a window does not
grow with T and is within 5% of the analytic minimum: the weights, w keys
and values per layer and sequence, and one step of every other value."""

from __future__ import annotations

import pytest
from pdg.analysis.graph import read_graph
from pdg.analysis.memory import evaluate, peak, report_lines, stores_of
from pdg.nn import AttentionPattern, GPTConfig
from pdg.programs import build_decode

D, LAYERS, HEADS, VOCAB, MAX_LEN = 256, 2, 4, 1024, 4096


def plan(pattern: str):
    cfg = GPTConfig(
        vocab=VOCAB,
        d_model=D,
        n_layers=LAYERS,
        n_heads=HEADS,
        max_positions=MAX_LEN,
        pattern=AttentionPattern.parse(pattern),
    )
    decode = build_decode(cfg, eos=0, max_len=MAX_LEN)
    module = decode.program.build()
    graph = read_graph(module.body.operations[0])
    # The graph's ops live in the module: keep it alive with them.
    decode.module = module
    return decode, graph, stores_of(graph)


def kv_stores(stores):
    return {s.value.name: s for s in stores if s.value.name.endswith(("k_cache", "v_cache"))}


def test_01_window_attention_keeps_w_keys_and_values():
    _, _, stores = plan("window:64")
    kv = kv_stores(stores)
    assert len(kv) == 2 * LAYERS
    for s in kv.values():
        assert (s.kind, s.extents) == ("window", ["B", "64"])


def test_02_full_attention_stores_are_sized_by_the_symbols():
    _, _, stores = plan("full")
    for s in kv_stores(stores).values():
        # t ends at EOS: the store grows with the discovered T, never padded
        # to the declared max of 4096.
        assert (s.kind, s.extents) == ("growable", ["B", "T"])


def test_03_block_attention_stores_one_block():
    _, _, stores = plan("block:16")
    for s in kv_stores(stores).values():
        assert (s.kind, s.extents) == ("block", ["B", "16"])


def test_04_other_values_keep_one_step():
    _, _, stores = plan("window:64")
    kinds = {s.value.name: s.kind for s in stores}
    assert kinds["logits"] == "growable"  # an output: every step is returned
    assert kinds["tok"] == "point" and kinds["done"] == "point"


@pytest.mark.parametrize("batch", [1, 4])
def test_05_window_working_set_is_flat_in_t_and_near_the_minimum(batch):
    decode, graph, stores = plan("window:64")
    lines = report_lines(stores)
    working = peak(lines, outputs=False)
    at_256 = evaluate(working, {"B": batch, "T": 256})
    at_4096 = evaluate(working, {"B": batch, "T": 4096})
    assert at_256 == at_4096

    weights = sum(4 * _numel(v.shape) for v in decode.model.parameters().values())
    kv = 2 * LAYERS * batch * 64 * D * 4
    one_step = 0
    for v in graph.values:
        if v.kind == "input" or v.is_output or v.name.endswith(("k_cache", "v_cache")):
            continue
        # A `?` point dim is a slice of at most the window; values over the
        # batch have one point per sequence, others (weights' transposes)
        # one point in all.
        elem = {"i64": 8, "f64": 8, "i1": 1}.get(v.element, 4)
        copies = batch if "b" in v.domain else 1
        one_step += copies * elem * _numel([64 if d is None else d for d in v.shape])
    minimum = weights + kv + one_step + 8 * batch  # + the prompt lengths input
    prompt = 8 * batch * decode.prompt_width
    assert abs(at_4096 - (minimum + prompt)) <= 0.05 * (minimum + prompt), (at_4096, minimum)


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
