"""The RL trainer's parts: the addition task, its tokenizer and reward,
supervised sequences, the generation-time log-probs, and one compiled
iteration of GRPO and of RLOO end to end (sampling, rewards, the update)
whose new weights differ and whose statistics are consistent."""

from __future__ import annotations

import numpy as np
import pytest
from pdg import rl
from pdg.rl.trainer import TrainerState
from pdg.losses import GRPOAlgorithm, RLOOAlgorithm
from pdg.nn import GPTConfig


def test_tokenizer_and_reward():
    task = rl.Addition(50)
    tok = task.tokenizer
    assert tok.decode(tok.encode("17+25=") + [tok.eos, 3]) == "17+25="
    assert task.reward("17+25=", "42") == 1.0
    assert task.reward("17+25=", "43") == 0.0
    assert task.prompt_width == 6 and task.answer_width == 3
    with pytest.raises(ValueError, match="not in the tokenizer"):
        tok.encode("1-2")


def test_supervised_sequences_mask_the_answer():
    task = rl.Addition(20)
    tokens, targets, mask = task.supervised([("3+4=", "7"), ("12+9=", "21")], 9)
    tok = task.tokenizer
    assert tok.decode(tokens[0]) == "3+4=7"
    # targets that count: the answer's digits and EOS, predicted from '=' on
    assert [int(x) for x in targets[0][mask[0] > 0]] == tok.encode("7") + [tok.eos]
    assert [int(x) for x in targets[1][mask[1] > 0]] == tok.encode("21") + [tok.eos]


def small_trainer(workdir, algorithm="grpo", vectorize=False, one_program=False, cache=None):
    """A 1-layer policy on additions below 10, groups of 4, and a reward
    with variety inside each group: shorter completions score more. With
    `one_program`, GRPO as one program (rl.GRPOProgramTrainer)."""
    task = rl.Addition(10)
    tok = task.tokenizer
    config = GPTConfig(
        vocab=tok.vocab, d_model=16, n_layers=1, n_heads=2, max_positions=task.prompt_width + 3
    )
    make = rl.GRPOProgramTrainer if one_program else rl.SampledGRPOTrainer
    return make(
        config,
        GRPOAlgorithm(group=4) if algorithm == "grpo" else RLOOAlgorithm(group=4),
        lambda prompt, completion: 1.0 / (1 + len(completion)),
        tok,
        task.prompt_width,
        task.answer_width,
        lr=1e-2,
        workdir=workdir,
        cache=cache,
        **({} if one_program else {"vectorize": vectorize}),
    )


@pytest.mark.parametrize("algorithm", ["grpo", "rloo"])
def test_one_iteration(tmp_path, algorithm):
    trainer = small_trainer(tmp_path, algorithm)
    weights = trainer.sampler.model.init_weights(seed=0, scale=0.3)
    state = trainer.start(weights)
    prompts = ["1+2=", "3+4="]
    new, stats = trainer.step(state, prompts)
    assert new.step == 1 and stats.step == 0
    assert 0 < stats.reward <= 1 and np.isfinite(stats.loss)
    # a completion ends on EOS or after max_new_tokens (the prompts fill the width)
    assert 1 <= stats.length <= trainer.new
    assert abs(stats.kl) < 1e-6  # the policy still is the reference
    _, after = trainer.step(new, prompts)
    assert after.kl > 0
    changed = [k for k in weights if not np.array_equal(weights[k], new.weights[k])]
    assert changed, "the update changed no weight"
    assert set(new.optimizer) == set(weights)
    # sampling is seeded by the step: the same state draws the same completions
    again, _ = trainer.complete(weights, prompts, seed=0, reference=weights)
    first, _ = trainer.complete(weights, prompts, seed=0, reference=weights)
    assert again == first
    other, _ = trainer.complete(weights, prompts * 8, seed=1, reference=weights)
    assert other != first * 8


def test_progress_bar_lines():
    import io

    log = io.StringIO()  # not a terminal: a line every `every` steps and at the end
    bar = rl.ProgressBar(5, stream=log, width=10, every=2)
    for k in range(5):
        bar.update(reward=0.5 * k, kl=0.01)
    lines = log.getvalue().splitlines()
    assert [line.split("]")[1].split()[0] for line in lines] == ["2/5", "4/5", "5/5"]
    assert lines[-1].startswith("[##########] 5/5  reward 2.000  kl 0.010")


def test_generation_gives_policy_and_reference_log_probs():
    """The sampling program's per-step log-probs of the chosen tokens equal
    the teacher-forced ones of an independent PyTorch model, for the policy
    and the reference alike."""
    torch = pytest.importorskip("torch")
    from frontend.torch_reference import TorchGPT
    from pdg.interpreter import interpret
    from pdg.programs import build_decode

    config = GPTConfig(vocab=13, d_model=8, n_layers=1, n_heads=2, max_positions=8, dtype="f64")
    decode = build_decode(
        config,
        eos=12,
        max_len=8,
        prompt_width=4,
        sample_seed=3,
        temperature=0.7,
        output_logits=False,
        log_probs=True,
        reference=True,
    )
    policy = decode.model.init_weights(seed=1, scale=0.5)
    reference = {
        k.removeprefix("ref."): v
        for k, v in decode.reference.init_weights(seed=2, scale=0.5).items()
    }
    prompts = [[1, 2, 10], [3, 11]]
    out = interpret(
        decode.program.build(),
        decode.inputs(policy, prompts, reference_weights=reference),
        symbols={"B": 2},
    ).outputs
    for k, prompt in enumerate(prompts):
        chosen = np.asarray(out["tokens"][k])
        seq = list(prompt) + [int(x) for x in chosen[len(prompt) - 1 :]]
        for weights, name in ((policy, "logp"), (reference, "ref_logp")):
            logits = TorchGPT(weights, 1, 2).logits(seq[: len(chosen)], "full", 0) / 0.7
            expected = torch.log_softmax(logits, -1)[
                torch.arange(len(chosen)), torch.tensor(chosen)
            ]
            np.testing.assert_allclose(out[name][k], expected.numpy(), rtol=1e-9, atol=1e-12)


