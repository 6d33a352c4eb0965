"""The runtime needs only NumPy and the standard library: a fresh venv
holding nothing but NumPy and the `pdg.runtime` sources (no MLIR, no
islpy, no pdg extension) loads an artifact the full toolchain compiled
and runs it."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
import venv
from pathlib import Path

import numpy as np
from conftest import REPO_ROOT
from pdg.ir import make_context, parse_file
from pdg.lowering.artifact import compile_module

PROGRAM = REPO_ROOT / "test" / "Conversion" / "pdg-lower-to-loops.mlir"


def test_01_a_venv_with_only_numpy_runs_an_artifact(tmp_path):
    artifact = tmp_path / "loops.pdgx"
    compile_module(parse_file(str(PROGRAM), make_context()), artifact)

    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    site = next(env.glob("lib/python*/site-packages"))
    numpy_dir = Path(np.__file__).parent
    shutil.copytree(numpy_dir, site / "numpy")
    libs = numpy_dir.parent / "numpy.libs"
    if libs.is_dir():
        shutil.copytree(libs, site / "numpy.libs")
    package = REPO_ROOT / "python" / "pdg"
    (site / "pdg").mkdir()
    shutil.copy(package / "__init__.py", site / "pdg" / "__init__.py")
    shutil.copytree(
        package / "runtime", site / "pdg" / "runtime", ignore=shutil.ignore_patterns("__pycache__")
    )

    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(f"""
        import importlib.util, sys
        import numpy as np
        import pdg.runtime
        assert importlib.util.find_spec("mlir") is None, "mlir is importable"
        program = pdg.runtime.load({str(artifact)!r})
        result = program.run({{"x0": np.array([0.0, 9.5, -20.0], np.float32)}}, {{"B": 3}})
        assert result.bounds["T"].tolist() == [8, 2, 21], result.bounds
        assert [len(w) for w in result.outputs["w"]] == [8, 2, 21]
        assert not any(m.startswith(("mlir", "islpy")) for m in sys.modules)
        print("ran without mlir")
    """)
    )
    python = env / "bin" / "python"
    done = subprocess.run(
        [str(python), "-I", str(script)], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "ran without mlir" in done.stdout
