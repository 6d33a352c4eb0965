#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs every test: lit IR tests, pytest, and the
# pdg-opt mutation fuzzer with fixed seeds. Fails on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
# One compile cache for the whole run (pdg.lowering.compile_cache): a
# program that several tests, workers, scripts or MPI ranks compile with the
# same options is compiled once. Fresh per run, removed at the end.
PDG_COMPILE_CACHE="$(mktemp -d "${TMPDIR:-/tmp}/pdg-test-compile-cache.XXXXXX")"
export PDG_COMPILE_CACHE
trap 'rm -rf "$PDG_COMPILE_CACHE"' EXIT
echo "== lit (IR tests)"
.venv/bin/lit -sv test
echo "== pytest"
# One worker per core (pytest-xdist): the tests are mostly single-threaded
# compiles, so two workers on two cores halve the wall time. The 25 slowest
# are listed at the end: where to look when the suite outgrows CI's budget.
# Work stealing: a worker that runs out of tests takes the other's pending
# ones, so a few slow end-to-end files do not leave one core idle at the end.
.venv/bin/python -m pytest -n auto --dist worksteal --durations=25
# The compiled collectives on two ranks (the `mpi` extra, which the test
# extra brings): every rank runs test/mpi. Open MPI runs as root only when
# told twice; `timeout` ends a run whose ranks would wait on each other
# (test_grpo_data_parallel.py compiles two GRPO programs, one per rank: a
# few minutes on a busy 2-core machine).
if [ -x .venv/bin/mpiexec ]; then
  echo "== pytest under mpiexec -n 2"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PDG_NUM_THREADS=1 \
    timeout 900 .venv/bin/mpiexec -n 2 --oversubscribe \
    .venv/bin/python -m pytest -p no:cacheprovider -q test/mpi
else
  echo "== skipped: pytest under mpiexec (no .venv/bin/mpiexec: pip install -e '.[mpi]')"
fi
# Four fixed seeds of 400 mutants in every mode: 500 took 51-60 s each on two
# busy cores, so about 3 minutes in all; --time-limit caps each run on a
# slower machine (the mutants run are then a prefix of the 400).
echo "== fuzzer (pdg-opt must never crash)"
for seed in 1 2 3 4; do
  .venv/bin/python tools/fuzz_pdg_opt.py --seed "$seed" --mutants 400 --time-limit 45
done
