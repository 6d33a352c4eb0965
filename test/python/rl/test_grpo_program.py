"""GRPO as one program (programs.build_grpo): generation, rewards, loss,
gradients and Adam over iterations in one graph.

Both layouts of a prompt's completions (one point per completion, or the
groups of one or more prompts as the rows of one point: an aligned
microbatch, with prompts of different lengths in one). One iteration in
float64 through the interpreter against an independent PyTorch GRPO on the
completions it sampled (loss and every gradient to 1e-6); several
iterations compiled in float32 against the interpreter; and what the
compiler must exploit, read off the graph and its storage plan: one policy
forward whose logits both sample and are differentiated, the reference
beside it step by step, stores along t that hold the steps that ran, and
(group layout) every step a contiguous block of its microbatch's rows."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pdg.frontend as pf  # noqa: E402
from autodiff.decoder import worst_error  # noqa: E402
from frontend.torch_reference import TorchGPT  # noqa: E402
from pdg import losses, optim, rl  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.nn import GPTConfig  # noqa: E402
from pdg.programs import build_grpo  # noqa: E402

TASK = rl.Addition(10)
TOK = TASK.tokenizer
WIDTH = TASK.prompt_width  # "9+9=": 4
NEW = 3
GRPO = losses.GRPOAlgorithm(group=4, clip=0.2, beta=0.04)


def parity_reward(prompt_ids, completion_ids) -> float:
    """A reward that varies at random weights: the first token's parity."""
    assert len(prompt_ids) >= 1 and len(completion_ids) >= 1
    return float(completion_ids[0] % 2)


LAYOUTS = pytest.mark.parametrize("layout", ["group", "completion"])
# (layout, prompts per microbatch): a group per point, groups of two
# prompts per point (mixed lengths in one), a completion per point.
ARRANGEMENTS = pytest.mark.parametrize(
    "layout, microbatch", [("group", 1), ("group", 2), ("completion", 1)]
)


def build(dtype: str, optimizer=None, layout="group", d_model=8, microbatch=1, **options):
    config = GPTConfig(TOK.vocab, d_model, 1, 2, None, WIDTH + NEW, dtype=dtype)
    return build_grpo(
        config,
        options.pop("algorithm", GRPO),
        options.pop("reward", parity_reward),
        eos=TOK.eos,
        prompt_width=WIDTH,
        max_new_tokens=NEW,
        optimizer=optimizer,
        clip_norm=None,
        layout=layout,
        microbatch=microbatch,
        **options,
    )


def prompts(iterations: int, count: int, seed: int = 0, cut: bool = False):
    """`cut`: prompts of different lengths (each keeps 2 to WIDTH of its
    tokens), as every prompt of the task has the same length."""
    rng = np.random.default_rng(seed)
    batches = [[TOK.encode(p) for p, _ in TASK.problems(rng, count)] for _ in range(iterations)]
    if cut:
        batches = [
            [ids[: 2 + (k * 5 + it) % (WIDTH - 1)] for k, ids in enumerate(batch)]
            for it, batch in enumerate(batches)
        ]
    return batches


def torch_grpo(
    weights, ref_weights, batch, tokens, rewards, loss_type="grpo", temperature=1.0, scale="group"
):
    """GRPO's loss and gradients on the sampled completions, from its
    definition: teacher-forced log-probs (of the logits over the sampling
    temperature), ratio to the sampling policy (the policy itself: 1),
    clipped surrogate, k3 KL, per-sequence mean over the completion tokens,
    mean over the batch (loss_type "grpo"; TRL's "dapo": the mean over all
    completion tokens; "dr_grpo": token sums over max_new_tokens, then the
    mean). `scale`: TRL's scale_rewards, the advantages' divisor: the
    group's reward std, the batch's, or none. Also TRL's logged entropy:
    the sampling distribution's entropy at each completion token, the mean
    over the batch's tokens."""
    model, ref = TorchGPT(weights, 1, 2), TorchGPT(ref_weights, 1, 2)
    for w in model.w.values():
        w.requires_grad_(True)
    r = torch.tensor(rewards)
    adv = r - r.mean(1, keepdim=True)
    if scale == "group":
        adv = adv / (r.std(1, keepdim=True) + GRPO.eps)
    elif scale == "batch":
        adv = adv / (r.std() + GRPO.eps)
    losses, sums, counts, entropies = [], [], [], []
    for p, prompt in enumerate(batch):
        for g in range(GRPO.group):
            chosen = [int(x) for x in tokens[p][g]]
            fed = (prompt + chosen[len(prompt) - 1 :])[: len(chosen)]
            target = torch.tensor(chosen)[:, None]
            scores = model.logits(fed, "full", 0) / temperature
            logp = torch.log_softmax(scores, -1).gather(1, target)[:, 0]
            with torch.no_grad():
                probs = torch.distributions.Categorical(logits=scores)
                entropies.append(probs.entropy())
                ref_scores = ref.logits(fed, "full", 0) / temperature
                ref_logp = torch.log_softmax(ref_scores, -1).gather(1, target)[:, 0]
            ratio = torch.exp(logp - logp.detach())
            clipped = torch.clamp(ratio, 1 - GRPO.clip, 1 + GRPO.clip)
            a = adv[p, g]
            per_token = -torch.min(ratio * a, clipped * a)
            delta = ref_logp - logp
            per_token = per_token + GRPO.beta * (torch.exp(delta) - delta - 1)
            mask = (torch.arange(len(chosen)) >= len(prompt) - 1).double()
            losses.append((per_token * mask).sum() / mask.sum().clamp(min=1))
            sums.append((per_token * mask).sum())
            counts.append(mask.sum())
            entropies[-1] = (entropies[-1] * mask).sum()
    if loss_type == "grpo":
        loss = torch.stack(losses).mean()
    elif loss_type == "dapo":
        loss = torch.stack(sums).sum() / torch.stack(counts).sum()
    else:
        loss = torch.stack(sums).sum() / (len(sums) * NEW)
    loss.backward()
    entropy = float(torch.stack(entropies).sum() / torch.stack(counts).sum())
    return float(loss.detach()), {k: w.grad.numpy() for k, w in model.w.items()}, entropy


