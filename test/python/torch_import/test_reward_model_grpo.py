"""A PyTorch reward model inside the compiled GRPO program
(build_grpo(reward_model=...)): each completion's in-program reward is the
module's output on that completion alone (1e-5), in both layouts and with
prompts of different lengths in one microbatch; a GRPO step with it gives
the same result interpreted and compiled; mistakes are refused."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import pdg.frontend as pf  # noqa: E402
from pdg import losses, optim, rl  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.nn import GPTConfig  # noqa: E402
from pdg.programs import RewardModel, build_grpo  # noqa: E402

from .conftest import assert_close, run_both  # noqa: E402
from .reward_models import tiny_reward_model, torch_scores  # noqa: E402

TASK = rl.Addition(10)
TOK = TASK.tokenizer
WIDTH = TASK.prompt_width
NEW = 3
GRPO = losses.GRPOAlgorithm(group=4, clip=0.2, beta=0.04)


def build(model, cache, layout="group", microbatch=1, optimizer=None, dtype="f32"):
    config = GPTConfig(TOK.vocab, 8, 1, 2, None, WIDTH + NEW, dtype=dtype)
    return build_grpo(
        config,
        GRPO,
        None,
        reward_model=RewardModel(model, cache_dir=cache),
        eos=TOK.eos,
        prompt_width=WIDTH,
        max_new_tokens=NEW,
        optimizer=optimizer,
        layout=layout,
        microbatch=microbatch,
    )


def prompts(count: int, seed: int = 0, iterations: int = 1):
    """Prompts of different lengths (2 to WIDTH tokens)."""
    rng = np.random.default_rng(seed)
    out = []
    for it in range(iterations):
        batch = [TOK.encode(p) for p, _ in TASK.problems(rng, count)]
        out.append([ids[: 2 + (k * 5 + it) % (WIDTH - 1)] for k, ids in enumerate(batch)])
    return out


def model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return tiny_reward_model(TOK.vocab).eval()


@pytest.mark.parametrize("layout, microbatch", [("group", 2), ("completion", 1)])
def test_in_program_reward_is_the_modules_output(import_cache, tmp_path, layout, microbatch):
    rm = model()
    program = build(rm, import_cache, layout, microbatch)
    assert not program.udfs  # no host callback left
    weights = program.policy.init_weights(seed=1, scale=0.5)
    ref = {k.removeprefix("ref."): v for k, v in program.reference.init_weights(seed=2).items()}
    batch = prompts(4)[0]
    inputs = program.inputs(weights, ref, [batch], seed=3)
    interpreted, compiled = run_both(program.program, inputs, program.symbols(inputs), tmp_path)
    lengths = [len(ids) for ids in batch]
    for outputs in (interpreted, compiled):
        done = program.completions(outputs["tokens"], lengths)
        got = program.by_prompt(outputs["reward"], lengths)
        want = [torch_scores(rm, group) for group in done]
        assert_close(got, np.asarray(want, np.float32))
        assert {len(c) for group in done for c in group} != {NEW}  # some ended on EOS
    assert_close(compiled["loss"], interpreted["loss"])
    # New weights, same program: the rewards follow them.
    other = model(seed=7)
    moved = program.inputs(weights, ref, [batch], seed=3, reward_weights=other.state_dict())
    again = interpret(program.program.build(), moved, symbols=program.symbols(moved)).outputs
    done = program.completions(again["tokens"], lengths)
    want = [torch_scores(other, group) for group in done]
    assert_close(program.by_prompt(again["reward"], lengths), np.asarray(want, np.float32))


def test_training_steps_compiled_match_interpreted(import_cache, tmp_path):
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    program = build(model(), import_cache, "group", 2, optimizer=optim.Adam(1e-2))
    weights = program.policy.init_weights(seed=1, scale=0.5)
    inputs = program.inputs(weights, weights, prompts(4, seed=4, iterations=2), seed=9)
    symbols = program.symbols(inputs)
    want = interpret(program.program.build(), inputs, symbols=symbols).outputs
    compile_module(program.program.build(), tmp_path / "grpo.pdgx", gpu=False)
    got = load(tmp_path / "grpo.pdgx").run(inputs, symbols).outputs
    np.testing.assert_array_equal(got["length"], want["length"])
    assert_close(got["reward"], want["reward"])
    assert np.ptp(np.asarray(want["reward"])) > 0  # the rewards differ, so the loss moves
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-3, atol=1e-5)
    final, _ = program.training.final_state(got)
    expected, _ = program.training.final_state(want)
    for path in final:
        if path.endswith("attn.k.b"):  # exactly-zero gradient: Adam's sign of noise
            continue
        np.testing.assert_allclose(final[path], expected[path], atol=1e-3, err_msg=path)


class TwoScores(torch.nn.Module):
    def forward(self, ids, lengths):
        return torch.stack([lengths, lengths], 1).to(torch.float32)


def test_mistakes_are_refused(import_cache):
    rm = model()
    with pytest.raises(pf.ProgramError, match="either a reward callback or a reward_model"):
        build_grpo(
            GPTConfig(TOK.vocab, 8, 1, 2, None, WIDTH + NEW),
            GRPO,
            lambda p, c: 0.0,
            reward_model=rm,
            eos=TOK.eos,
            prompt_width=WIDTH,
            max_new_tokens=NEW,
        )
    with pytest.raises(pf.ProgramError, match="must be a torch.nn.Module"):
        build(lambda ids, lengths: ids, import_cache)
    with pytest.raises(pf.ProgramError, match="one floating-point score each"):
        build(TwoScores(), import_cache)
    program = build(rm, import_cache)
    weights = program.policy.init_weights(seed=1)
    ref = {k.removeprefix("ref."): v for k, v in program.reference.init_weights(seed=2).items()}
    state = rm.state_dict()
    del state["head.bias"]
    with pytest.raises(pf.ProgramError, match="weight 'head.bias' is missing"):
        program.inputs(weights, ref, prompts(1), seed=0, reward_weights=state)
