"""What the GRPO benchmark's driver (grpo.py) and its implementations
(grpo.py's pdg and PyTorch runs, impl_trl.py) share: the task, the model and
its initial weights, the GRPO constants, the PyTorch model and the peak
memory of the process. Implementations import this module, never the
driver."""

from __future__ import annotations

import math
import resource

LIMIT = 20  # additions a + b with a, b < 20


# Named model shapes (--config): each sets the model flags below. The
# addition task's tokens keep their ids (0..12) inside the larger
# vocabulary, and the logits still cover every id, so the head costs what
# a real vocabulary's does. small-bpe is the shape of a 4-layer model with
# an 8k BPE vocabulary, for when gpt2-124m does not fit the time.
CONFIGS = {
    "gpt2-124m": {"vocab": 50257, "d_model": 768, "layers": 12, "heads": 12},
    "small-bpe": {"vocab": 8192, "d_model": 512, "layers": 4, "heads": 8},
}
MODEL_FLAGS = ("vocab", "d_model", "layers", "heads")


def add_setting_args(parser, *, prompts: int, d_model: int, heads: int, new_tokens: int):
    """The flags setting() and the runs read (the model and the batch),
    with a script's defaults; call resolve_setting_args() after parsing."""
    parser.add_argument(
        "--config",
        choices=tuple(CONFIGS),
        help="a named model shape: sets --vocab, --d-model, --layers and --heads "
        "(giving one of those too with another value is refused)",
    )
    parser.add_argument(
        "--vocab",
        type=int,
        help="the model's vocabulary (default: the task's 13 characters); "
        "the task's tokens keep their ids inside it",
    )
    parser.add_argument("--d-model", type=int, help=f"default {d_model}")
    parser.add_argument("--layers", type=int, help="default 2")
    parser.add_argument("--heads", type=int, help=f"default {heads}")
    parser.set_defaults(script_model_defaults={"d_model": d_model, "layers": 2, "heads": heads})
    parser.add_argument("--prompts", type=int, default=prompts)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument(
        "--new-tokens", type=int, default=new_tokens, help="the response length bound"
    )
    parser.add_argument(
        "--microbatch", type=int, default=4, help="pdg: prompts per aligned microbatch"
    )


def resolve_setting_args(parser, args) -> None:
    """Fill the model flags from --config or the script's defaults. A flag
    given with --config must agree with it: a conflict is a parser error
    (exit 2, naming both), never a silent override."""
    if args.config is not None:
        named = CONFIGS[args.config]
        for flag in MODEL_FLAGS:
            given = getattr(args, flag)
            if given is not None and given != named[flag]:
                parser.error(
                    f"--{flag.replace('_', '-')} {given} conflicts with --config "
                    f"{args.config} ({flag} {named[flag]}): drop one of them"
                )
            setattr(args, flag, named[flag])
    for flag, value in args.script_model_defaults.items():
        if getattr(args, flag) is None:
            setattr(args, flag, value)
    if args.vocab is not None:
        from pdg import rl

        task_vocab = rl.Addition(LIMIT).tokenizer.vocab
        if args.vocab < task_vocab:
            parser.error(f"--vocab {args.vocab} is smaller than the task's {task_vocab} tokens")
    if args.d_model % args.heads:
        parser.error(f"--d-model {args.d_model} is not a multiple of --heads {args.heads}")


def setting_flags(args, names) -> list[str]:
    """The command-line flags that give a fresh process these resolved
    settings (a flag left unset, as --vocab by default, is left out)."""
    out = []
    for name in names:
        if (value := getattr(args, name)) is not None:
            out += [f"--{name.replace('_', '-')}", str(value)]
    return out


