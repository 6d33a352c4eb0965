"""Off-policy GRPO in one program: build_grpo(staleness=k) samples
iteration i with the weights of iteration max(i - k, 0) and corrects the
loss with the clipped ratio to that behaviour policy.

Checked against an independent float64 PyTorch implementation of the same
algorithm that samples on its own (the program's counter-based Gumbel
noise, drawn at (prompt, iteration, position, row)), scores, computes the
loss and steps SGD: every iteration's rewards and loss, and the final
weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pdg.frontend as pf  # noqa: E402
from frontend.torch_reference import MASK64, TorchGPT, splitmix64  # noqa: E402
from pdg import losses, optim, rl  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.nn import GPTConfig  # noqa: E402
from pdg.programs import build_grpo  # noqa: E402

TASK = rl.Addition(10)
TOK = TASK.tokenizer
WIDTH = TASK.prompt_width
NEW = 3
GRPO = losses.GRPOAlgorithm(group=4, clip=0.2, beta=0.04)
LR = 0.5  # SGD: large enough that the iterations' weights differ visibly
SEED = 5


def parity_reward(prompt_ids, completion_ids) -> float:
    return float(completion_ids[0] % 2)


def build(staleness: int, dtype: str = "f64", **options):
    config = GPTConfig(TOK.vocab, 8, 1, 2, None, WIDTH + NEW, dtype=dtype)
    return build_grpo(
        config,
        GRPO,
        parity_reward,
        eos=TOK.eos,
        prompt_width=WIDTH,
        max_new_tokens=NEW,
        optimizer=options.pop("optimizer", optim.SGD(LR)),
        clip_norm=None,
        staleness=staleness,
        **options,
    )


def noise(coords, vocab: int) -> np.ndarray:
    """The program's sampling noise at a point: splitmix64 of the seed and
    each coordinate in turn, then of each vocabulary index."""
    h = SEED & MASK64
    for c in coords:
        h = splitmix64(h ^ c)
    out = np.empty(vocab)
    for v in range(vocab):
        u = ((splitmix64(h ^ v) >> 11) + 0.5) * 2.0**-53
        out[v] = -math.log(-math.log(u))
    return out


def sample(model: TorchGPT, prompt: list[int], coords) -> list[int]:
    """One completion by the model (Gumbel-max at temperature 1): the
    tokens chosen from the prompt's last position on, to EOS or NEW."""
    seq, chosen = list(prompt), []
    while True:
        pos = len(seq) - 1
        logits = model.logits(seq, "full", 0)[pos].detach().numpy()
        token = int(np.argmax(logits + noise((*coords(pos),), len(logits))))
        chosen.append(token)
        if token == TOK.eos or len(chosen) == NEW:
            return chosen
        seq.append(token)


