"""A checkpoint's tokenizer through pdg.models.Tokenizer: a byte-level BPE
trained with the `tokenizers` library on a small text and saved as
tokenizer.json encodes and decodes as that library does (and as
transformers' tokenizer of the same directory), and its chat template
renders as transformers renders it."""

from __future__ import annotations

import json
import shutil

import pytest
import tokenizers
import transformers
from pdg import models

from models import checkpoints

TEXTS = [
    "The compiler reads the whole program.",
    "  leading spaces, trailing  ",
    "unicode: é ü 😀 and a tab\there",
    "special <|im_start|> tokens </s> inside",
    "",
]
CHATS = [
    [{"role": "user", "content": "Hi"}],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "  What is 2+2?  ", "name": "ann"},
        {"role": "assistant", "content": "4"},
        {"role": "system", "content": "a late system message the template skips"},
        {"role": "user", "content": "And 3+3?"},
    ],
    [{"role": "user", "content": "no name", "name": None}],
]
TOOLS = [{"type": "function", "function": {"name": "add", "description": 'Adds "x" <y> é'}}]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tokenizer")
    checkpoints.train_tokenizer(directory)
    return directory


@pytest.fixture(scope="module")
def theirs(tokenizer_dir):
    return transformers.AutoTokenizer.from_pretrained(tokenizer_dir)


def test_01_encode_and_decode_equal_the_library(tokenizer_dir, theirs):
    ours = models.Tokenizer(tokenizer_dir)
    library = tokenizers.Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    assert ours.vocab_size == checkpoints.VOCAB
    for text in TEXTS:
        ids = ours.encode(text)
        assert ids == library.encode(text).ids == theirs(text)["input_ids"], text
        assert ids[0] == checkpoints.BOS  # the post-processor's BOS
        bare = ours.encode(text, add_special_tokens=False)
        assert bare == library.encode(text, add_special_tokens=False).ids == ids[1:]
        assert (
            ours.decode(ids)
            == library.decode(ids)
            == text.replace("<|im_start|>", "").replace("</s>", "")
        )
        assert ours.decode(ids, skip_special_tokens=False) == library.decode(
            ids, skip_special_tokens=False
        )


@pytest.mark.parametrize("chat", range(len(CHATS)))
@pytest.mark.parametrize("generation_prompt", [False, True])
def test_02_chat_template_renders_as_transformers(tokenizer_dir, theirs, chat, generation_prompt):
    ours = models.Tokenizer(tokenizer_dir)
    messages = CHATS[chat]
    for extra in ({}, {"tools": TOOLS}):
        want = theirs.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=generation_prompt, **extra
        )
        got = ours.apply_chat_template(messages, add_generation_prompt=generation_prompt, **extra)
        assert got == want


def test_03_chat_template_jinja_file_wins_as_in_transformers(tokenizer_dir, tmp_path):
    directory = tmp_path / "tok"
    shutil.copytree(tokenizer_dir, directory)
    (directory / "chat_template.jinja").write_text(
        "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}{{ eos_token }}"
    )
    want = transformers.AutoTokenizer.from_pretrained(directory).apply_chat_template(
        CHATS[1], tokenize=False
    )
    assert models.Tokenizer(directory).apply_chat_template(CHATS[1]) == want
    assert want.startswith("[system] Be brief.\n") and want.endswith("</s>")


def test_04_named_templates_take_the_default(tokenizer_dir, tmp_path):
    directory = tmp_path / "tok"
    shutil.copytree(tokenizer_dir, directory)
    config = json.loads((directory / "tokenizer_config.json").read_text())
    config["chat_template"] = [
        {"name": "tool_use", "template": "tools"},
        {"name": "default", "template": "{{ messages[0].content }}!"},
    ]
    (directory / "tokenizer_config.json").write_text(json.dumps(config))
    assert models.Tokenizer(directory).apply_chat_template(CHATS[0]) == "Hi!"


def test_05_template_errors_name_the_template(tokenizer_dir, tmp_path):
    ours = models.Tokenizer(tokenizer_dir)
    with pytest.raises(models.ModelError, match="unknown role tool"):
        ours.apply_chat_template([{"role": "tool", "content": "x"}])
    with pytest.raises(models.ModelError, match="non-empty list of messages"):
        ours.apply_chat_template([])
    directory = tmp_path / "bad"
    shutil.copytree(tokenizer_dir, directory)
    (directory / "chat_template.jinja").write_text("{% for m in messages %}")
    broken = models.Tokenizer(directory)  # encodes all the same
    assert broken.encode("Hi") == ours.encode("Hi")
    with pytest.raises(models.ModelError, match=r"chat_template\.jinja: the chat template"):
        broken.apply_chat_template(CHATS[0])
    (directory / "chat_template.jinja").unlink()
    config = json.loads((directory / "tokenizer_config.json").read_text())
    del config["chat_template"]
    (directory / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(models.ModelError, match="no chat template"):
        models.Tokenizer(directory).apply_chat_template(CHATS[0])


def test_06_eos_comes_from_the_tokenizer_when_the_config_has_none(tokenizer_dir, tmp_path):
    directory = tmp_path / "model"
    shutil.copytree(tokenizer_dir, directory)
    config = {"model_type": "gpt2", "vocab_size": checkpoints.VOCAB, "n_embd": 8, "n_layer": 1}
    config["n_head"] = 2
    (directory / "config.json").write_text(json.dumps(config))
    model = models.load(directory, weights=False)
    assert model.eos == (checkpoints.EOS,) == model.tokenizer.eos_ids
    config["eos_token_id"] = [4, 1]
    (directory / "config.json").write_text(json.dumps(config))
    assert models.load(directory, weights=False).eos == (4, 1)
    (directory / "generation_config.json").write_text(json.dumps({"eos_token_id": 4}))
    assert models.load(directory, weights=False).eos == (4,)  # what generate() stops on