def test_vectorized_iteration_matches(tmp_path):
    """SampledGRPOTrainer(vectorize=True) samples the same completions and makes
    the same update as the per-sequence programs (float32, 1e-4)."""
    runs = []
    for vectorize in (False, True):
        trainer = small_trainer(tmp_path / str(vectorize), vectorize=vectorize)
        state = trainer.start(trainer.sampler.model.init_weights(seed=0, scale=0.3))
        completions, _ = trainer.complete(
            state.weights, ["1+2=", "9+4="] * 4, seed=3, reference=state.weights
        )
        new, stats = trainer.step(state, ["1+2=", "9+4="])
        runs.append((completions, new.weights, stats))
    (c0, w0, s0), (c1, w1, s1) = runs
    assert c0 == c1
    assert abs(s0.loss - s1.loss) <= 1e-4 * max(1.0, abs(s0.loss))
    for k in w0:
        # The key bias's gradient is zero (softmax ignores a score added to
        # every key): rounding noise, which Adam's first step scales to +-lr.
        if not k.endswith("attn.k.b"):
            np.testing.assert_allclose(w1[k], w0[k], rtol=1e-4, atol=1e-5)


def test_one_program_trainer_runs_iterations_in_one_call(tmp_path):
    """GRPOProgramTrainer: three iterations in one call of one compiled
    program, then three more resuming from its state (weights, Adam's
    moments, the step)."""
    task = rl.Addition(10)
    trainer = small_trainer(tmp_path, one_program=True)
    weights = trainer.program.policy.init_weights(seed=0, scale=0.3)
    state = trainer.start(weights)
    batches = [["1+2=", "3+4="], ["5+6=", "7+8="], ["9+1=", "2+3="]]
    new, stats = trainer.run(state, batches)
    assert trainer.peak_bytes > 0
    assert new.step == 3 and [s.step for s in stats] == [0, 1, 2]
    assert all(0 < s.reward <= 1 and 1 <= s.length <= task.answer_width for s in stats)
    assert abs(stats[0].kl) < 1e-6 and stats[2].kl > 0  # the policy leaves the reference
    assert any(not np.array_equal(weights[k], new.weights[k]) for k in weights)
    later, more = trainer.run(new, batches)
    assert later.step == 6 and more[0].step == 3 and more[0].kl > 0
    assert 0 <= trainer.evaluate(later.weights, task.problems(np.random.default_rng(0), 8)) <= 1


def test_a_returned_state_is_written_in_place_by_the_next_run(tmp_path):
    """GRPOProgramTrainer donates the weights and Adam's moments that its
    last run returned: the next run writes into them (no copy), with the
    values a run from copies of them gets; the caller's initial weights
    are never written, and a consumed state is refused."""
    trainer = small_trainer(tmp_path, one_program=True)
    weights = trainer.program.policy.init_weights(seed=0, scale=0.3)
    initial = {k: v.copy() for k, v in weights.items()}
    batches = [["1+2=", "3+4="], ["5+6=", "7+8="]]
    new, _ = trainer.run(trainer.start(weights), batches)
    assert all(np.array_equal(weights[k], initial[k]) for k in weights)
    # Each weight and its two moments.
    assert len(trainer.run_grpo.donatable_inputs) == 3 * len(weights)
    # The same state from arrays the caller owns: copied by the run.
    twin = TrainerState(
        {k: v.copy() for k, v in new.weights.items()},
        new.reference,
        {p: {s: v.copy() for s, v in slots.items()} for p, slots in new.optimizer.items()},
        new.step,
    )
    copied, _ = trainer.run(twin, batches)
    assert not twin.consumed and all(
        not np.shares_memory(copied.weights[k], twin.weights[k]) for k in weights
    )
    later, _ = trainer.run(new, batches)
    assert new.consumed
    for k in weights:
        assert np.shares_memory(later.weights[k], new.weights[k])
        np.testing.assert_allclose(later.weights[k], copied.weights[k], rtol=1e-6, atol=1e-7)
        for slot, value in later.optimizer[k].items():
            assert np.shares_memory(value, new.optimizer[k][slot])
            np.testing.assert_allclose(value, copied.optimizer[k][slot], rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="given to run\\(\\) already"):
        trainer.run(new, batches)


def test_a_second_trainer_loads_its_programs_from_the_cache(tmp_path):
    """With a cache directory, the second trainer of the same setup compiles
    nothing and decodes as the first (GRPOProgramTrainer; SampledGRPOTrainer gets
    its three programs from the same build_artifact)."""
    first = small_trainer(tmp_path / "a", one_program=True, cache=tmp_path / "cache")
    second = small_trainer(tmp_path / "b", one_program=True, cache=tmp_path / "cache")
    assert all(s > 0 for s in first.compile_seconds.values())
    assert set(second.compile_seconds.values()) == {0.0}
    assert second.run_grpo.path.parent == tmp_path / "cache"
    problems = rl.Addition(10).problems(np.random.default_rng(1), 8)
    weights = second.program.policy.init_weights(seed=0, scale=0.3)
    assert first.evaluate(weights, problems) == second.evaluate(weights, problems)
