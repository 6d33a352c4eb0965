"""pdg's training and RL programs on loaded Hugging Face models (here
through the interpreter), against transformers with torch autograd:

- build_train_lm: one SGD step of a Qwen3 model (q/k norm, GQA, RoPE,
  SwiGLU, untied head): the loss and every updated weight;
- build_rl_step: the GRPO loss and the gradient of every weight of a
  Llama model (Llama 3.1 RoPE scaling) with a reference model;
- build_grpo: sampling ends each completion at the first of several EOS
  ids, and the reward sees the prompt's and the completion's ids.
"""

from __future__ import annotations

import numpy as np
import torch
from pdg import models, optim, programs
from pdg.interpreter import interpret
from pdg.losses import GRPOAlgorithm
from pdg.models.layout import to_hf

from models import checkpoints


def _hf_grads(model) -> dict[str, np.ndarray]:
    return {name: p.grad.numpy() for name, p in model.named_parameters()}


def test_01_train_lm_step_of_qwen3_matches_torch(hf_checkpoints):
    ck = hf_checkpoints["qwen3"]
    model = models.load(ck.directory)
    batch, length, lr = 2, 8, 0.1
    train = programs.build_train_lm(model.config, batch, length, optim.SGD(lr))
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, model.config.vocab, (1, batch, length))
    targets = rng.integers(0, model.config.vocab, (1, batch, length))
    out = interpret(
        train.program.build(), train.inputs(model.weights, tokens, targets), symbols={"I": 1}
    ).outputs
    weights, _ = train.training.final_state(out)

    reference = checkpoints.reference(ck.directory)
    logits = reference(torch.tensor(tokens[0])).logits
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), torch.tensor(targets[0]).reshape(-1)
    )
    loss.backward()
    assert abs(float(np.asarray(out["loss"]).ravel()[0]) - float(loss.detach())) < 1e-5
    updated = to_hf(weights, model.config, "llama")
    for name, p in reference.named_parameters():
        want = (p - lr * p.grad).detach().numpy()
        np.testing.assert_allclose(updated[name], want, atol=1e-6, err_msg=name)


def test_02_grpo_step_gradients_of_llama_match_torch(hf_checkpoints):
    ck = hf_checkpoints["llama"]
    model = models.load(ck.directory)
    grpo = GRPOAlgorithm(group=2, clip=0.2, beta=0.04)
    length = 8
    step = programs.build_rl_step(model.config, length, grpo)
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, model.config.vocab, (1, 2, length))
    targets = np.roll(tokens, -1, axis=2)
    mask = np.zeros((1, 2, length), np.float32)
    mask[0, 0, 3:7], mask[0, 1, 3:5] = 1.0, 1.0
    old_logp = rng.uniform(-7.0, -5.0, (1, 2, length)).astype(np.float32)
    rewards = np.array([[0.0, 1.0]], np.float32)
    reference_weights = {k: (v * 0.9).astype(np.float32) for k, v in model.weights.items()}
    inputs = step.policy.inputs_from(model.weights)
    inputs.update(step.reference.inputs_from({f"ref.{k}": v for k, v in reference_weights.items()}))
    inputs.update(tokens=tokens, targets=targets, mask=mask, old_logp=old_logp, rewards=rewards)
    out = interpret(step.program.build(), inputs, symbols={"P": 1}).outputs

    policy = checkpoints.reference(ck.directory)
    ref = checkpoints.reference(ck.directory)
    with torch.no_grad():
        for p in ref.parameters():
            p.mul_(0.9)

    def logp(m):
        lp = torch.log_softmax(m(torch.tensor(tokens[0])).logits, -1)
        return lp.gather(2, torch.tensor(targets[0])[..., None])[..., 0]

    lp = logp(policy)
    with torch.no_grad():
        ref_lp = logp(ref)
    r = torch.tensor(rewards[0])
    advantage = ((r - r.mean()) / (r.std() + grpo.eps))[:, None]
    ratio = torch.exp(lp - torch.tensor(old_logp[0]))
    clipped = torch.clamp(ratio, 1 - grpo.clip, 1 + grpo.clip)
    per_token = -torch.min(ratio * advantage, clipped * advantage)
    per_token = per_token + grpo.beta * (torch.exp(ref_lp - lp) - (ref_lp - lp) - 1)
    m = torch.tensor(mask[0])
    loss = ((per_token * m).sum(-1) / m.sum(-1)).mean()
    loss.backward()
    assert abs(float(out["loss"]) - float(loss.detach())) < 1e-5
    grads = {path: out["g_" + path.replace(".", "_")] for path in model.weights}
    ours = to_hf(grads, model.config, "llama")
    for name, g in _hf_grads(policy).items():
        scale = max(float(np.abs(g).max()), 1e-3)
        assert float(np.abs(ours[name] - g).max()) / scale < 1e-4, name


def test_03_grpo_program_stops_at_any_eos(hf_checkpoints):
    model = models.load(hf_checkpoints["gpt2"].directory)
    prompt = model.tokenizer.encode("The model")
    seen = []

    def reward(prompt_ids, completion_ids) -> float:
        seen.append((list(map(int, prompt_ids)), list(map(int, completion_ids))))
        return float(len(completion_ids))

    def run(eos):
        grpo = programs.build_grpo(
            model.config,
            GRPOAlgorithm(group=2),
            reward,
            eos=eos,
            prompt_width=len(prompt),
            max_new_tokens=4,
        )
        inputs = grpo.inputs(model.weights, model.weights, [[prompt]], seed=5)
        out = interpret(
            grpo.program.build(), inputs, symbols=grpo.symbols(inputs), udfs=grpo.udfs
        ).outputs
        return grpo.completions(out["tokens"], [len(prompt)])[0], out

    free, _ = run(eos=None)  # four tokens each
    assert [len(c) for c in free] == [4, 4] and free[0].tolist() != free[1].tolist()
    # Each completion's second token as an EOS id: both stop there (or at
    # the other's id, if it comes first).
    stops = (int(free[0][1]), int(free[1][1]))
    seen.clear()
    ended, out = run(eos=stops)
    for full, cut in zip(free, ended, strict=True):
        end = min(list(full).index(s) for s in stops if s in full)
        assert cut.tolist() == full[: end + 1].tolist()
    assert [c for _, c in seen] == [c.tolist() for c in ended]
    assert all(p == prompt for p, _ in seen)
    np.testing.assert_array_equal(np.asarray(out["length"])[0], [len(c) for c in ended])
