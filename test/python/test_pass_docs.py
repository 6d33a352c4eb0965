"""docs/passes.md is generated (tools/pass_docs.py) from Passes.td and the
Python pass registry; it must be current and name every pdg pass that
pdg-opt knows, so the reference never drifts from the code."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_01_docs_passes_md_is_current():
    check = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "pass_docs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr


def test_02_every_pass_pdg_opt_lists_has_a_section():
    listed = subprocess.run(
        [str(Path(sys.executable).parent / "pdg-opt"), "--list-passes"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = set(re.findall(r"^\s+--(pdg-[a-z0-9-]+)\s", listed, re.M))
    documented = set(
        re.findall(r"^### (pdg-[a-z0-9-]+)$", (ROOT / "docs" / "passes.md").read_text(), re.M)
    )
    assert len(names) >= 20, names
    assert names == documented, (names - documented, documented - names)


def test_03_every_pass_has_a_lit_test_in_its_level_folder():
    documented = re.findall(
        r"^### (pdg-[a-z0-9-]+)$", (ROOT / "docs" / "passes.md").read_text(), re.M
    )
    levels = [ROOT / "test" / level for level in ("Graph", "Conversion", "Bodies")]
    missing = [n for n in documented if not any((d / f"{n}.mlir").exists() for d in levels)]
    assert not missing, missing
