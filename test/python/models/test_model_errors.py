"""A model directory pdg cannot use is a ModelError that names the file and
the key: missing files, an unsupported model_type or option, tensors that
disagree with the config, damaged or quantized weights. Each case damages
a copy of a good checkpoint."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from pdg import models
from safetensors.numpy import save_file


@pytest.fixture
def llama(hf_checkpoints, tmp_path):
    directory = tmp_path / "llama"
    shutil.copytree(hf_checkpoints["llama"].directory, directory)
    return directory


@pytest.fixture
def qwen3(hf_checkpoints, tmp_path):
    directory = tmp_path / "qwen3"
    shutil.copytree(hf_checkpoints["qwen3"].directory, directory)
    return directory


def edit_config(directory, **changes):
    path = directory / "config.json"
    config = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    path.write_text(json.dumps(config))


def fails(directory, *fragments):
    with pytest.raises(models.ModelError) as caught:
        models.load(directory)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_01_missing_directory_and_files(llama, tmp_path):
    fails(tmp_path / "nope", "nope does not exist")
    fails(llama / "config.json", "is not a directory")
    (llama / "config.json").unlink()
    fails(llama, "no config.json")


def test_02_config_that_is_not_json_or_not_supported(llama):
    (llama / "config.json").write_text("{ not json")
    fails(llama, "config.json: not valid JSON")
    (llama / "config.json").write_text("[1, 2]")
    fails(llama, "config.json: expected a JSON object")


@pytest.mark.parametrize(
    "changes, fragments",
    [
        ({"model_type": "bert"}, ["config.json", "model_type 'bert' is not supported", "qwen3"]),
        ({"model_type": None}, ["config.json", "'model_type' is missing"]),
        ({"hidden_size": "32"}, ["config.json", "'hidden_size' must be int"]),
        ({"num_attention_heads": 0}, ["'num_attention_heads' must be a positive integer"]),
        ({"hidden_act": "gelu_10"}, ["'hidden_act' = 'gelu_10' is not supported"]),
        (
            {"rope_parameters": {"rope_type": "yarn", "factor": 4.0}},
            ["config.json", "'rope_parameters' has rope_type 'yarn'"],
        ),
        (
            {"rope_parameters": {"rope_type": "linear"}},
            ["'rope_parameters'", "'factor' is missing"],
        ),
        (
            {"rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.5}},
            ["partial_rotary_factor = 0.5 is not supported"],
        ),
        ({"num_key_value_heads": 3}, ["config.json", "4 query heads do not divide into 3"]),
    ],
)
def test_03_unsupported_model_types_and_options(llama, changes, fragments):
    edit_config(llama, **changes)
    fails(llama, *fragments)


def test_04_unsupported_options_of_other_families(hf_checkpoints, tmp_path):
    gpt2 = tmp_path / "gpt2"
    shutil.copytree(hf_checkpoints["gpt2"].directory, gpt2)
    edit_config(gpt2, scale_attn_by_inverse_layer_idx=True)
    fails(gpt2, "'scale_attn_by_inverse_layer_idx' = True is not supported")
    qwen2 = tmp_path / "qwen2"
    shutil.copytree(hf_checkpoints["qwen2"].directory, qwen2)
    edit_config(qwen2, layer_types=["full_attention", "chunked_attention"])
    fails(qwen2, "'layer_types'[1] = 'chunked_attention' is not supported")
    edit_config(qwen2, layer_types=["full_attention"])
    fails(qwen2, "'layer_types' has 1 entries for 2 layers")


def test_05_missing_weights(llama, qwen3):
    (llama / "model.safetensors").unlink()
    fails(llama, "no model.safetensors and no model.safetensors.index.json")
    (llama / "pytorch_model.bin").write_bytes(b"")
    fails(llama, "pdg reads safetensors only")
    shard = sorted(qwen3.glob("model-*.safetensors"))[1]
    shard.unlink()
    fails(qwen3, "model.safetensors.index.json", shard.name, "which is missing")


def test_06_a_tensor_missing_or_of_the_wrong_shape(llama):
    from safetensors.numpy import load_file

    tensors = load_file(llama / "model.safetensors")
    del tensors["model.layers.1.mlp.up_proj.weight"]
    save_file(tensors, llama / "model.safetensors", metadata={"format": "pt"})
    fails(llama, "model.safetensors", "no tensor 'model.layers.1.mlp.up_proj.weight'")
    edit_config(llama, intermediate_size=40)
    tensors["model.layers.1.mlp.up_proj.weight"] = np.zeros((40, 32), np.float32)
    save_file(tensors, llama / "model.safetensors", metadata={"format": "pt"})
    fails(llama, "model.safetensors", "'model.layers.0.mlp.gate_proj.weight' has shape [48, 32]")
    fails(llama, "the config says [40, 32]")


def test_07_tensors_the_config_does_not_describe(qwen3):
    edit_config(qwen3, model_type="qwen2", head_dim=16)
    fails(qwen3, "tensors the config's model does not have", "q_norm.weight")


def test_08_damaged_or_quantized_weights(llama):
    data = (llama / "model.safetensors").read_bytes()
    (llama / "model.safetensors").write_bytes(data[:100])
    fails(llama, "model.safetensors: not a readable safetensors file")
    (llama / "model.safetensors").write_bytes(data[: len(data) // 2])
    fails(llama, "model.safetensors")
    from safetensors.numpy import load_file

    (llama / "model.safetensors").write_bytes(data)
    tensors = load_file(llama / "model.safetensors")
    tensors["model.norm.weight"] = np.ones(32, np.int8)
    save_file(tensors, llama / "model.safetensors", metadata={"format": "pt"})
    fails(llama, "tensor 'model.norm.weight' is I8", "quantized")


def test_09_the_index_names_files_outside_the_directory(qwen3):
    index = json.loads((qwen3 / "model.safetensors.index.json").read_text())
    name = next(iter(index["weight_map"]))
    index["weight_map"][name] = "../elsewhere.safetensors"
    (qwen3 / "model.safetensors.index.json").write_text(json.dumps(index))
    fails(qwen3, "model.safetensors.index.json", "not a file name in this directory")


def test_10_missing_extras_say_which_to_install(llama, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "safetensors", None)  # import fails
    fails(llama, "pip install 'pdg[models]'", "safetensors")
