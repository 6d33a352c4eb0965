"""Hugging Face checkpoints in pdg: GPT-2, Llama 2/3, Mistral, Qwen2/2.5
and Qwen3 models read from (and written to) their directories.

    from pdg import models
    model = models.load("path/to/Qwen2.5-0.5B")    # config, weights, tokenizer
    decode = programs.build_decode(model.config, eos=model.eos, ...)
    inputs = decode.inputs(model.weights, [model.tokenizer.encode("Hi")])
    models.save("trained", new_weights, model)     # transformers loads it

Reading needs the `models` extra (safetensors, tokenizers, jinja2,
ml-dtypes): `pip install 'pdg[models]'`. Nothing is downloaded: a model is
a directory on disk.
"""

from .checkpoint import Model, load, save
from .config import MODEL_TYPES, decoder_config, hf_config
from .errors import ModelError
from .tokenizer import Tokenizer

__all__ = [
    "MODEL_TYPES",
    "Model",
    "ModelError",
    "Tokenizer",
    "decoder_config",
    "hf_config",
    "load",
    "save",
]
