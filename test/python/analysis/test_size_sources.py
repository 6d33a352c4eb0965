"""The storage plan sizes each symbolic point dim by what its size comes
from (pdg.analysis.size_sources), not by every slice that reaches the
value: after pdg-vectorize a KV cache holds B rows per step, not
max(B, T) (issue 26: 74 GiB planned at B=8, T=1024 for gpt2-124m)."""

from __future__ import annotations

import pytest
from decode_programs import small_decode
from pdg.analysis.graph import read_graph
from pdg.analysis.memory import peak, report_lines, stores_of
from pdg.ir import make_context, parse_text
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.passes.pipelines import optimize
from pdg.runtime.formula import evaluate


def _planned(text: str, vectorize: bool):
    module = parse_text(text, "decode", make_context())
    pipeline = optimize("b" if vectorize else None)
    assert run_pipeline(module, parse_pipeline(pipeline)) == []
    graph = read_graph(next(op for op in module.body.operations if op.name == "pdg.graph"))
    return module, graph, stores_of(graph)


@pytest.mark.parametrize("pattern", ["full", "window:4"])
def test_01_vectorized_kv_caches_hold_b_rows(pattern):
    decode = small_decode(pattern, vocab=16, d_model=8, max_len=64, eos=5, prompt_width=1)
    text = str(decode.program.build())
    _module, _graph, stores = _planned(text, vectorize=True)
    kv = [s for s in stores if s.value.name.endswith(("k_cache", "v_cache"))]
    assert kv
    for s in kv:
        assert s.point_factors[0] == "B", (s.value.name, s.point_factors)
    # Every batched value: B rows, never a step count.
    for s in stores:
        if s.value.shape and s.value.shape[0] is None:
            assert s.point_factors[0] == "B", (s.value.name, s.point_factors)


def test_02_vectorized_plan_is_no_larger_than_the_plain_one():
    """At B=8, T=1024 the batched program needs what the per-sequence one
    needs (it was T/8 times more: every batched value had max(B, T) rows)."""
    decode = small_decode("full", vocab=16, d_model=8, max_len=1024, eos=5, prompt_width=1)
    text = str(decode.program.build())
    symbols = {"B": 8, "T": 1024}
    keep = []
    sizes = {}
    for vectorize in (False, True):
        module, _graph, stores = _planned(text, vectorize)
        keep.append(module)
        sizes[vectorize] = evaluate(peak(report_lines(stores)), symbols)
    assert sizes[True] <= 1.1 * sizes[False], sizes


# Two symbolic dims from two sources, and one whose size is read from data.
SOURCES = """
!r = !pdg.value<[b], tensor<4xf32>>
!k = !pdg.value<[t], tensor<4xf32>>
!q = !pdg.value<[t], tensor<?x4xf32>>
pdg.graph @sizes {
  pdg.dim @b < launch B max 8
  pdg.dim @t < 100
  %rows = pdg.input "rows" : !r
  %keys = pdg.input "keys" : !k
  %n = pdg.input "n" : !pdg.value<[], tensor<i64>>
  %batch = pdg.node "batch" [t] (%x = %rows[0 : B] : !r) -> tensor<?x4xf32> {
    pdg.yield %x : tensor<?x4xf32>
  }
  %scores = pdg.node "scores" [t] (%q = %batch[t] : !q, %k = %keys[0 : t + 1] : !k)
      -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %nb = tensor.dim %q, %c0 : tensor<?x4xf32>
    %ns = tensor.dim %k, %c0 : tensor<?x4xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty(%nb, %ns) : tensor<?x?xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>,
                                          affine_map<(i, j, d) -> (j, d)>,
                                          affine_map<(i, j, d) -> (i, j)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%q, %k : tensor<?x4xf32>, tensor<?x4xf32>) outs(%f : tensor<?x?xf32>) {
      ^bb0(%a: f32, %c: f32, %acc: f32):
        %p = arith.mulf %a, %c : f32
        %r = arith.addf %p, %acc : f32
        linalg.yield %r : f32
    } -> tensor<?x?xf32>
    pdg.yield %s : tensor<?x?xf32>
  }
  %data = pdg.node "from_data" [t] (%s = %scores[t] : !pdg.value<[t], tensor<?x?xf32>>,
                                    %m = %n[] : !pdg.value<[], tensor<i64>>)
      -> tensor<?xf32> {
    %i = tensor.extract %m[] : tensor<i64>
    %c = arith.index_cast %i : i64 to index
    %z = arith.constant 0.0 : f32
    %e = tensor.empty(%c) : tensor<?xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    pdg.yield %f : tensor<?xf32>
  }
  pdg.output "scores" %scores : !pdg.value<[t], tensor<?x?xf32>>
  pdg.output "data" %data : !pdg.value<[t], tensor<?xf32>>
}
"""


def test_03_each_dim_is_bounded_by_its_own_source():
    module = parse_text(SOURCES, "sizes", make_context())
    graph = read_graph(next(op for op in module.body.operations if op.name == "pdg.graph"))
    factors = {s.value.name: s.point_factors for s in stores_of(graph)}
    assert factors["batch"] == ["B", "4"]
    # rows from the batch, columns from the slice of keys (at most 100)
    assert factors["scores"] == ["B", "100"]
    # a size read from data: every slice that reaches the value bounds it
    assert factors["from_data"] == ["max(B, 100)"]