@pytest.mark.parametrize(
    "layout, microbatch, loss_type, temperature, scale",
    [
        ("group", 1, "grpo", 1.0, "group"),
        ("group", 2, "grpo", 0.7, "group"),
        ("completion", 1, "grpo", 1.0, "group"),
        ("group", 2, "dapo", 1.0, "group"),
        ("completion", 1, "dr_grpo", 1.5, "none"),
        ("group", 2, "grpo", 1.0, "batch"),
        ("completion", 1, "dapo", 0.7, "batch"),
    ],
)
def test_one_iteration_matches_pytorch(layout, microbatch, loss_type, temperature, scale):
    algorithm = dataclasses.replace(GRPO, temperature=temperature)
    program = build(
        "f64",
        layout=layout,
        microbatch=microbatch,
        loss_type=loss_type,
        algorithm=algorithm,
        scale_rewards=scale,
    )
    weights = program.policy.init_weights(seed=1, scale=0.5)
    ref_weights = {
        k.removeprefix("ref."): v for k, v in program.reference.init_weights(seed=2).items()
    }
    # Lengths (2, 4, 3, 2): microbatches of lengths (2, 2) and (3, 4) once sorted.
    batch = prompts(1, 4, cut=True)[0] if microbatch > 1 else prompts(1, 3)[0]
    lengths = [len(p) for p in batch]
    inputs = program.inputs(weights, ref_weights, [batch], seed=5)
    out = interpret(
        program.program.build(), inputs, symbols=program.symbols(inputs), udfs=program.udfs
    ).outputs
    completions = program.completions(out["tokens"], lengths)
    rewards = program.by_prompt(out["reward"], lengths)
    length = program.by_prompt(out["length"], lengths)
    assert 0 < rewards.sum() < rewards.size  # both rewards drawn: advantages are not all 0
    tokens = []  # the chosen token at each step (those at prompt steps are not read)
    for p, prompt in enumerate(batch):
        assert len({tuple(c) for c in completions[p]}) > 1  # the rows draw apart
        tokens.append([[0] * (len(prompt) - 1) + list(c) for c in completions[p]])
        for g, completion in enumerate(completions[p]):
            # a completion ends on its EOS or after NEW tokens
            assert (completion[-1] == TOK.eos) or len(completion) == NEW
            assert TOK.eos not in completion[:-1]
            assert rewards[p, g] == parity_reward(prompt, completion)
            assert length[p, g] == len(completion)
    # Some completion ended before the longest of its group (in the group
    # layout, a row masked out for the group's last steps).
    assert (length < length.max(1, keepdims=True)).any()
    loss, grads, entropy = torch_grpo(
        weights, ref_weights, batch, tokens, rewards, loss_type, temperature, scale
    )
    assert abs(float(out["loss"]) - loss) <= 1e-10
    assert float(out["kl"]) > 0  # the reference differs
    assert worst_error(out, grads, 1e-6) <= 1e-6
    assert 0 < entropy < np.log(TOK.vocab)
    assert abs(float(out["entropy"]) - entropy) <= 1e-10


