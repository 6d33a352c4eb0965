"""Neural-network building blocks on pdg recurrent tensors.

Each module declares its weights as program inputs, named after its path in
the model (`h0_attn_q_w`), and applies itself to a tensor at one point of
its domain. Attention reads the keys and values of earlier steps through a
slice of the step dim: full (`0 : t + 1`), sliding window
(`max(0, t - w + 1) : t + 1`) or block (`(t // s) * s : t + 1`), so the KV
"cache" is simply the k and v values the compiler stores.

`Decoder` (also named `GPT`) is one decoder-only transformer whose
`DecoderConfig` (`GPTConfig`) covers GPT-2, Llama 2/3, Mistral, Qwen2 and
Qwen3; pdg.models builds one from a Hugging Face checkpoint.

`from_torch` imports a PyTorch module (a reward model, a custom block) as an
operator whose body is the module lowered by torch-mlir.

Weights for a model come from a dict of NumPy arrays keyed by parameter path
(`Module.inputs_from(...)`), e.g. a converted PyTorch state_dict.
"""

from .attention import Attention, AttentionPattern
from .decoder import Decoder, DecoderConfig
from .from_torch import TorchFunction, TorchModule, from_torch
from .gpt import GPT, GPTConfig
from .layers import Embedding, LayerNorm, Linear, Module, RMSNorm
from .lora import LoraSpec
from .mlp import MLP, GatedMLP
from .rope import RopeScaling, rope_frequencies, rotary
from .tensor_parallel import Shards

__all__ = [
    "Attention",
    "AttentionPattern",
    "Decoder",
    "DecoderConfig",
    "Embedding",
    "GPT",
    "GPTConfig",
    "GatedMLP",
    "LayerNorm",
    "Linear",
    "LoraSpec",
    "MLP",
    "Module",
    "RMSNorm",
    "RopeScaling",
    "Shards",
    "TorchFunction",
    "TorchModule",
    "from_torch",
    "rope_frequencies",
    "rotary",
]
