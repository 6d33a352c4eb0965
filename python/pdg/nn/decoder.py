"""One pre-norm decoder-only transformer for the GPT-2 and Llama families.

Every difference between GPT-2, Llama 2/3, Mistral, Qwen2/2.5 and Qwen3 is
a field of DecoderConfig (pdg.models reads them from a Hugging Face
config.json):

    field            GPT-2        Llama        Mistral   Qwen2       Qwen3
    positions        learned      rotary       rotary    rotary      rotary
    norm             layernorm    rmsnorm      rmsnorm   rmsnorm     rmsnorm
    gated_mlp        no (GELU)    yes (SiLU)   yes       yes         yes
    qkv_bias/o_bias  yes/yes      no/no        no/no     yes/no      no/no
    qk_norm          no           no           no        no          yes
    pattern          full         full         window    per layer   per layer
    tie_embeddings   yes          either       either    either      either

Parameters are named by path: `wte.w` (token embedding), `wpe.w` (learned
positions), per layer i `h{i}.ln1.g` / `.b`, `h{i}.attn.{q,k,v,o}.w` / `.b`,
`h{i}.attn.{q,k}_norm.g`, `h{i}.ln2.*`, the MLP `h{i}.mlp.fc.*` and
`h{i}.mlp.proj.*` (plain) or `h{i}.mlp.{gate,up,down}.*` (gated), then
`ln_f.*` and, with an untied head, `lm_head.w` (d_model, vocab). A Linear's
weight is (d_in, d_out): y = x @ w + b.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from pdg.frontend import Dim, ProgramError, TensorLike

from .attention import Attention, AttentionPattern, PrefixRead
from .layers import Embedding, LayerNorm, Linear, Module, RMSNorm, check_activation, tied_logits
from .lora import LoraSpec, add_adapters
from .mlp import MLP, GatedMLP
from .rope import RopeScaling, rope_frequencies
from .tensor_parallel import Shards, VocabParallelEmbedding

POSITIONS = ("learned", "rotary")
NORMS = ("layernorm", "rmsnorm")
# A score no softmax weight survives: added to keys a row must not see.
HIDDEN_SCORE = -1e30


@dataclass(frozen=True)
class Prefix:
    """Decoder.prefix(): per layer the keys and values (M, kv heads,
    head_dim) at each point of the prefix dim `dim`, and a 0 / HIDDEN_SCORE
    bias per point; `group` rows read each of its M rows."""

    layers: tuple
    dim: Dim
    bias: TensorLike
    group: int

    def read(self, layer: int) -> PrefixRead:
        """What a step reads of layer `layer`: all of the prefix dim."""

        def whole(x):
            return x[tuple(slice(0, d.size) if d is self.dim else d for d in x.domain)]

        k, v = self.layers[layer]
        return PrefixRead(whole(k), whole(v), whole(self.bias), self.group)


@dataclass(frozen=True)
class DecoderConfig:
    vocab: int = 1024
    d_model: int = 256
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int | None = None  # fewer than n_heads: grouped-query attention
    max_positions: int = 4096  # the learned position table's rows; rotary: the trained context
    pattern: AttentionPattern = field(default_factory=AttentionPattern)
    dtype: str = "f32"
    # "bf16": the matrices (projections, MLP, embedding tables, the head)
    # stored in bf16, half the bytes a decode step reads; norms and biases
    # stay in dtype, products widen to f32 and sum in f32. None: dtype.
    weight_dtype: str | None = None
    head_dim: int | None = None  # default d_model // n_heads
    d_ff: int | None = None  # the MLP's hidden size; default 4 * d_model
    positions: str = "learned"  # learned | rotary
    rope_theta: float = 10000.0
    rope_scaling: RopeScaling | None = None
    norm: str = "layernorm"  # layernorm | rmsnorm
    norm_eps: float = 1e-5
    activation: str = "gelu_tanh"  # gelu_tanh | gelu | silu | relu
    gated_mlp: bool = False  # down(act(gate(x)) * up(x)) instead of proj(act(fc(x)))
    qkv_bias: bool = True
    o_bias: bool = True
    mlp_bias: bool = True
    qk_norm: bool = False  # an RMSNorm over each head of q and k (Qwen3)
    tie_embeddings: bool = True  # logits = h @ wte.w.T; else h @ lm_head.w
    layer_patterns: tuple[AttentionPattern, ...] | None = None  # per layer, over `pattern`

    def __post_init__(self):
        for name in ("vocab", "d_model", "n_layers", "n_heads", "max_positions"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ProgramError(
                    f"DecoderConfig.{name} must be a positive integer, got {value!r}"
                )
        if self.positions not in POSITIONS:
            raise ProgramError(
                f"unknown positions '{self.positions}'", hint=f"use one of {', '.join(POSITIONS)}"
            )
        if self.norm not in NORMS:
            raise ProgramError(f"unknown norm '{self.norm}'", hint=f"use one of {', '.join(NORMS)}")
        check_activation(self.activation)
        if self.weight_dtype not in (None, self.dtype) and (
            self.weight_dtype != "bf16" or self.dtype != "f32"
        ):
            raise ProgramError(
                f"DecoderConfig.weight_dtype={self.weight_dtype!r} with dtype={self.dtype!r}",
                hint="weight_dtype is None (the model's dtype) or 'bf16' with dtype 'f32'",
            )
        kv = self.n_kv_heads or self.n_heads
        if self.n_heads % kv:
            raise ProgramError(
                f"{self.n_heads} query heads do not divide into {kv} key/value heads"
            )
        if self.head_dim is None and self.d_model % self.n_heads:
            raise ProgramError(
                f"d_model={self.d_model} does not divide into {self.n_heads} heads",
                hint="give head_dim explicitly",
            )
        if self.positions == "rotary" and self.attention_head_dim % 2:
            raise ProgramError(
                f"rotary positions need an even head dim, got {self.attention_head_dim}"
            )
        if self.layer_patterns is not None and len(self.layer_patterns) != self.n_layers:
            raise ProgramError(
                f"layer_patterns has {len(self.layer_patterns)} entries for {self.n_layers} layers"
            )

    @property
    def attention_head_dim(self) -> int:
        return self.head_dim or self.d_model // self.n_heads

    @property
    def mlp_hidden(self) -> int:
        return self.d_ff or 4 * self.d_model

    def pattern_of(self, layer: int) -> AttentionPattern:
        return self.layer_patterns[layer] if self.layer_patterns else self.pattern

    def with_pattern(self, pattern: AttentionPattern) -> DecoderConfig:
        """The same model with every layer attending through `pattern`."""
        from dataclasses import replace

        return replace(self, pattern=pattern, layer_patterns=None)


class Decoder(Module):
    """Token embeddings (+ learned positions), pre-norm blocks (attention,
    MLP), a final norm, and logits through the tied embedding or a head."""

    def __init__(
        self,
        program,
        config: DecoderConfig,
        path: str = "",
        lora: LoraSpec | None = None,
        shards: Shards | None = None,
    ):
        """With `lora`, every weight but the adapters it adds is frozen (see
        pdg.nn.lora). With `shards`, the attention heads and the MLP's
        hidden units are split over the ranks of a worker dim (tensor
        parallelism, pdg.nn.tensor_parallel); the rest is replicated."""
        super().__init__(program, path)
        self.lora = lora
        self.shards = shards
        if lora is not None and shards is not None:
            raise ProgramError(
                "LoRA adapters on a model split over ranks are not supported",
                hint="use one of lora= and shards=",
            )
        if lora is None:
            self._build(program, config, path)
            return
        with program.frozen_parameters():
            self._build(program, config, path)
        add_adapters(self, lora)

    @contextmanager
    def without_adapters(self):
        """Calls inside compute the base model (LoRA's reference policy)."""
        adapted = [m for m in self.modules() if isinstance(m, Linear) and m.adapter is not None]
        for m in adapted:
            m.adapter_enabled = False
        try:
            yield
        finally:
            for m in adapted:
                m.adapter_enabled = True

    def _build(self, program, config: DecoderConfig, path: str) -> None:
        c, self.config = config, config

        def sub(name: str) -> str:
            return f"{path}.{name}" if path else name

        def norm(name: str, d: int) -> Module:
            kind = LayerNorm if c.norm == "layernorm" else RMSNorm
            return self.child(kind(program, sub(name), d, c.norm_eps, c.dtype))

        wd = c.weight_dtype
        if self.vocab_split:
            table = VocabParallelEmbedding(
                program, sub("wte"), c.vocab, c.d_model, c.dtype, wd, self.shards
            )
        else:
            table = Embedding(program, sub("wte"), c.vocab, c.d_model, c.dtype, wd)
        self.wte = self.child(table)
        self.wpe = None
        if c.positions == "learned":
            self.wpe = self.child(
                Embedding(program, sub("wpe"), c.max_positions, c.d_model, c.dtype, wd)
            )
        rope = False
        if c.positions == "rotary":
            rope = rope_frequencies(c.attention_head_dim, c.rope_theta, c.rope_scaling)
        self.blocks = []
        for i in range(c.n_layers):
            ln1 = norm(f"h{i}.ln1", c.d_model)
            attn = self.child(
                Attention(
                    program,
                    sub(f"h{i}.attn"),
                    c.d_model,
                    c.n_heads,
                    c.n_kv_heads,
                    c.pattern_of(i),
                    rope,
                    c.dtype,
                    head_dim=c.head_dim,
                    qkv_bias=c.qkv_bias,
                    o_bias=c.o_bias,
                    qk_norm=c.qk_norm,
                    norm_eps=c.norm_eps,
                    weight_dtype=wd,
                    shards=self.shards,
                )
            )
            ln2 = norm(f"h{i}.ln2", c.d_model)
            mlp_kind = GatedMLP if c.gated_mlp else MLP
            mlp = self.child(
                mlp_kind(
                    program,
                    sub(f"h{i}.mlp"),
                    c.d_model,
                    c.mlp_hidden,
                    c.dtype,
                    c.activation,
                    c.mlp_bias,
                    weight_dtype=wd,
                    shards=self.shards,
                )
            )
            self.blocks.append((ln1, attn, ln2, mlp))
        self.ln_f = norm("ln_f", c.d_model)
        self.head = None
        if not c.tie_embeddings and self.vocab_split:
            self.head = self.split_param(
                "lm_head.w", (c.d_model, c.vocab), wd or c.dtype, self.shards, axis=1
            )
        elif not c.tie_embeddings:
            self.head = self.param("lm_head.w", (c.d_model, c.vocab), wd or c.dtype)

    @property
    def vocab_split(self) -> bool:
        """Whether the embedding and the head are split over the vocabulary:
        the logits are then each rank's range of them (over the worker dim)."""
        return self.shards is not None and self.shards.vocab

    def __call__(
        self, token: TensorLike, position: TensorLike, step: Dim, prefix: Prefix | None = None
    ) -> TensorLike:
        """Logits (vocab,) for the token at `position`, attending along `step`
        (and over `prefix`, keys and values shared by groups of rows); with
        the vocabulary split, this rank's (vocab / n,) of them."""
        h = self.hidden(token, position, step, prefix)
        return tied_logits(h, self.wte.table) if self.head is None else h @ self.head

    def hidden(
        self, token: TensorLike, position: TensorLike, step: Dim, prefix: Prefix | None = None
    ) -> TensorLike:
        """The final normalized hidden state (d_model,): what the logits and
        a value head read."""
        x = self.wte(token)
        if self.wpe is not None:
            x = x + self.wpe(position)
        for n, (ln1, attn, ln2, mlp) in enumerate(self.blocks):
            shared = prefix.read(n) if prefix is not None else None
            x = x + attn(ln1(x), step, position, shared)
            x = x + mlp(ln2(x))
        return self.ln_f(x)

    def prefix(
        self,
        token: TensorLike,
        position: TensorLike,
        step: Dim,
        visible: TensorLike,
        group: int,
    ) -> Prefix:
        """The keys and values of every layer at positions that groups of
        `group` rows share (a prompt's, for its G completions), computed
        once per group: `token` (M,) at `position` along `step`, the
        prefix's own dim. `visible` (a bool per point of `step`): the
        positions the rows then attend to. Only what later steps read is
        computed: the last layer's keys and values, not its MLP or the
        logits."""
        x = self.wte(token)
        if self.wpe is not None:
            x = x + self.wpe(position)
        layers = []
        for n, (ln1, attn, ln2, mlp) in enumerate(self.blocks):
            h = ln1(x)
            k, v = attn.keys_values(h, position)
            name = f"{attn.path}.prefix".replace(".", "_")
            layers.append((k.named(f"{name}_k"), v.named(f"{name}_v")))
            if n + 1 == len(self.blocks):
                break
            x = x + attn(h, step, position, cache=layers[-1])
            x = x + mlp(ln2(x))
        bias = (visible.astype(self.config.dtype) - 1.0) * -HIDDEN_SCORE  # 0 or HIDDEN_SCORE
        bias = bias.named(f"{self.path}_prefix_bias" if self.path else "prefix_bias")
        return Prefix(tuple(layers), step, bias, group)
