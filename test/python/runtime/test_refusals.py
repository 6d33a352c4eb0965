"""The runtime refuses, with a message that says what and why, anything
that does not fit the artifact's manifest, before compiled code runs."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pdg.runtime
import pytest
from conftest import REPO_ROOT
from pdg.ir import make_context, parse_file
from pdg.lowering.artifact import compile_module
from pdg.runtime import ArtifactError, RunError

PROGRAM = REPO_ROOT / "test" / "Conversion" / "pdg-lower-to-loops.mlir"
GOOD = {"x0": np.zeros(2, np.float32)}


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    path = tmp_path_factory.mktemp("artifact") / "loops.pdgx"
    compile_module(parse_file(str(PROGRAM), make_context()), path)
    return path


@pytest.fixture
def copy(artifact, tmp_path):
    """A copy of the artifact that a test may damage."""
    target = tmp_path / "copy.pdgx"
    shutil.copytree(artifact, target)
    return target


@pytest.mark.parametrize(
    "inputs, symbols, message",
    [
        ({}, {"B": 2}, "missing input(s) x0; the program's inputs: x0"),
        ({**GOOD, "y": np.zeros(2)}, {"B": 2}, "unknown input(s) y"),
        ({"x0": np.zeros(2)}, {"B": 2}, "input x0 has dtype float64, the program takes float32"),
        (
            {"x0": np.zeros(3, np.float32)},
            {"B": 2},
            "input x0 has shape [3], the program takes [2]",
        ),
        (GOOD, {}, "missing a value for launch symbol B (the bound of dim 'b')"),
        (GOOD, {"B": 5}, "symbol B = 5 is outside 1..4"),
        (GOOD, {"B": 0}, "symbol B = 0 is outside 1..4"),
        (GOOD, {"B": 2, "T": 3}, "symbol T is a dynamic bound, found while running"),
        (GOOD, {"B": 2, "Q": 3}, "unknown symbol Q; this program's launch symbols: B"),
        (GOOD, {"B": 2.0}, "symbol B must be an integer"),
    ],
)
def test_01_bad_inputs_and_symbols_are_refused(artifact, inputs, symbols, message):
    program = pdg.runtime.load(artifact)
    with pytest.raises(RunError) as e:
        program.run(inputs, symbols)
    assert message in str(e.value)


def test_02_a_changed_library_is_refused(copy):
    with open(copy / "program.so", "ab") as f:
        f.write(b"\0")
    with pytest.raises(ArtifactError, match="does not match its sha256 in the manifest"):
        pdg.runtime.load(copy)


def test_03_a_missing_part_is_refused(copy):
    (copy / "program.so").unlink()
    with pytest.raises(ArtifactError, match="is missing program.so"):
        pdg.runtime.load(copy)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: m.update(format=99), "has manifest format 99, this runtime reads format 2"),
        (lambda m: m.update(pdg_version="0.0.1"), "was compiled by pdg 0.0.1"),
        (lambda m: m.update(target="riscv64-plan9"), "was compiled for riscv64-plan9"),
    ],
)
def test_04_another_version_or_target_is_refused(copy, edit, message):
    manifest = json.loads((copy / "manifest.json").read_text())
    edit(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match=message):
        pdg.runtime.load(copy)


@pytest.mark.parametrize("garbage", [b"", b"{not json", b"[1, 2]", b"\xff\xfe\x00"])
def test_05_a_damaged_manifest_is_refused(copy, garbage):
    (copy / "manifest.json").write_bytes(garbage)
    with pytest.raises(ArtifactError, match="damaged|format"):
        pdg.runtime.load(copy)


def test_06_not_an_artifact(tmp_path):
    with pytest.raises(ArtifactError, match="is not a pdg artifact"):
        pdg.runtime.load(tmp_path)


def test_07_compiling_twice_gives_the_same_bytes(artifact, tmp_path):
    again = tmp_path / "again.pdgx"
    compile_module(parse_file(str(PROGRAM), make_context()), again)
    for part in ("manifest.json", "program.so"):
        assert (artifact / part).read_bytes() == (again / part).read_bytes()


def _edit(copy, change) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    change(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))


CRAFTED = "(__import__('os').system('touch {marker}'))"


@pytest.mark.parametrize(
    "change",
    [
        # a memory formula that would run code if it were evaluated as Python
        lambda m: m["memory"]["peak"].append([[CRAFTED], 1]),
        lambda m: m["memory"].update(peak=[]),  # a plan of 0 bytes: no limit would hold
        lambda m: m["abi"]["inputs"][0].update(shape=[64]),  # a larger input than compiled
        lambda m: m["abi"]["outputs"][0].update(shape=[None, None, 2]),
        lambda m: m["abi"].update(symbols=[]),  # the entry takes B: it would read garbage
        lambda m: m["symbols"][0].update(max=1 << 40),
        lambda m: m["stores"].pop(),
    ],
    ids=["crafted-formula", "zero-peak", "input-shape", "output-shape", "no-symbols", "max",
         "stores"],
)  # fmt: skip
def test_08_a_manifest_that_differs_from_its_library_is_refused(copy, tmp_path, change):
    """What the compiled code is run with comes from the library's own
    description; a manifest edited after compilation is refused at load,
    before anything of it is used."""
    marker = tmp_path / "ran"
    manifest = json.loads((copy / "manifest.json").read_text())
    change(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest).replace("{marker}", str(marker)))
    with pytest.raises(ArtifactError, match="differs from what program.so was compiled for"):
        pdg.runtime.load(copy)
    assert not marker.exists()


@pytest.mark.parametrize("name", ["../outside.txt", "/etc/hostname", "kernels/../../x", ""])
def test_09_parts_outside_the_artifact_are_refused(copy, name):
    _edit(copy, lambda m: m["parts"].update({name: "0" * 64}))
    with pytest.raises(ArtifactError, match="outside the artifact"):
        pdg.runtime.load(copy)


def test_10_a_part_that_links_outside_is_refused(copy, tmp_path):
    (tmp_path / "secret").write_text("x")
    (copy / "link").symlink_to(tmp_path / "secret")
    _edit(copy, lambda m: m["parts"].update({"link": "0" * 64}))
    with pytest.raises(ArtifactError, match="resolves outside the artifact"):
        pdg.runtime.load(copy)


@pytest.mark.parametrize("key", ["abi", "symbols", "memory", "parts", "stores", "udfs"])
def test_11_a_manifest_missing_a_key_is_refused(copy, key):
    _edit(copy, lambda m: m.pop(key))
    with pytest.raises(ArtifactError):
        pdg.runtime.load(copy)


def test_12_a_library_pdg_did_not_make_is_refused(copy):
    import ctypes.util
    import hashlib

    libm = ctypes.util.find_library("m")
    found = [p for p in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64")
             if libm and (__import__("pathlib").Path(p) / libm).exists()]  # fmt: skip
    if not found:
        pytest.skip("no libm to stand in for a foreign library")
    data = (__import__("pathlib").Path(found[0]) / libm).read_bytes()
    (copy / "program.so").write_bytes(data)
    _edit(copy, lambda m: m["parts"].update({"program.so": hashlib.sha256(data).hexdigest()}))
    with pytest.raises(ArtifactError, match="was not made by this pdg"):
        pdg.runtime.load(copy)


def test_13_a_program_compiled_again_in_place_loads_anew(artifact, tmp_path):
    """The dynamic loader would hand back the library it loaded first from
    the same path: each load gets its own copy."""
    path = tmp_path / "again.pdgx"
    compile_module(parse_file(str(PROGRAM), make_context()), path)
    first = pdg.runtime.load(path)
    source = PROGRAM.read_text().replace(
        "pdg.dim @b < launch B max 4", "pdg.dim @b < launch B max 6"
    )
    assert source != PROGRAM.read_text()
    from pdg.ir import parse_text

    compile_module(parse_text(source, "again", make_context()), path)
    second = pdg.runtime.load(path)
    assert first.launch_symbols["B"]["max"] == 4 and second.launch_symbols["B"]["max"] == 6
    second.run({"x0": np.zeros(6, np.float32)}, {"B": 6})
