"""Tiny Hugging Face checkpoints made by the tests (nothing is downloaded):
one per supported family, built with transformers from a random
initialization, every parameter redrawn (norm gains and biases too, so a
misplaced one shows), saved with save_pretrained, plus a byte-level BPE
tokenizer trained on a small text with the `tokenizers` library and a
ChatML-style chat template.

    gpt2     learned positions, LayerNorm, tanh GELU, fused c_attn, tied head
    llama    RoPE with Llama 3.1 scaling, GQA (4 heads, 2 kv), untied head
    mistral  sliding window 5, shorter than the sequences the tests run
    qwen2    q/k/v biases, a window on its second layer only, saved in bf16
    qwen3    per-head q/k RMSNorm, head_dim 16 != hidden / heads, sharded
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

FAMILIES = ("gpt2", "llama", "mistral", "qwen2", "qwen3")
VOCAB = 320
BOS, EOS, PAD = 0, 1, 2
SPECIAL = ["<s>", "</s>", "<pad>", "<|im_start|>", "<|im_end|>"]

TEXT = """\
The compiler reads the whole program as one graph of recurrences over
symbolic dimensions. A decode step attends to the keys of earlier steps
through a slice of the step dimension; a sliding window keeps only the
last few. Training runs the forward pass, the backward pass and the
optimizer as one program, and nothing is padded to a maximum length.
Tokens flow from the prompt into the model, and the model predicts the
next token until it emits the end of the sequence.
"""

# transformers renders this as the reference; it exercises trim_blocks and
# lstrip_blocks (tags on their own indented lines), loop controls, tojson,
# raise_exception and the special-token variables.
CHAT_TEMPLATE = """\
{{- bos_token }}
{%- if tools %}
<|im_start|>system
Tools: {{ tools | tojson }}<|im_end|>
{% endif %}
{%- for message in messages %}
    {%- if message['role'] not in ['system', 'user', 'assistant'] %}
        {{- raise_exception('unknown role ' + message['role']) }}
    {%- endif %}
    {%- if message['role'] == 'system' and not loop.first %}
        {%- continue %}
    {%- endif %}
<|im_start|>{{ message['role'] }}
    {% if message.get('name') %}({{ message['name'] }}) {% endif %}
{{ message['content'] | trim }}<|im_end|>
{% endfor %}
{%- if add_generation_prompt %}
<|im_start|>assistant
{% endif %}"""


def train_tokenizer(directory: Path) -> None:
    """tokenizer.json (byte-level BPE, BOS prepended) and
    tokenizer_config.json (special tokens, chat template) in `directory`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TEXT.splitlines() * 4, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", BOS)]
    )
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "pad_token": "<pad>",
        "model_max_length": 4096,
        "chat_template": CHAT_TEMPLATE,
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(config, indent=2))


def hf_config(family: str):
    common = dict(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
    )
    if family == "gpt2":
        return transformers.GPT2Config(
            vocab_size=VOCAB,
            n_embd=32,
            n_layer=2,
            n_head=4,
            n_positions=96,
            bos_token_id=BOS,
            eos_token_id=EOS,
            pad_token_id=PAD,
        )
    if family == "llama":
        rope = {
            "rope_type": "llama3",
            "rope_theta": 10000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 32,  # head_dim 8: every band
        }
        return transformers.LlamaConfig(**common, tie_word_embeddings=False, rope_parameters=rope)
    if family == "mistral":
        return transformers.MistralConfig(**common, sliding_window=5)
    if family == "qwen2":
        return transformers.Qwen2Config(
            **common,
            tie_word_embeddings=True,
            use_sliding_window=True,
            sliding_window=4,
            max_window_layers=1,
            rope_parameters={"rope_type": "default", "rope_theta": 5000.0},
        )
    if family == "qwen3":
        return transformers.Qwen3Config(**common, head_dim=16)
    raise ValueError(family)


def build(family: str, directory: Path, seed: int = 0):
    """Saves a tiny random `family` checkpoint (with the tokenizer) into
    `directory`; returns the float32 transformers model read back from it
    (the reference: bf16 weights are what the file holds)."""
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(hf_config(family))
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            gain = name.endswith(("norm.weight", "ln_1.weight", "ln_2.weight", "ln_f.weight"))
            noise = torch.randn(p.shape, generator=generator)
            p.copy_(1.0 + 0.1 * noise if gain else 0.2 * noise)
    options = {}
    if family == "qwen2":
        model = model.to(torch.bfloat16)
    if family == "qwen3":
        options["max_shard_size"] = "40KB"
    model.save_pretrained(directory, **options)
    train_tokenizer(directory)
    return reference(directory)


def reference(directory: Path):
    model = transformers.AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32)
    return model.eval()


def logits(model, ids) -> np.ndarray:
    """The reference's logits (positions, vocab) for one sequence."""
    with torch.no_grad():
        return model(torch.tensor([list(ids)])).logits[0].numpy()


def greedy(model, prompt, steps: int) -> list[int]:
    """`steps` greedy tokens after `prompt`, each from a full forward pass
    (no cache), EOS not special."""
    ids = list(prompt)
    for _ in range(steps):
        ids.append(int(np.argmax(logits(model, ids)[-1])))
    return ids[len(prompt) :]
