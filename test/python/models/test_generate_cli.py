"""`pdg generate MODEL_DIR` on the tiny checkpoints of every family: greedy
tokens equal transformers', prompts as --token-ids or --prompt texts, EOS
ends a completion unless --ignore-eos, sampling is seeded, --attention
overrides the config's pattern, the program compiles once (with progress
on stderr) and is then found in the cache; every bad input is one line on
stderr and exit code 1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from pdg.cli.main import main

from models import checkpoints
from models.checkpoints import FAMILIES

PROMPT = [0, 56, 76, 73, 225, 71, 83, 302, 298, 273]  # as in test_hf_models: its programs


def generate(capsys, directory, *args, cache=None):
    """(exit code, stdout, stderr) of `pdg generate directory args...`."""
    argv = ["generate", str(directory), *args]
    if cache is not None:
        argv += ["--cache", str(cache)]
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("family", FAMILIES)
def test_01_greedy_token_ids_equal_transformers(family, hf_checkpoints, artifact_cache, capsys):
    ck = hf_checkpoints[family]
    ids = ",".join(map(str, PROMPT))
    args = ["--token-ids", ids, "--max-new-tokens", "40", "--ignore-eos", "--format", "json"]
    rc, out, err = generate(capsys, ck.directory, *args, cache=artifact_cache)
    assert rc == 0, err
    (record,) = records(out)
    want = checkpoints.greedy(ck.reference, PROMPT, 40)
    assert record["token_ids"] == want
    assert record["prompt_token_ids"] == PROMPT
    assert record["finish_reason"] == "length"
    from pdg.models import Tokenizer

    assert record["text"] == Tokenizer(ck.directory).decode(want)


def test_02_prompts_as_text_stop_at_any_eos(hf_checkpoints, artifact_cache, capsys, tmp_path):
    ck = hf_checkpoints["llama"]
    from pdg.models import Tokenizer

    tok = Tokenizer(ck.directory)
    texts = ["The compiler reads", "A decode step attends to the keys of earlier steps"]
    prompts = [tok.encode(text) for text in texts]
    greedy = [checkpoints.greedy(ck.reference, p, 24) for p in prompts]
    # Two EOS ids (as Llama 3 instruct models have), each one that a
    # completion reaches: generation_config.json's list is what stops.
    stops = [greedy[0][5], greedy[1][9]]
    directory = tmp_path / "llama"
    shutil.copytree(ck.directory, directory)
    (directory / "generation_config.json").write_text(json.dumps({"eos_token_id": stops}))
    args = ["--prompt", texts[0], "--prompt", texts[1], "--max-new-tokens", "24"]
    rc, out, err = generate(capsys, directory, *args, "--format", "json", cache=artifact_cache)
    assert rc == 0, err
    assert "compiling the decode program" in err and "compiled in" in err  # a new program
    got = records(out)
    assert len(got) == 2
    for prompt, full, record in zip(prompts, greedy, got, strict=True):
        end = min(full.index(s) for s in stops if s in full)
        assert end < 10
        assert record["prompt_token_ids"] == prompt
        assert record["token_ids"] == full[: end + 1]
        assert record["finish_reason"] == "eos"
        assert record["text"] == tok.decode(full[: end + 1])
    # The same again: found in the cache (no compiling), plain text out.
    rc, out, err = generate(capsys, directory, *args, cache=artifact_cache)
    assert rc == 0 and "compiling" not in err, err
    assert out == "".join(r["text"] + "\n" for r in got)


def test_03_sampling_is_seeded(hf_checkpoints, artifact_cache, capsys):
    ck = hf_checkpoints["gpt2"]
    args = ["--token-ids", "5,6,7", "--max-new-tokens", "12", "--temperature", "0.9"]
    args += ["--ignore-eos", "--format", "json"]

    def draw(seed: int) -> list[int]:
        rc, out, err = generate(
            capsys, ck.directory, *args, "--seed", str(seed), cache=artifact_cache
        )
        assert rc == 0, err
        return records(out)[0]["token_ids"]

    first = draw(1)
    assert len(first) == 12 and draw(1) == first
    assert any(draw(seed) != first for seed in (2, 3, 4))
    assert first != checkpoints.greedy(ck.reference, [5, 6, 7], 12)


def test_04_attention_overrides_the_config(hf_checkpoints, artifact_cache, capsys, tmp_path):
    ck = hf_checkpoints["mistral"]  # a window of 5 in its config
    full = tmp_path / "mistral-full"
    shutil.copytree(ck.directory, full)
    config = json.loads((full / "config.json").read_text())
    config["sliding_window"] = None
    (full / "config.json").write_text(json.dumps(config))
    want = checkpoints.greedy(checkpoints.reference(full), PROMPT, 20)
    assert want != checkpoints.greedy(ck.reference, PROMPT, 20)  # the window matters
    ids = ",".join(map(str, PROMPT))
    args = ["--token-ids", ids, "--max-new-tokens", "20", "--ignore-eos", "--format", "json"]
    rc, out, err = generate(
        capsys, ck.directory, *args, "--attention", "full", cache=artifact_cache
    )
    assert rc == 0, err
    assert records(out)[0]["token_ids"] == want


def test_04b_bf16_weights_give_the_same_greedy_tokens(hf_checkpoints, artifact_cache, capsys):
    """--dtype bf16 compiles a second program (its matrices in bf16, sums in
    f32): on the tiny Qwen2 checkpoint its greedy tokens are transformers'
    float32 ones; an f32 array where it takes bf16 is never passed (the
    weights are rounded once, before the run)."""
    ck = hf_checkpoints["qwen2"]
    ids = ",".join(map(str, PROMPT))
    args = ["--token-ids", ids, "--max-new-tokens", "20", "--ignore-eos", "--format", "json"]
    rc, out, err = generate(capsys, ck.directory, *args, "--dtype", "bf16", cache=artifact_cache)
    assert rc == 0, err
    assert records(out)[0]["token_ids"] == checkpoints.greedy(ck.reference, PROMPT, 20)
    rc, _, err = generate(capsys, ck.directory, *args, "--dtype", "f16", cache=artifact_cache)
    assert rc != 0 and "'f16' is not one of 'f32', 'bf16'" in err


def test_05_token_ids_without_a_tokenizer(hf_checkpoints, artifact_cache, capsys, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(hf_checkpoints["qwen3"].directory, bare)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (bare / name).unlink()
    ids = ",".join(map(str, PROMPT))
    args = ["--token-ids", ids, "--max-new-tokens", "40", "--ignore-eos"]
    rc, out, err = generate(capsys, bare, *args, "--format", "json", cache=artifact_cache)
    assert rc == 0, err
    (record,) = records(out)
    assert record["text"] is None and len(record["token_ids"]) == 40
    rc, out, err = generate(capsys, bare, *args, cache=artifact_cache)
    assert out.split() == [str(i) for i in record["token_ids"]]
    rc, out, err = generate(capsys, bare, "--prompt", "Hi", cache=artifact_cache)
    assert rc == 1 and "no tokenizer.json" in err and "--token-ids" in err


BAD = [
    (["--token-ids", "1,x"], "'x' is not an integer"),
    (["--token-ids", ""], "is not an integer"),
    (["--token-ids", "1,999"], "token id 999 is outside the model's vocabulary (0..319)"),
    (["--token-ids", "-3"], "token id -3 is outside"),
    (["--token-ids", "1", "--prompt", "Hi"], "not both"),
    ([], "give at least one --prompt"),
    (["--token-ids", "1", "--max-new-tokens", "0"], "--max-new-tokens must be at least 1"),
    (["--token-ids", "1", "--temperature", "-1"], "--temperature must be 0"),
    (["--token-ids", "1", "--temperature", "nan"], "--temperature must be 0"),
    (["--token-ids", "1", "--attention", "diagonal"], "--attention 'diagonal'"),
    (["--token-ids", "1", "--attention", "window:x"], "'x' is not a whole number"),
    (["--token-ids", "1", "--attention", "window:0"], "needs a positive size"),
    (["--token-ids", "1", "--format", "xml"], "'xml' is not one of"),
    (["--token-ids", ",".join(["5"] * 90), "--max-new-tokens", "40"], "more than the model's 96"),
]


@pytest.mark.parametrize("args, message", BAD, ids=[m for _, m in BAD])
def test_06_bad_inputs_are_one_line_and_exit_1(hf_checkpoints, capsys, tmp_path, args, message):
    rc, out, err = generate(capsys, hf_checkpoints["gpt2"].directory, *args, cache=tmp_path)
    assert rc == 1, (out, err)
    assert message in err, err
    assert err.startswith("pdg: error: ") and err.count("\n") == 1, err
    assert out == ""
    assert not any(tmp_path.iterdir())  # nothing was compiled


def test_07_bad_model_directories(hf_checkpoints, capsys, tmp_path):
    rc, _, err = generate(capsys, tmp_path / "missing", "--token-ids", "1", cache=tmp_path)
    assert rc == 1 and "missing does not exist" in err
    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "config.json").write_text(json.dumps({"model_type": "bert"}))
    rc, _, err = generate(capsys, bert, "--token-ids", "1", cache=tmp_path)
    assert rc == 1 and "model_type 'bert' is not supported" in err


def test_08_the_console_script_exits_1_without_a_traceback(tmp_path):
    pdg = os.path.join(os.path.dirname(sys.executable), "pdg")
    done = subprocess.run(
        [pdg, "generate", str(tmp_path / "nowhere"), "--token-ids", "1,2"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("pdg: error: ") and "Traceback" not in done.stderr
    assert "nowhere does not exist" in done.stderr