RLOO = losses.RLOOAlgorithm(group=4, beta=0.3)


def torch_rloo(weights, ref_weights, batch, tokens, rewards):
    """TRL's RLOO loss and gradients on the sampled completions, from its
    definition (trl/trainer/rloo_trainer.py): the reward less beta times
    the completion's summed log-ratio to the reference (the sampling
    policy's, no gradient), the leave-one-out baseline (the mean of the
    group's other shaped rewards), the loss -A * exp(S - S_old) on the
    summed log-probs S, the mean over completions; and the logged KL, the
    mean log-ratio over the batch's completion tokens."""
    model, ref = TorchGPT(weights, 1, 2), TorchGPT(ref_weights, 1, 2)
    for w in model.w.values():
        w.requires_grad_(True)
    sums, ref_sums, counts = [], [], []
    for p, prompt in enumerate(batch):
        for g in range(RLOO.group):
            chosen = [int(x) for x in tokens[p][g]]
            fed = (prompt + chosen[len(prompt) - 1 :])[: len(chosen)]
            target = torch.tensor(chosen)[:, None]
            mask = (torch.arange(len(chosen)) >= len(prompt) - 1).double()
            logp = torch.log_softmax(model.logits(fed, "full", 0), -1).gather(1, target)[:, 0]
            with torch.no_grad():
                ref_logp = torch.log_softmax(ref.logits(fed, "full", 0), -1).gather(1, target)[:, 0]
            sums.append((logp * mask).sum())
            ref_sums.append((ref_logp * mask).sum())
            counts.append(mask.sum())
    seq = torch.stack(sums).view(len(batch), RLOO.group)
    ref_seq = torch.stack(ref_sums).view(len(batch), RLOO.group)
    shaped = torch.tensor(rewards) - RLOO.beta * (seq.detach() - ref_seq)
    baseline = (shaped.sum(1, keepdim=True) - shaped) / (RLOO.group - 1)
    advantage = shaped - baseline
    loss = (-advantage * torch.exp(seq - seq.detach())).mean()
    loss.backward()
    kl = float((seq.detach() - ref_seq).sum() / torch.stack(counts).sum())
    return float(loss.detach()), {k: w.grad.numpy() for k, w in model.w.items()}, kl


@ARRANGEMENTS
def test_rloo_matches_trl_rloo_in_pytorch(layout, microbatch):
    """build_grpo with losses.RLOOAlgorithm: TRL's RLOO (its advantage,
    KL penalty, loss and logged KL) on the program's own samples."""
    program = build("f64", layout=layout, microbatch=microbatch, algorithm=RLOO)
    weights = program.policy.init_weights(seed=1, scale=0.5)
    ref_weights = {
        k.removeprefix("ref."): v for k, v in program.reference.init_weights(seed=2).items()
    }
    batch = prompts(1, 4, cut=True)[0] if microbatch > 1 else prompts(1, 3)[0]
    lengths = [len(p) for p in batch]
    inputs = program.inputs(weights, ref_weights, [batch], seed=5)
    out = interpret(
        program.program.build(), inputs, symbols=program.symbols(inputs), udfs=program.udfs
    ).outputs
    completions = program.completions(out["tokens"], lengths)
    rewards = program.by_prompt(out["reward"], lengths)
    assert 0 < rewards.sum() < rewards.size
    tokens = [
        [[0] * (len(prompt) - 1) + list(c) for c in completions[p]]
        for p, prompt in enumerate(batch)
    ]
    loss, grads, kl = torch_rloo(weights, ref_weights, batch, tokens, rewards)
    assert abs(float(out["loss"]) - loss) <= 1e-10
    assert abs(float(out["kl"]) - kl) <= 1e-10 and kl != 0
    assert worst_error(out, grads, 1e-6) <= 1e-6


def test_rloo_takes_no_loss_type():
    with pytest.raises(pf.ProgramError, match="takes no loss_type"):
        build("f64", algorithm=RLOO, loss_type="dapo")


