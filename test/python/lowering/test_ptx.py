"""PTX of the reference decode program's kernels (full, window and block
attention) assembles with ptxas for sm_80 and sm_90, and compiling twice
gives byte-identical kernels and manifest."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from decode_programs import small_decode
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module

PTXAS = shutil.which("ptxas")


@pytest.fixture(scope="module", params=["full", "window:8", "block:8"])
def artifact(request, tmp_path_factory):
    decode = small_decode(request.param, vocab=64, d_model=32, heads=4, max_len=64)
    text = str(decode.program.build())
    path = tmp_path_factory.mktemp("ptx") / "decode.pdgx"
    compile_module(parse_text(text, "decode", make_context()), path)
    return text, path


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not on PATH: PTX cannot be assembled here")
@pytest.mark.parametrize("chip", ["sm_80", "sm_90"])
def test_01_kernels_assemble_with_ptxas(artifact, chip, tmp_path):
    _, path = artifact
    ptx = path / "kernels" / f"{chip}.ptx"
    text = ptx.read_text()
    assert f".target {chip}" in text and ".entry" in text
    result = subprocess.run(
        [PTXAS, f"-arch={chip}", str(ptx), "-o", str(tmp_path / f"{chip}.cubin")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / f"{chip}.cubin").stat().st_size > 0


def test_02_compilation_is_deterministic(artifact, tmp_path):
    text, path = artifact
    again = tmp_path / "again.pdgx"
    compile_module(parse_text(text, "decode", make_context()), again)
    for part in ("manifest.json", "kernels/sm_80.ptx", "kernels/sm_90.ptx"):
        assert (path / part).read_bytes() == (again / part).read_bytes(), part
