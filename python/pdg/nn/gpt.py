"""GPT: the name pdg's programs have used for the decoder. A GPTConfig with
its defaults is GPT-2's architecture (learned positions, LayerNorm, a tanh
GELU MLP, biases, a tied head); its other fields make it a Llama, Mistral
or Qwen model (see pdg.nn.decoder)."""

from .decoder import Decoder as GPT
from .decoder import DecoderConfig as GPTConfig

__all__ = ["GPT", "GPTConfig"]
