"""GRPO as one program, data-parallel on two MPI ranks (run by
tools/test.sh under `mpiexec -n 2`): the program split over the ranks
(GRPOProgram.data_parallel()), compiled in float32, each rank running its
half of every iteration's microbatches, gives the weights the unsplit
program gives on one process over the whole batch (1e-5), the same on
both ranks to the bit, with the same samples."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

MPI = pytest.importorskip("mpi4py.MPI")
pytest.importorskip("torch")  # the GRPO test helpers import it
comm = MPI.COMM_WORLD
RANKS = comm.Get_size()
RANK = comm.Get_rank()


def program():
    from pdg import optim
    from rl.test_grpo_program import build

    # SGD: Adam divides each step by the gradient's size, which turns the
    # rounding of a gradient that is zero in exact arithmetic (attention's
    # key bias) into a step of +-lr whichever way the sums were ordered.
    return build("f32", optim.SGD(0.5), microbatch=2)


def compile_both(grpo) -> dict[str, Path]:
    """The split program and the unsplit one, compiled at once, one by each
    of the first two ranks, into a directory every rank reads; an error on
    either is raised on every rank."""
    from pdg.lowering.artifact import compile_module

    builds = {"split": grpo.data_parallel, "whole": grpo.program.build}
    root = comm.bcast(tempfile.mkdtemp(prefix="pdg-mpi-grpo-") if RANK == 0 else None, root=0)
    paths = {name: Path(root) / f"{name}.pdgx" for name in builds}
    error = None
    for k, name in enumerate(builds):
        if k % RANKS == RANK:
            try:
                compile_module(builds[name](), paths[name], gpu=False)
            except Exception as e:  # every rank must hear of it
                error = f"{name}: {type(e).__name__}: {e}"
    errors = [e for e in comm.allgather(error) if e]
    if errors:
        raise RuntimeError("could not compile " + "; ".join(errors))
    return paths


@pytest.fixture(scope="module")
def artifacts():
    grpo = program()
    paths = compile_both(grpo)
    yield grpo, paths
    comm.Barrier()
    if RANK == 0:
        shutil.rmtree(paths["split"].parent, ignore_errors=True)


def test_two_ranks_take_the_steps_of_one_process(artifacts):
    import pdg.runtime
    from rl.test_grpo_program import prompts

    grpo, paths = artifacts
    weights = grpo.policy.init_weights(seed=1, scale=0.5)
    inputs = grpo.inputs(weights, weights, prompts(3, 8, seed=4, cut=True), seed=9)
    symbols = grpo.symbols(inputs)
    mine = pdg.runtime.load(paths["split"]).run(
        grpo.shard(inputs, RANKS, RANK),
        {**symbols, "P": symbols["P"] // RANKS},
        udfs=grpo.udfs,
        comm=comm,
    )
    whole = pdg.runtime.load(paths["whole"]).run(inputs, symbols, udfs=grpo.udfs)
    final, _ = grpo.training.final_state(mine.outputs)
    expected, _ = grpo.training.final_state(whole.outputs)
    everyone = comm.allgather({p: np.asarray(v) for p, v in final.items()})
    # This rank's samples are its share of the whole batch's.
    share = symbols["P"] // RANKS
    for name in ("reward", "length"):
        got = np.asarray(mine.outputs[name])[0]
        want = np.asarray(whole.outputs[name])[RANK * share : (RANK + 1) * share]
        np.testing.assert_array_equal(got, want)
    for name in ("loss", "kl", "grad_norm"):
        np.testing.assert_allclose(mine.outputs[name], whole.outputs[name], rtol=1e-5, err_msg=name)
    for path in final:
        np.testing.assert_allclose(final[path], expected[path], rtol=0, atol=1e-5, err_msg=path)
    assert any(not np.array_equal(final[p], weights[p]) for p in final)
    for other in everyone:  # every rank took the same steps, to the bit
        for path in final:
            np.testing.assert_array_equal(other[path], everyone[0][path])
