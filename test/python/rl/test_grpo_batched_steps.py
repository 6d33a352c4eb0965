"""The GRPO one program's backward with its weight gradients batched over
the decode steps (pdg-contract-reductions' over-steps, batch_steps=True;
off by default since it measured slower or no faster at every size): a
weight's gradient, the sum over the steps t and the rows of x_t^T dy_t, is
one product after the replayed loop over x and dy stored along t, not a
small product per replayed step summed after it (batch_steps=False).

Compiled float32, both ways, against each other and the interpreter (the
loss and every gradient), and read off the storage plan: the per-step
products over t are gone and the gradients flowing back are stored over
the steps that ran (T points of rows x d), which is what batching costs."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")  # test_grpo_program's helpers import it

from pdg.analysis.graph import read_graph  # noqa: E402
from pdg.analysis.storage import plan_storage  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.passes.pipeline import parse_pipeline, run_pipeline  # noqa: E402
from pdg.passes.pipelines import optimize  # noqa: E402

from .test_grpo_program import build, prompts  # noqa: E402

# Two prompts of 4 rows per point (8 rows) at d_model 8: every weight's
# inputs per step (8 x 8 and 8 x 8, or 8 x 32) hold more than its gradient
# (8 x 8, 8 x 32), so only over-steps contracts them.
MICROBATCH = 2


def planned(batch_steps: bool):
    """The optimized graph of the GRPO program (no optimizer: its outputs
    are the gradients) and its storage plan."""
    module = build("f32", microbatch=MICROBATCH).program.build()
    assert not run_pipeline(module, parse_pipeline(optimize(batch_steps=batch_steps)))
    graph = read_graph(
        next(op.operation for op in module.body.operations if op.name == "pdg.graph")
    )
    return graph, plan_storage(graph)


def weight_shapes(graph) -> set:
    return {v.shape for v in graph.values if v.kind == "input" and len(v.shape) == 2}


def test_batched_gradients_equal_the_unbatched_and_the_interpreter(tmp_path):
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    program = build("f32", microbatch=MICROBATCH)
    weights = program.policy.init_weights(seed=1, scale=0.5)
    batch = prompts(1, 2 * MICROBATCH, seed=4, cut=True)
    inputs = program.inputs(weights, weights, batch, seed=9)
    symbols = program.symbols(inputs)
    runs = {}
    for batched in (True, False):
        path = tmp_path / f"grpo-{batched}.pdgx"
        compile_module(program.program.build(), path, gpu=False, batch_steps=batched)
        runs[batched] = load(path).run(inputs, symbols, udfs=program.udfs).outputs
    want = interpret(program.program.build(), inputs, symbols=symbols, udfs=program.udfs).outputs
    grads = sorted(k for k in want if k.startswith("g_"))
    assert len(grads) > 10
    np.testing.assert_array_equal(runs[True]["reward"], runs[False]["reward"])
    np.testing.assert_array_equal(runs[True]["length"], want["length"])
    assert any(np.abs(want[k]).max() > 1e-3 for k in grads)  # gradients that are not all 0
    for key in ["loss", "kl", *grads]:
        for other in (runs[False], want):
            np.testing.assert_allclose(
                runs[True][key], other[key], rtol=1e-5, atol=1e-5, err_msg=key
            )


def test_the_plan_stores_the_gradients_over_t_instead_of_per_step_products():
    unbatched, unbatched_plan = planned(batch_steps=False)
    batched, batched_plan = planned(batch_steps=True)
    shapes = weight_shapes(batched)

    def per_step_products(graph):
        """Values over t of weight-shaped points that a node after the loop
        only sums over the steps: products summed after the replay."""
        return [
            r.producer.name
            for r in graph.reads
            if "t" in r.producer.domain
            and "t" not in r.consumer.domain
            and r.producer.shape in shapes
            and r.consumer.shape == r.producer.shape
            and len(r.consumer.reads) == 1
        ]

    assert per_step_products(unbatched)
    assert not per_step_products(batched)
    # The contracted gradients read their inputs over every step that ran;
    # each input keeps T of its points (rows x d each).
    kinds = {s.value.name: s for s in batched_plan}
    contracted = [
        r
        for r in batched.reads
        if "t" not in r.consumer.domain
        and "t" in r.producer.domain
        and r.consumer.shape in shapes
        and r.entries[r.producer.domain.index("t")] == ("slice", ["0"], ["T"])
    ]
    assert contracted
    for read in contracted:
        store = kinds[read.producer.name]
        extents = dict(zip(read.producer.domain, store.extents, strict=True))
        assert store.kind in ("full", "growable") and extents["t"] == "T", (
            read.producer.name,
            store,
        )
    # Some of them (the gradients flowing back, dy) were kept a step at a
    # time before: the new stores batching costs.
    before = {s.value.name: s.kind for s in unbatched_plan}
    new = {r.producer.name for r in contracted if before.get(r.producer.name) == "point"}
    assert new, sorted({r.producer.name: before.get(r.producer.name) for r in contracted}.items())
