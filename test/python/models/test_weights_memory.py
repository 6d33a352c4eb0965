"""Reading bf16 and f16 checkpoints converts them to float32 one tensor at
a time: the memory Python allocates while loading (tracemalloc sees NumPy
and safetensors' buffers) peaks below the float32 weights plus one
float32 tensor, never at a second full copy of the model."""

from __future__ import annotations

import json
import tracemalloc

import ml_dtypes
import numpy as np
import pdg.frontend as pf
import pytest
from pdg import models
from pdg.models.layout import to_hf
from pdg.nn import Decoder
from safetensors.numpy import save_file

CONFIG = {
    "model_type": "llama",
    "vocab_size": 512,
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 64,
    "tie_word_embeddings": False,
}


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16], ids=["bf16", "f16"])
def test_01_loading_holds_one_tensor_beyond_the_float32_weights(dtype, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    config = models.load(tmp_path, weights=False).config
    weights = Decoder(pf.Program("weights"), config).init_weights(seed=0, scale=1.0)
    tensors = {k: v.astype(dtype) for k, v in to_hf(weights, config, "llama").items()}
    save_file(tensors, str(tmp_path / "model.safetensors"))
    total = sum(4 * v.size for v in tensors.values())
    largest = max(4 * v.size for v in tensors.values())
    del tensors
    tracemalloc.start()
    try:
        model = models.load(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < total + largest, (peak, total, largest)
    for path, value in weights.items():  # what the file holds, as float32
        np.testing.assert_array_equal(model.weights[path], value.astype(dtype).astype(np.float32))
