"""The isl proof that one-step off-policy GRPO may run the generation of
iteration i + 1 beside the update of iteration i (analysis/overlap.py):
with staleness >= 1 no read crosses the two parts of a stage; with
staleness 0 the sampling reads the weights the update of the previous
iteration computes in the same stage, and the proof says so."""

from __future__ import annotations

import re

import pdg.frontend as pf
import pytest
from pdg import losses, optim, rl
from pdg.analysis.overlap import plan_overlap
from pdg.nn import GPTConfig
from pdg.programs import build_grpo

TASK = rl.Addition(10)
TOK = TASK.tokenizer
GRPO = losses.GRPOAlgorithm(group=2, clip=0.2, beta=0.04)


def plan_of(staleness: int, **options):
    config = GPTConfig(TOK.vocab, 8, 1, 2, None, TASK.prompt_width + 3)
    built = build_grpo(
        config,
        GRPO,
        lambda prompt, completion: 1.0,
        eos=TOK.eos,
        prompt_width=TASK.prompt_width,
        max_new_tokens=3,
        optimizer=optim.Adam(1e-3),
        staleness=staleness,
        **options,
    )
    return built.overlap_plan()


@pytest.mark.parametrize("staleness", [1, 2])
@pytest.mark.parametrize("share_prefill", [True, False])
def test_stale_sampling_overlaps_the_update(staleness, share_prefill):
    plan = plan_of(staleness, share_prefill=share_prefill)
    assert plan.legal, [p.message for p in plan.problems]
    generation = {v.name for v in plan.generation}
    update = {v.name for v in plan.update}
    # The behaviour policy samples: its logits and lagged weights generate;
    # the current policy's scoring, the reward, the loss and the step update.
    assert {"next", "tok", "behaviour_logits", "wte_w_at_behind"} <= generation
    assert {"logits", "logp", "reward", "loss"} <= update
    # The weights and Adam's moments of iteration i copy the update of i - 1:
    # they finish it, in the stage before.
    for carried in ("wte_w_at", "wte_w_exp_avg", "wte_w_exp_avg_sq"):
        assert carried in update and plan.shift[carried] == 1, carried
    assert plan.shift["loss"] == 0 and plan.shift["next"] == 1


def test_a_point_per_completion_overlaps_too():
    """The completion layout (a dim g, no shared prefill): the same parts."""
    assert plan_of(1, layout="completion", share_prefill=False).legal
    assert not plan_of(0, layout="completion", share_prefill=False).legal


def test_synchronous_sampling_is_refused():
    """staleness=0: sampling at i + 1 reads w[i + 1], the update of i."""
    plan = plan_of(0)
    assert not plan.legal
    assert "wte_w_at" in {v.name for v in plan.generation}
    assert all("cannot overlap along 'i'" in p.message for p in plan.problems)
    # One problem per weight: its value at i + 1 is the update of i.
    weights = [p.message for p in plan.problems if "'wte_w_at', of the generation" in p.message]
    assert len(weights) == 1, [p.message for p in plan.problems]
    assert "of iteration i + 1, reads" in weights[0]
    assert "which the update of iteration i computes in the same stage" in weights[0]
    # The example: the weights of some iteration read the update one before.
    at = re.search(r"wte_w_at\[(\d+)\] -> \w+\[(\d+)\]", weights[0])
    assert at and int(at[1]) == int(at[2]) + 1, weights[0]
    assert "staleness >= 1" in weights[0]


def test_unknown_roots_are_refused():
    plan = plan_of(1)
    with pytest.raises(ValueError, match="not computed over 'i'"):
        plan_overlap(plan.graph, "i", ["nothing"])


def test_a_program_without_iterations_has_no_plan():
    config = GPTConfig(TOK.vocab, 8, 1, 2, None, TASK.prompt_width + 3)
    built = build_grpo(
        config, GRPO, lambda p, c: 1.0, eos=TOK.eos, prompt_width=TASK.prompt_width,
        max_new_tokens=3,
    )  # fmt: skip
    with pytest.raises(pf.ProgramError, match="no iterations to overlap"):
        built.overlap_plan()
