"""`pdg run` under mpiexec: each process runs one rank on MPI.COMM_WORLD
with its own files ({rank} in --inputs and --out), and a mistake on one
rank stops both. Skipped without the `mpi` extra."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pdg.frontend as pf
import pytest
from mpi_launch import has_mpi, mpi_command, mpi_env
from pdg.lowering.artifact import compile_module

pytestmark = pytest.mark.skipif(not has_mpi(), reason="needs the mpi extra (mpi4py, mpiexec)")

PDG = [sys.executable, "-m", "pdg.cli.main"]


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    prog = pf.Program("ranks_sum")
    w = prog.dim("w", world="W")
    x = prog.input("x", (3,), "f64", domain=[w])
    prog.output("total", pf.all_reduce(x * 2.0, over=w))
    prog.output("mine", x + 1.0)
    path = tmp_path_factory.mktemp("cli") / "sum.pdgx"
    compile_module(prog.build(), path, gpu=False)
    return path


def shards(tmp_path, ranks=2):
    for r in range(ranks):
        np.savez(tmp_path / f"in{r}.npz", x=np.array([[r, 10 * r, 1.0]]))


def run(ranks, *args, cwd):
    command = mpi_command(ranks, *PDG, "run", *args)
    return subprocess.run(
        command, env=mpi_env(), capture_output=True, text=True, timeout=90, cwd=cwd
    )


def test_each_rank_reads_and_writes_its_own_files(artifact, tmp_path):
    shards(tmp_path)
    done = run(2, str(artifact), "--inputs", "in{rank}.npz", "--out", "out{rank}.npz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("total") == 1  # rank 0's summary only
    for r in range(2):
        got = np.load(tmp_path / f"out{r}.npz")
        np.testing.assert_array_equal(got["total"], [2.0, 20.0, 4.0])  # 2 * (x0 + x1)
        np.testing.assert_array_equal(got["mine"], [[r + 1, 10 * r + 1, 2.0]])


def test_a_missing_file_on_one_rank_stops_both(artifact, tmp_path):
    shards(tmp_path, ranks=1)  # no in1.npz
    done = run(2, str(artifact), "--inputs", "in{rank}.npz", cwd=tmp_path)
    assert done.returncode != 0
    assert "pdg: rank 1 of 2: cannot read --inputs in1.npz" in done.stderr
    assert "Traceback" not in done.stderr


def test_one_output_file_for_several_ranks_is_refused(artifact, tmp_path):
    shards(tmp_path)
    done = run(2, str(artifact), "--inputs", "in{rank}.npz", "--out", "out.npz", cwd=tmp_path)
    assert done.returncode != 0
    assert "put {rank} in the name" in done.stderr
    assert not (tmp_path / "out.npz").exists()