def test_grad_norm_is_the_global_norm_before_clipping():
    """With an optimizer the program outputs the gradients' global norm
    (TRL's grad_norm), before clipping. With SGD at lr 1 and no clipping
    an iteration moves the weights by -g, so grad_norm is the norm of the
    move; with clip_norm c, on the same samples, grad_norm is the same
    and the move is -g * c / (norm + 1e-6)."""
    clip = 1e-3
    config = GPTConfig(TOK.vocab, 8, 1, 2, None, WIDTH + NEW, dtype="f64")
    runs, programs = [], []
    for clip_norm in (None, clip):
        program = build_grpo(
            config,
            GRPO,
            parity_reward,
            eos=TOK.eos,
            prompt_width=WIDTH,
            max_new_tokens=NEW,
            optimizer=optim.SGD(1.0),
            clip_norm=clip_norm,
        )
        weights = program.policy.init_weights(seed=1, scale=0.5)
        inputs = program.inputs(weights, weights, prompts(1, 3), seed=5)
        symbols = program.symbols(inputs)
        runs.append(
            interpret(program.program.build(), inputs, symbols=symbols, udfs=program.udfs).outputs
        )
        programs.append(program)
    (free, clipped), (free_program, clipped_program) = runs, programs
    np.testing.assert_array_equal(free["reward"], clipped["reward"])  # the same samples
    assert 0 < np.ravel(free["reward"]).sum() < np.ravel(free["reward"]).size
    moved, _ = free_program.training.final_state(free)
    grads = {path: weights[path] - moved[path] for path in weights}
    norm = np.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    assert norm > 10 * clip  # clipping scales the step
    for run in runs:
        assert abs(float(np.ravel(run["grad_norm"])[0]) - norm) <= 1e-9 * norm
    final, _ = clipped_program.training.final_state(clipped)
    for path, g in grads.items():
        step = -g * clip / (norm + 1e-6)
        np.testing.assert_allclose(final[path] - weights[path], step, atol=1e-12, err_msg=path)


@pytest.mark.parametrize("layout, microbatch", [("group", 2), ("completion", 1)])
def test_keyed_reward_scores_a_point_at_once_with_its_prompts_keys(layout, microbatch):
    """keyed_reward: the reward gets each completion's prompt key (any
    integer the caller gives) and scores a point's completions in one
    call; the run equals one with the per-completion reward."""
    calls = []

    def keyed(keys, prompt_ids, completion_ids):
        calls.append(list(keys))
        return [parity_reward(p, c) for p, c in zip(prompt_ids, completion_ids, strict=True)]

    batch = prompts(1, 4, cut=True)[0]
    keys = [[70, 71, 72, 73]]
    plain = build("f64", layout=layout, microbatch=microbatch)
    program = build("f64", layout=layout, microbatch=microbatch, reward=keyed, keyed_reward=True)
    weights = plain.policy.init_weights(seed=1, scale=0.5)
    ref = {k.removeprefix("ref."): v for k, v in plain.reference.init_weights(seed=2).items()}
    with pytest.raises(ValueError, match="keyed_reward"):
        program.inputs(weights, ref, [batch], seed=5)
    runs = []
    for prog, given in ((plain, None), (program, keys)):
        inputs = prog.inputs(weights, ref, [batch], seed=5, keys=given)
        runs.append(
            interpret(prog.program.build(), inputs, symbols=prog.symbols(inputs), udfs=prog.udfs)
        )
    np.testing.assert_array_equal(runs[0].outputs["reward"], runs[1].outputs["reward"])
    assert float(runs[0].outputs["loss"]) == float(runs[1].outputs["loss"])
    per_call = microbatch * GRPO.group if layout == "group" else 1
    assert all(len(c) == per_call for c in calls)
    seen = sum(calls, [])
    assert sorted(set(seen)) == keys[0] and all(seen.count(k) == GRPO.group for k in keys[0])
    if layout == "group":  # a call's keys are its microbatch's prompts, G rows each
        assert all(len(set(c)) == microbatch for c in calls)


