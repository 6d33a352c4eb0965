"""The README's first program runs as written: interpreted (as the README
shows) and compiled, through `pdg compile` and `pdg run` too, with the same
results."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pdg.runtime
from conftest import REPO_ROOT
from pdg.lowering.artifact import compile_module


def readme_block(marker: str) -> str:
    readme = (REPO_ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    (block,) = [b for b in blocks if marker in b]
    return block


def scan_block() -> str:
    return readme_block('pdg.Program("scan")')


def test_the_scan_example_runs_interpreted_and_compiled(tmp_path, monkeypatch):
    a = np.random.default_rng(0).uniform(0.5, 1.5, (2, 4)).astype(np.float32)
    namespace = {"a_array": a}
    exec(scan_block(), namespace)  # noqa: S102 (the README's own code)
    interpreted = namespace["result"]
    compile_module(namespace["prog"].build(), tmp_path / "scan.pdgx", gpu=False)
    ran = pdg.runtime.load(tmp_path / "scan.pdgx").run({"a": a}, {"B": 2})
    assert ran.bounds["T"].tolist() == list(interpreted.bounds["T"])
    for got, want in zip(ran.outputs["y"], interpreted.outputs["y"], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)

    # The README's compile-and-run block, as written, after the scan block.
    namespace["__name__"] = "readme"
    monkeypatch.chdir(tmp_path)
    exec(readme_block("compile_module(module"), namespace)  # noqa: S102
    readme_run = namespace["run"]
    assert readme_run.bounds["T"].tolist() == list(interpreted.bounds["T"])
    assert readme_run.peak_bytes > 0
    for got, want in zip(readme_run.outputs["y"], interpreted.outputs["y"], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)

    # The command lines, on a script that defines `program`.
    script = tmp_path / "scan.py"
    script.write_text(scan_block().split("module = prog.build()")[0] + "program = prog\n")
    np.savez(tmp_path / "in.npz", a=a)
    pdg_cli = [sys.executable, "-m", "pdg.cli.main"]
    subprocess.run([*pdg_cli, "compile", str(script), "-o", str(tmp_path / "cli.pdgx"),
                    "--no-gpu"], check=True, capture_output=True)  # fmt: skip
    done = subprocess.run(
        [*pdg_cli, "run", str(tmp_path / "cli.pdgx"), "--symbols", "B=2",
         "--inputs", str(tmp_path / "in.npz")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"bound T = {interpreted.bounds['T'].tolist()}" in done.stdout