def setting(args):
    """(task, model config, initial weights, GRPO constants) of a run."""
    from pdg import rl
    from pdg.frontend import Program
    from pdg.losses import GRPOAlgorithm
    from pdg.nn import GPT, GPTConfig

    task = rl.Addition(LIMIT)
    length = task.prompt_width + args.new_tokens
    vocab = args.vocab or task.tokenizer.vocab
    config = GPTConfig(vocab, args.d_model, args.layers, args.heads, None, length)
    weights = GPT(Program("w"), config).init_weights(seed=0, scale=0.3)
    return task, config, weights, GRPOAlgorithm(group=args.group)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def torch_logits(p: dict, ids, valid, config):
    """The model in PyTorch: logits (B, L, V) for left-padded ids (`valid`
    marks real tokens), weights `p` by our paths."""
    import torch
    import torch.nn.functional as F

    D, HEADS = config.d_model, config.n_heads
    hd = D // HEADS
    n = ids.shape[1]
    pos = (valid.long().cumsum(1) - 1).clamp(min=0)
    x = p["wte.w"][ids] + p["wpe.w"][pos]
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    # a padding position attends to itself only (no row without keys)
    allowed = (causal[None] & valid[:, None, :]) | torch.eye(n, dtype=torch.bool)[None]
    for i in range(config.n_layers):
        q = f"h{i}."
        a = F.layer_norm(x, (D,), p[q + "ln1.g"], p[q + "ln1.b"], eps=1e-5)

        def heads(name, a=a, q=q):
            y = a @ p[q + f"attn.{name}.w"] + p[q + f"attn.{name}.b"]
            return y.view(ids.shape[0], n, HEADS, hd)

        s = torch.einsum("bthd,bshd->bhts", heads("q"), heads("k")) / math.sqrt(hd)
        s = s.masked_fill(~allowed[:, None], float("-inf"))
        att = torch.einsum("bhts,bshd->bthd", s.softmax(-1), heads("v"))
        x = x + att.reshape(ids.shape[0], n, D) @ p[q + "attn.o.w"] + p[q + "attn.o.b"]
        m = F.layer_norm(x, (D,), p[q + "ln2.g"], p[q + "ln2.b"], eps=1e-5)
        m = F.gelu(m @ p[q + "mlp.fc.w"] + p[q + "mlp.fc.b"], approximate="tanh")
        x = x + m @ p[q + "mlp.proj.w"] + p[q + "mlp.proj.b"]
    x = F.layer_norm(x, (D,), p["ln_f.g"], p["ln_f.b"], eps=1e-5)
    return x @ p["wte.w"].T


# PyTorch GRPO, as a user would write it (batched, left-padded prompts,
# float32): the pieces of an iteration, shared by grpo.py's PyTorch row and
# grpo_data_parallel.py's (one process, and DistributedDataParallel).


def torch_prompts(tok, prompts: list[str]):
    """(ids, valid, width): the prompts' tokens left-padded with EOS to the
    longest, and which are real."""
    import torch

    width = max(len(tok.encode(p)) for p in prompts)
    ids = torch.full((len(prompts), width), tok.eos)
    for k, p in enumerate(prompts):
        enc = tok.encode(p)
        ids[k, width - len(enc) :] = torch.tensor(enc)
    return ids, ids != tok.eos, width


def torch_sample(forward, ids, valid, new_tokens: int, eos: int):
    """Up to `new_tokens` sampled tokens per row (no gradient), each row
    ending at its EOS: (ids, valid) with them appended."""
    import torch

    done = torch.zeros(len(ids), dtype=torch.bool)
    with torch.no_grad():
        for _ in range(new_tokens):
            logits = forward(ids, valid)[:, -1]
            nxt = torch.multinomial(logits.softmax(-1), 1)[:, 0]
            nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
            ids = torch.cat([ids, nxt[:, None]], 1)
            valid = torch.cat([valid, ~done[:, None]], 1)
            done = done | (nxt == eos)
            if done.all():
                break
    return ids, valid


def torch_logp(forward, ids, valid):
    """The log-probability of each next token under `forward`."""
    targets = ids[:, 1:]
    logits = forward(ids[:, :-1], valid[:, :-1])
    return logits.log_softmax(-1).gather(2, targets[..., None])[..., 0]


def torch_grpo_loss(logp, old, ref_logp, rewards, mask, group: int, grpo):
    """GRPO's loss: group-standardized advantages, the clipped surrogate on
    the ratio to the sampling policy, k3 KL to the reference, the mean over
    each completion's tokens (`mask`), then over the completions."""
    import torch

    r = rewards.view(-1, group)
    adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + grpo.eps)).view(-1, 1)
    ratio = torch.exp(logp - old)
    per_token = -torch.min(ratio * adv, torch.clamp(ratio, 1 - grpo.clip, 1 + grpo.clip) * adv)
    per_token = per_token + grpo.beta * (torch.exp(ref_logp - logp) - (ref_logp - logp) - 1)
    return ((per_token * mask).sum(1) / mask.sum(1).clamp(min=1)).mean()
