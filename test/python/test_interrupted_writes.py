"""Fault injection: `pdg compile` over an existing artifact and a checkpoint
save over an existing checkpoint are interrupted (Ctrl-C, kill -9) at
named points of the write; afterwards the old artifact or checkpoint is
intact and loads (or, once the new one was swapped in, the new one), the
next compile or save works, and what the killed process left is removed.

The points are made deterministic by pdg.atomic_files' test-only hook:
with PDG_TEST_PAUSE_AT=<point> the child says on stderr that it reached
the point and waits there to be signalled."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pdg.runtime
import pytest
from pdg import __version__, atomic_files, optim
from pdg.cli.main import main
from pdg.runtime.manifest import read_manifest

WAIT = 300  # seconds for a child to reach its point (a compile on a busy machine)


class Child:
    """A subprocess whose stderr is read line by line as it comes."""

    def __init__(self, args: list[str], pause_at: str | None = None):
        env = dict(os.environ)
        env.pop(atomic_files.PAUSE_ENV, None)
        # A hit in the run's compile cache would skip the compile's pause points.
        env.pop("PDG_COMPILE_CACHE", None)
        if pause_at:
            env[atomic_files.PAUSE_ENV] = pause_at
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        self.lines: queue.Queue = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, text: str) -> None:
        while True:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                self.proc.kill()
                pytest.fail(f"no '{text}' within {WAIT} s; stderr: {''.join(self.err)}")
            if line is None:
                self.proc.wait()
                pytest.fail(
                    f"exited ({self.proc.returncode}) before '{text}'; stderr: {''.join(self.err)}"
                )
            self.err.append(line)
            if text in line:
                return

    def signal(self, sig: int) -> tuple[int, str]:
        """Sends `sig`; (exit code, what it printed on stderr after that)."""
        seen = len(self.err)
        self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=WAIT)
        while (line := self.lines.get(timeout=WAIT)) is not None:
            self.err.append(line)
        return rc, "".join(self.err[seen:])


def scaled_script(directory, factor: float, before: str = ""):
    script = directory / f"times{factor:g}.py"
    script.write_text(
        before + "import pdg.frontend as pdg\n"
        "program = pdg.Program('scaled')\n"
        "x = program.input('x', (3,), 'f32')\n"
        f"program.output('y', x * {factor})\n"
    )
    return script


def pdg_compile(script, out) -> list[str]:
    command = ["compile", str(script), "--no-gpu", "-o", str(out)]
    return [sys.executable, "-m", "pdg.cli.main", *command]


def output_of(path):
    """y for x = [1, 2, 3], run from a copy of the artifact: a process that
    loaded a library keeps getting it from dlopen for the same path, even
    after the file was replaced."""
    read_manifest(path, __version__)  # every part as compiled
    copy = Path(tempfile.mkdtemp()) / "copy.pdgx"
    shutil.copytree(path, copy)
    try:
        y = pdg.runtime.load(copy).run({"x": np.array([1, 2, 3], np.float32)}).outputs["y"]
    finally:
        shutil.rmtree(copy.parent)
    return y.tolist()


def leftovers_of(directory, pid: int) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if f"~{pid}~" in p.name)


@pytest.fixture
def compiled(tmp_path):
    """An artifact of `y = 2 x` at tmp_path/art/out.pdgx."""
    out = tmp_path / "art" / "out.pdgx"
    assert main(["compile", str(scaled_script(tmp_path, 2)), "--no-gpu", "-o", str(out)]) == 0
    assert output_of(out) == [2, 4, 6]
    return out


# --------------------------------------------------------------------------
# Ctrl-C: `pdg: interrupted`, exit code 130, nothing lost, nothing left
# --------------------------------------------------------------------------


def test_ctrl_c_while_the_program_script_runs(tmp_path, compiled):
    script = scaled_script(
        tmp_path,
        3,
        "import sys, time\nprint('script running', file=sys.stderr, flush=True)\ntime.sleep(600)\n",
    )
    child = Child(pdg_compile(script, compiled))
    child.wait_for("script running")
    rc, err = child.signal(signal.SIGINT)
    assert (rc, err.strip()) == (130, "pdg: interrupted")
    assert output_of(compiled) == [2, 4, 6]
    assert [p.name for p in compiled.parent.iterdir()] == ["out.pdgx"]


def test_ctrl_c_while_writing_the_artifact(tmp_path, compiled):
    child = Child(pdg_compile(scaled_script(tmp_path, 3), compiled), "artifact-library-written")
    child.wait_for("pdg: test pause at artifact-library-written")
    assert len(leftovers_of(compiled.parent, child.proc.pid)) == 1  # the scratch being written
    rc, err = child.signal(signal.SIGINT)
    assert (rc, err.strip()) == (130, "pdg: interrupted")
    assert output_of(compiled) == [2, 4, 6]
    assert [p.name for p in compiled.parent.iterdir()] == ["out.pdgx"]


# --------------------------------------------------------------------------
# kill -9: the old artifact or checkpoint (or the whole new one) survives
# --------------------------------------------------------------------------

ARTIFACT_POINTS = {
    # point: what the path holds after the kill (the old or the new artifact)
    "artifact-library-written": [2, 4, 6],
    "artifact-complete": [2, 4, 6],
    "directory-exchanged": [3, 6, 9],
}


@pytest.mark.parametrize("point", ARTIFACT_POINTS)
def test_kill_during_compile_over_an_artifact(tmp_path, compiled, point):
    if point == "directory-exchanged" and atomic_files._EXCHANGE is None:
        pytest.skip("no renameat2 exchange here")
    child = Child(pdg_compile(scaled_script(tmp_path, 3), compiled), point)
    child.wait_for(f"pdg: test pause at {point}")
    rc, _ = child.signal(signal.SIGKILL)
    assert rc == -signal.SIGKILL
    assert output_of(compiled) == ARTIFACT_POINTS[point]
    assert len(leftovers_of(compiled.parent, child.proc.pid)) == 1
    # The next compile into the same directory works and removes the leftover.
    assert main(["compile", str(scaled_script(tmp_path, 4)), "--no-gpu", "-o", str(compiled)]) == 0
    assert output_of(compiled) == [4, 8, 12]
    assert [p.name for p in compiled.parent.iterdir()] == ["out.pdgx"]


SAVE = (
    "import sys, numpy as np\n"
    "from pdg.optim import save_checkpoint\n"
    "save_checkpoint(sys.argv[1], {'weight/w': np.full(100000, 4.0)}, 4)\n"
)


def test_kill_during_a_checkpoint_save_over_a_checkpoint(tmp_path):
    path = tmp_path / "ckpt" / "run.npz"
    optim.save_checkpoint(path, {"weight/w": np.full(100000, 3.0)}, 3)
    child = Child([sys.executable, "-c", SAVE, str(path)], "checkpoint-written")
    child.wait_for("pdg: test pause at checkpoint-written")
    rc, _ = child.signal(signal.SIGKILL)
    assert rc == -signal.SIGKILL
    arrays, step = optim.load_checkpoint(path)
    assert step == 3 and (arrays["weight/w"] == 3.0).all()
    assert len(leftovers_of(path.parent, child.proc.pid)) == 1  # the complete temporary file
    optim.save_checkpoint(path, {"weight/w": np.full(100000, 5.0)}, 5)
    arrays, step = optim.load_checkpoint(path)
    assert step == 5 and (arrays["weight/w"] == 5.0).all()
    assert [p.name for p in path.parent.iterdir()] == ["run.npz"]
