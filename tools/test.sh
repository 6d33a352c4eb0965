#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs every test: lit IR tests, pytest, and the
# pdg-opt mutation fuzzer with a fixed seed. Fails on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
echo "== lit (IR tests)"
.venv/bin/lit -sv test
echo "== pytest"
.venv/bin/python -m pytest
echo "== fuzzer (pdg-opt must never crash)"
.venv/bin/python tools/fuzz_pdg_opt.py --seed 1 --mutants 500