@pytest.mark.parametrize(
    "layout, microbatch, optimizer",
    [("group", 1, "adamw"), ("group", 2, "adam"), ("completion", 1, "adam")],
)
def test_training_compiled_matches_interpreter(tmp_path, layout, microbatch, optimizer):
    """Three iterations compiled against the interpreter: samples, losses,
    final weights and optimizer moments. The weights and moments of an
    iteration are read at the start of the next and written at its end, so
    each keeps one slot (a point store), not a window of two."""
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    opt = optim.AdamW(1e-2) if optimizer == "adamw" else optim.Adam(1e-2)
    program = build("f32", opt, layout, microbatch=microbatch)
    weights = program.policy.init_weights(seed=1, scale=0.5)
    batches = prompts(3, 2 * microbatch, seed=4, cut=microbatch > 1)
    inputs = program.inputs(weights, weights, batches, seed=9)
    symbols = program.symbols(inputs)
    want = interpret(program.program.build(), inputs, symbols=symbols, udfs=program.udfs).outputs
    compiled = compile_module(program.program.build(), tmp_path / "grpo.pdgx", gpu=False)
    got = load(tmp_path / "grpo.pdgx").run(inputs, symbols, udfs=program.udfs).outputs
    # The same samples at every iteration (the weights agree to float32
    # rounding, far from any sampling boundary at these sizes).
    np.testing.assert_array_equal(got["reward"], want["reward"])
    np.testing.assert_array_equal(got["length"], want["length"])
    # Float32 rounding differs between the two, and Adam (lr 1e-2) scales a
    # weight's step by its gradient's size: where a gradient is nearly
    # zero, rounding moves the weight by up to ~1e-4 (not by lr).
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(got["kl"], want["kl"], rtol=1e-3, atol=1e-5)
    final, moments = program.training.final_state(got)
    expected, expected_moments = program.training.final_state(want)
    for path in final:
        np.testing.assert_allclose(
            moments[path]["exp_avg"], expected_moments[path]["exp_avg"], atol=1e-5, err_msg=path
        )
        np.testing.assert_allclose(
            moments[path]["exp_avg_sq"],
            expected_moments[path]["exp_avg_sq"],
            rtol=1e-3,
            atol=1e-9,
            err_msg=path,
        )
        if path.endswith("attn.k.b"):
            # Its gradient is exactly zero (softmax ignores a score added to
            # every key): Adam turns each side's rounding noise into +-lr.
            continue
        np.testing.assert_allclose(final[path], expected[path], atol=1e-3, err_msg=path)
    assert any(not np.array_equal(final[p], weights[p]) for p in final)
    # No weight-shaped store over the iterations alone keeps two of them:
    # each weight and moment is one point (before the schedule informed the
    # plan: windows of 2).
    shapes = {tuple(str(n) for n in w.shape) for w in weights.values()}
    weight_shaped = [
        s
        for s in compiled.manifest["stores"]
        if tuple(s["point"]) in shapes and len(s["extents"]) == 1
    ]
    windows = [s["value"] for s in weight_shaped if s["kind"] == "window"]
    assert not windows, windows
    assert sum(s["kind"] == "point" for s in weight_shaped) >= 3 * len(final)


@LAYOUTS
def test_the_graph_samples_and_differentiates_one_forward(layout):
    """Tokens are embedded twice: by the policy (whose logits give both the
    sample and, differentiated, the update) and by the reference; no second
    forward over the finished completions."""
    text = str(build("f32", optim.Adam(1e-3), layout).program.build())
    lookups = [line for line in text.splitlines() if 'pdg.node "take' in line and "%tok[" in line]
    tables = sorted(re.search(r"\(%\w+ = %(\w+)\[", line).group(1) for line in lookups)
    assert tables == ["ref_wte_w", "wte_w_at"], tables


@LAYOUTS
def test_stores_along_t_hold_the_steps_that_ran(layout):
    """In the storage plan every value over t keeps one iteration (extent 1
    along i) and along t either a few steps (point or window) or the steps
    the loop ran (`T`, growable); none is sized by the bound."""
    from pdg.analysis.graph import read_graph
    from pdg.analysis.storage import plan_storage
    from pdg.ir import make_context, parse_text

    module = parse_text(
        str(build("f32", optim.Adam(1e-3), layout).program.build()), "grpo", make_context()
    )
    graph = read_graph(next(op for op in module.body.operations if op.name == "pdg.graph"))
    bound = str(WIDTH + NEW - 1)
    over_t = [s for s in plan_storage(graph) if "t" in s.value.domain and s.kind != "input"]
    assert over_t
    for store in over_t:
        extents = dict(zip(store.value.domain, store.extents, strict=True))
        assert extents.get("i", "1") == "1", (store.value.name, store.extents)
        assert extents["t"] != bound, (store.value.name, store.extents)
        if store.kind == "growable":
            assert extents["t"] == "T"
    assert any(s.kind == "growable" for s in over_t)  # the KV caches, read whole by the update


@LAYOUTS
def test_weight_gradients_are_not_stored_per_completion(layout):
    """After the whole-graph passes, each completion's (or group's) weight
    gradient (a contraction over its own steps) is read only by the sum over
    the batch: its store is one partial sum per thread, so no store over the
    prompts holds a weight-shaped point. (d_model 16: at 8, a group's rows
    hold as many numbers per step as the gradient of a square weight, and
    pdg-contract-reductions rightly keeps the per-step product.)"""
    from pdg.analysis.graph import read_graph
    from pdg.analysis.memory import stores_of
    from pdg.passes.pipeline import parse_pipeline, run_pipeline
    from pdg.passes.pipelines import optimize

    module = build("f32", optim.Adam(1e-3), layout, d_model=16).program.build()
    assert not run_pipeline(module, parse_pipeline(optimize()))
    graph = read_graph(
        next(op.operation for op in module.body.operations if op.name == "pdg.graph")
    )
    weights = {
        v.shape
        for v in graph.values
        if v.kind == "input" and len(v.shape) == 2 and v.name != "prompt"
    }
    stores = stores_of(graph)
    per_completion = [s for s in stores if "p" in s.value.domain and s.value.shape in weights]
    assert per_completion
    assert all(s.kind == "partial" for s in per_completion), [
        (s.value.name, s.kind) for s in per_completion if s.kind != "partial"
    ]