def off_policy_grpo(initial, reference, batches, staleness: int):
    """The algorithm in PyTorch: per iteration, sample each prompt's group
    with the weights `staleness` iterations back, score, normalize in the
    group, then the mean over completions of the per-token mean of
    -min(r A, clip(r) A) + beta k3, r = exp(logp - logp_behaviour), and an
    SGD step. Returns the per-iteration (completions, rewards, loss) and
    the final weights."""
    history = [{k: torch.tensor(v) for k, v in initial.items()}]
    ref = TorchGPT({k: torch.tensor(v) for k, v in reference.items()}, 1, 2)
    log = []
    for it, batch in enumerate(batches):
        behaviour = TorchGPT(history[max(it - staleness, 0)], 1, 2)
        model = TorchGPT(history[-1], 1, 2)
        for w in model.w.values():
            w.requires_grad_(True)
        completions = [
            [
                sample(behaviour, prompt, lambda pos, p=p, g=g, it=it: (p, it, pos, g))
                for g in range(4)
            ]
            for p, prompt in enumerate(batch)
        ]
        rewards = torch.tensor(
            [
                [parity_reward(prompt, c) for c in row]
                for prompt, row in zip(batch, completions, strict=True)
            ]
        )
        adv = (rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + GRPO.eps)
        per_completion = []
        for p, prompt in enumerate(batch):
            for g, chosen in enumerate(completions[p]):
                fed = prompt + chosen[:-1]
                target = torch.tensor(chosen)[:, None]
                first = len(prompt) - 1
                logp = torch.log_softmax(model.logits(fed, "full", 0)[first:], -1).gather(
                    1, target
                )[:, 0]
                with torch.no_grad():
                    old = torch.log_softmax(behaviour.logits(fed, "full", 0)[first:], -1)
                    old = old.gather(1, target)[:, 0]
                    ref_logp = torch.log_softmax(ref.logits(fed, "full", 0)[first:], -1)
                    ref_logp = ref_logp.gather(1, target)[:, 0]
                ratio = torch.exp(logp - old)
                clipped = torch.clamp(ratio, 1 - GRPO.clip, 1 + GRPO.clip)
                a = adv[p, g]
                delta = ref_logp - logp
                kl = torch.exp(delta) - delta - 1
                per_token = -torch.min(ratio * a, clipped * a) + GRPO.beta * kl
                per_completion.append(per_token.mean())
        loss = torch.stack(per_completion).mean()
        loss.backward()
        with torch.no_grad():
            history.append({k: w - LR * w.grad for k, w in model.w.items()})
        log.append((completions, rewards.numpy(), float(loss.detach())))
    return log, {k: v.numpy() for k, v in history[-1].items()}


@pytest.mark.parametrize("staleness", [1, 2])
def test_stale_sampling_matches_off_policy_grpo_in_pytorch(staleness):
    program = build(staleness)
    weights = program.policy.init_weights(seed=1, scale=0.5)
    ref = {k.removeprefix("ref."): v for k, v in program.reference.init_weights(seed=2).items()}
    batches = [
        [TOK.encode(p) for p, _ in TASK.problems(np.random.default_rng(it), 2)] for it in range(4)
    ]
    inputs = program.inputs(weights, ref, batches, seed=SEED)
    out = interpret(
        program.program.build(), inputs, symbols=program.symbols(inputs), udfs=program.udfs
    ).outputs
    log, final = off_policy_grpo(weights, ref, batches, staleness)
    rewards = np.asarray(out["reward"])  # [p, i, G]
    for it, (_, want_rewards, want_loss) in enumerate(log):
        np.testing.assert_array_equal(rewards[:, it], want_rewards, err_msg=f"iteration {it}")
        # Float64 throughout; the program's gradients and these agree to
        # ~1e-8 (as in test_grpo_program), which an SGD step of LR carries on.
        assert abs(float(np.ravel(out["loss"])[it]) - want_loss) <= 1e-7 * (1 + abs(want_loss)), it
    got, _ = program.training.final_state(out)
    for path, value in final.items():
        np.testing.assert_allclose(got[path], value, rtol=0, atol=1e-6, err_msg=path)
    # The behaviour policy differs from the current one after the first
    # `staleness` iterations: some ratio is off 1, so the correction acts.
    synchronous, _ = off_policy_grpo(weights, ref, batches, 0)
    assert any(abs(a[2] - b[2]) > 1e-6 for a, b in zip(log, synchronous, strict=True))


def test_staleness_is_refused_where_it_means_nothing():
    with pytest.raises(pf.ProgramError, match="needs an optimizer"):
        build(1, optimizer=None)
    with pytest.raises(pf.ProgramError, match="whole number of iterations"):
        build(-1)
    with pytest.raises(pf.ProgramError, match="GRPO's clipped loss"):
        build_grpo(
            GPTConfig(TOK.vocab, 8, 1, 2, None, WIDTH + NEW),
            losses.RLOOAlgorithm(group=4),
            parity_reward,
            eos=TOK.eos,
            prompt_width=WIDTH,
            max_new_tokens=NEW,
            optimizer=optim.SGD(1.0),
            staleness=1,
        )
