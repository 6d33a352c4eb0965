"""One rank of the MPI failure tests (test_mpi_failures.py), started by
mpiexec: runs the artifact ARGV[1] on MPI.COMM_WORLD. Rank 1 fails, as
ARGV[2] says: `raise` raises in Python before its run (rank 0 is then
waiting in the compiled all-reduce), `udf` makes its udf raise during
the run (the runtime's stop path), `shape` gives it an input of the
wrong shape (refused before its run)."""

import sys

import numpy as np
import pdg.runtime
from mpi4py import MPI

comm = MPI.COMM_WORLD
program = pdg.runtime.load(sys.argv[1])
mode = sys.argv[2]


def score(x):
    if mode == "udf" and comm.Get_rank() == 1:
        raise ValueError("no score on rank 1")
    return x


if mode == "raise" and comm.Get_rank() == 1:
    raise RuntimeError("rank 1 failed before its run")
width = 5 if mode == "shape" and comm.Get_rank() == 1 else 4
result = program.run({"x": np.ones((1, width), np.float32)}, udfs={"score": score}, comm=comm)
print("finished", comm.Get_rank(), result.outputs["total"], flush=True)