@pytest.mark.parametrize("microbatch", [1, 3])
def test_a_microbatch_steps_as_one_aligned_block(microbatch):
    """The group layout is aligned microbatches, seen after the whole-graph
    passes: no value is over a completion dim; each step of the policy and
    of the reference holds the rows of its microbatch's groups in one point
    (KV caches (M * G, heads, head_dim), logits (M * G, vocab)); and every
    read by a step node of a value over the microbatches is at the reader's
    own: a contiguous block per step, no gather or scatter across
    sequences."""
    from pdg.analysis.graph import read_graph
    from pdg.passes.pipeline import parse_pipeline, run_pipeline
    from pdg.passes.pipelines import optimize

    module = build("f32", optim.Adam(1e-3), "group", microbatch=microbatch).program.build()
    assert not run_pipeline(module, parse_pipeline(optimize()))
    graph = read_graph(
        next(op.operation for op in module.body.operations if op.name == "pdg.graph")
    )
    assert "g" not in graph.dims
    by_name = {v.name: v for v in graph.values}
    heads, head_dim = 2, 4  # build(): d_model 8, 2 heads
    for name in ("h0_attn_k_cache", "h0_attn_v_cache", "ref_h0_attn_k_cache"):
        assert by_name[name].domain == ("p", "i", "t")
        assert by_name[name].shape == (microbatch * GRPO.group, heads, head_dim), name
    assert by_name["logits"].shape == (microbatch * GRPO.group, TOK.vocab)
    steps = [v for v in graph.values if "t" in v.domain]
    reads = [r for v in steps for r in v.reads if "p" in r.producer.domain]
    assert reads
    assert all(r.entries[0] == ("point", "p") for r in reads), [
        (r.consumer.name, r.producer.name, r.entries)
        for r in reads
        if r.entries[0] != ("point", "p")
    ]


def test_an_unknown_layout_is_refused():
    from pdg.frontend import ProgramError

    with pytest.raises(ProgramError, match="unknown layout 'rows'"):
        build("f32", layout="rows")
    with pytest.raises(ProgramError, match="only the group layout"):
        build("f32", layout="completion", microbatch=2)
    with pytest.raises(ProgramError, match="positive number of prompts"):
        build("f32", microbatch=0)


def test_prompts_that_do_not_fill_the_microbatches_are_refused():
    program = build("f32", microbatch=2)
    weights = program.policy.init_weights(seed=1)
    with pytest.raises(ValueError, match="give a multiple of 2"):
        program.inputs(weights, weights, prompts(1, 3), seed=0)


def test_by_prompt_undoes_the_sort_by_length():
    """Per-row outputs come back per prompt, in the caller's order, for a
    one-iteration output [p, M * G] and a training one [p, i, M * G]."""
    program = build("f32", microbatch=2)
    lengths = [4, 2, 3, 2]  # held as 2, 2 | 3, 4: prompts 1, 3 | 2, 0
    held = [1, 3, 2, 0]
    rows = np.arange(2 * 2 * GRPO.group).reshape(2, 2 * GRPO.group)  # row id per point
    by_prompt = program.by_prompt(rows, lengths)
    for k, source in enumerate(held):
        np.testing.assert_array_equal(by_prompt[source], rows.reshape(4, GRPO.group)[k])
    iterations = np.stack([rows, rows + 100], axis=1)  # [p, i, rows]
    np.testing.assert_array_equal(program.by_prompt(iterations, lengths)[:, 1], by_prompt + 100)


