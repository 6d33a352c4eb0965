"""pf.sample(..., at=): the sampling noise drawn at given coordinates
instead of the point's own, so a loop that numbers its steps from an
offset (a decode after a shared prefill) draws what one numbered by
position draws."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pytest
from pdg.interpreter import interpret

VOCAB, STEPS = 16, 6


def draws(offset: int | None) -> np.ndarray:
    """Samples over t < STEPS from fixed logits; with `offset`, the noise
    of step t is drawn at t + offset."""
    prog = pf.Program("draws")
    t = prog.dim("t", STEPS)
    logits = prog.input("logits", (VOCAB,), "f32")
    at = None
    if offset is not None:
        at = {"t": prog.coordinate(t) + offset}
    scores = logits + prog.constant(0.0, (VOCAB,), "f32") * prog.coordinate(t).astype("f32")
    prog.output("x", pf.sample(scores, seed=3, at=at))
    flat = np.zeros(VOCAB, np.float32)  # every draw decided by the noise alone
    return interpret(prog.build(), {"logits": flat}).outputs["x"]


def test_at_draws_the_noise_of_the_given_coordinate():
    plain = draws(None)
    assert len(set(plain.tolist())) > 2
    np.testing.assert_array_equal(draws(0), plain)
    shifted = draws(2)
    np.testing.assert_array_equal(shifted[: STEPS - 2], plain[2:])
    assert not np.array_equal(shifted, plain)


def test_at_needs_a_dim_of_the_point_and_an_i64_scalar():
    prog = pf.Program("bad")
    t = prog.dim("t", 4)
    u = prog.dim("u", 4)
    logits = prog.input("logits", (VOCAB,), "f32", domain=[t])
    with pytest.raises(pf.ProgramError, match="'u' is not a dim of the logits' domain"):
        pf.sample(logits, at={"u": prog.coordinate(u)})
    with pytest.raises(pf.ProgramError, match="must be an i64 scalar"):
        pf.sample(logits, at={"t": prog.coordinate(t).astype("f32")})