@pytest.mark.parametrize("shared", [False, True])
def test_the_reward_sees_each_rows_completion(shared):
    """The reward callback of a point of rows gets each row's prompt and its
    completion: from the prompt's last position (less what a shared prefill
    ran), up to and with the first of either EOS id, at most
    max_new_tokens. Checked against a plain loop over Python lists."""
    from pdg.programs.grpo import _scorer

    group, max_new, eos = 3, 5, (11, 12)
    rng = np.random.default_rng(3)
    prompt_ids = rng.integers(0, 10, (2, 6))
    prompt_length = np.array([4, 6])
    tokens = rng.integers(0, 13, (12, 2 * group))  # EOS ids come up often
    tokens[:, 0] = 1  # a row that never ends: cut at max_new
    seen = []

    def reward(ids, completion):
        seen.append((ids.tolist(), completion.tolist()))
        return float(len(seen))

    out = _scorer(reward, np.float32, eos, max_new, group, shared)(
        prompt_ids, prompt_length, tokens
    )
    want = []
    skipped = 3 if shared else 0  # the shortest prompt's positions but its last
    for row in range(2 * group):
        n = int(prompt_length[row // group])
        completion = []
        for token in tokens[n - 1 - skipped :, row].tolist()[:max_new]:
            completion.append(token)
            if token in eos:
                break
        want.append((prompt_ids[row // group, :n].tolist(), completion))
    assert seen == want
    assert seen[0][1] == [1] * max_new
    assert any(len(c) < max_new and c[-1] in eos for _, c in seen)
    assert out.tolist() == list(range(1, 2 * group + 1))


def test_a_step_shares_its_parallel_loops():
    """In the lowered program, the nodes of a step that read one another
    only at their own microbatch share one parallel loop (one fork and one
    barrier of the thread pool for many nodes). At this commit the 139
    node calls in parallel loops run in 32 loops, 45 in the largest; with
    a loop per node there were 139."""
    from pdg.ir import make_context, parse_text
    from pdg.lowering.lower import lower_to_loops
    from pdg.passes.pipeline import parse_pipeline, run_pipeline
    from pdg.passes.pipelines import optimize

    text = str(build("f32", optim.Adam(1e-3), "group", microbatch=2).program.build())
    module = parse_text(text, "grpo", make_context())
    assert not run_pipeline(module, parse_pipeline(optimize()))
    lower_to_loops(module)
    calls, inside = [], False  # node calls per parallel loop of the entry
    for line in str(module).split("func.func @pdg_grpo(")[1].splitlines():
        if "scf.parallel" in line:
            calls.append(0)
            inside = True
        elif "scf.reduce" in line:
            inside = False
        elif inside and "func.call @grpo_" in line:
            calls[-1] += 1
    assert 4 * len(calls) < sum(calls) and max(calls) >= 30, calls


def shared_and_stepped(config: GPTConfig, microbatch: int, optimizer=None):
    """The program with a prefill shared by each prompt's rows, and the
    one that steps every row from position 0 (share_prefill=False)."""
    return [
        build_grpo(
            config,
            GRPO,
            parity_reward,
            eos=TOK.eos,
            prompt_width=WIDTH,
            max_new_tokens=NEW,
            optimizer=optimizer,
            clip_norm=None,
            microbatch=microbatch,
            share_prefill=share,
        )
        for share in (True, False)
    ]


# GPT-2's blocks with 2 layers (learned positions; the prefill's first
# layer runs whole, its last only to its keys and values), and Llama's
# (rotary positions, RMSNorm, a gated MLP, q/k norms, 2 query heads per
# key/value head).
PREFILL_CONFIGS = {
    "gpt2": GPTConfig(TOK.vocab, 8, 2, 2, None, WIDTH + NEW, dtype="f64"),
    "llama": GPTConfig(
        TOK.vocab,
        8,
        2,
        2,
        1,
        WIDTH + NEW,
        dtype="f64",
        positions="rotary",
        norm="rmsnorm",
        activation="silu",
        gated_mlp=True,
        qkv_bias=False,
        o_bias=False,
        mlp_bias=False,
        qk_norm=True,
        tie_embeddings=False,
    ),
}


@pytest.mark.parametrize("name", sorted(PREFILL_CONFIGS))
def test_a_shared_prefill_samples_and_differentiates_as_stepping_every_row(name):
    """share_prefill (the group layout's default) computes the positions
    before a microbatch's shortest prompt ends once per prompt; its rows
    then attend over that cache and their own. One iteration (float64,
    interpreter) draws the same completions as stepping all M * G rows
    from position 0, with the same rewards, loss, KL, entropy and every
    gradient (those through the shared cache summed over the G rows).
    Microbatches of lengths (1, 2) (a prefill of one hidden position) and
    (3, 4) (three shared positions, then a row still in its prompt)."""
    shared, stepped = shared_and_stepped(PREFILL_CONFIGS[name], microbatch=2)
    weights = shared.policy.init_weights(seed=1, scale=0.5)
    ref = {k.removeprefix("ref."): v for k, v in shared.reference.init_weights(seed=2).items()}
    batch = [ids[:n] for ids, n in zip(prompts(1, 4)[0], (3, 1, 4, 2), strict=True)]
    lengths = [len(p) for p in batch]
    runs = []
    for program in (shared, stepped):
        inputs = program.inputs(weights, ref, [batch], seed=5)
        out = interpret(
            program.program.build(), inputs, symbols=program.symbols(inputs), udfs=program.udfs
        )
        runs.append((out, program.completions(out.outputs["tokens"], lengths)))
    (got, got_completions), (want, want_completions) = runs
    assert got.bounds["S"].tolist() == [1, 3]  # the shortest prompts' lengths
    assert [[c.tolist() for c in p] for p in got_completions] == [
        [c.tolist() for c in p] for p in want_completions
    ]
    assert len({tuple(c) for p in got_completions for c in p}) > 4  # the rows draw apart
    for key in ("reward", "length"):
        np.testing.assert_array_equal(got.outputs[key], want.outputs[key])
    assert 0 < np.sum(got.outputs["reward"]) < np.size(got.outputs["reward"])
    for key, value in want.outputs.items():
        if key not in ("tokens", "reward", "length"):
            np.testing.assert_allclose(got.outputs[key], value, rtol=0, atol=1e-12, err_msg=key)
    assert all(np.abs(want.outputs[k]).max() > 0 for k in want.outputs if k.startswith("g_"))


def test_a_shared_prefill_trains_compiled_as_stepping_every_row(tmp_path):
    """Compiled float32 training (Adam, 3 iterations, prompts of different
    lengths in a microbatch): the shared prefill's run and the stepped
    one's draw the same samples and reach the same weights."""
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    config = GPTConfig(TOK.vocab, 8, 2, 2, None, WIDTH + NEW, dtype="f32")
    programs = shared_and_stepped(config, microbatch=2, optimizer=optim.Adam(1e-2))
    weights = programs[0].policy.init_weights(seed=1, scale=0.5)
    batches = prompts(3, 4, seed=4, cut=True)
    runs = []
    for k, program in enumerate(programs):
        inputs = program.inputs(weights, weights, batches, seed=9)
        compile_module(program.program.build(), tmp_path / f"grpo{k}.pdgx", gpu=False)
        loaded = load(tmp_path / f"grpo{k}.pdgx")
        runs.append(loaded.run(inputs, program.symbols(inputs), udfs=program.udfs).outputs)
    got, want = runs
    np.testing.assert_array_equal(got["reward"], want["reward"])
    np.testing.assert_array_equal(got["length"], want["length"])
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-4, atol=1e-6)
    final, _ = programs[0].training.final_state(got)
    expected, _ = programs[1].training.final_state(want)
    for path in final:
        if path.endswith("attn.k.b"):  # a zero gradient: see the test above
            continue
        np.testing.assert_allclose(final[path], expected[path], atol=1e-3, err_msg=path)
    assert any(not np.array_equal(final[p], weights[p]) for p in final)


def test_a_shared_prefill_runs_a_prompts_positions_on_its_own_row():
    """In the graph: the prefill's keys and values are one row per prompt
    (M, heads, head_dim) over (p, i, s), the steps' own (M * G, ...) over
    (p, i, t); each model embeds the prompt's tokens once per prompt and
    the steps' tokens once per row."""
    shared, _ = shared_and_stepped(PREFILL_CONFIGS["gpt2"], 3, optim.Adam(1e-3))
    from pdg.analysis.graph import read_graph

    module = shared.program.build()
    graph = read_graph(
        next(op.operation for op in module.body.operations if op.name == "pdg.graph")
    )
    by_name = {v.name: v for v in graph.values}
    for model in ("", "ref_"):
        for layer in (0, 1):
            prefix = by_name[f"{model}h{layer}_attn_prefix_k"]
            assert (prefix.domain, prefix.shape) == (("p", "i", "s"), (3, 2, 4))
            own = by_name[f"{model}h{layer}_attn_k_cache"]
            assert (own.domain, own.shape) == (("p", "i", "t"), (3 * GRPO.group, 2, 4))


def test_a_shared_prefill_needs_the_group_layout_and_full_attention():
    from pdg.frontend import ProgramError
    from pdg.nn import AttentionPattern

    with pytest.raises(ProgramError, match="needs the group layout"):
        build("f32", layout="completion", share_prefill=True)
    window = dataclasses.replace(
        GPTConfig(TOK.vocab, 8, 1, 2, None, WIDTH + NEW), pattern=AttentionPattern("window", 2)
    )
    with pytest.raises(ProgramError, match="full attention in every layer"):
        build_grpo(
            window,
            GRPO,
            parity_reward,
            eos=TOK.eos,
            prompt_width=WIDTH,
            max_new_tokens=NEW,
            share_prefill=True,
        )
    # by default a window model steps every row
    plain = build_grpo(
        window, GRPO, parity_reward, eos=TOK.eos, prompt_width=WIDTH, max_new_tokens=NEW
    )
    assert not plain.shared_prefill
