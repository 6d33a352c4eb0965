#!/usr/bin/env bash
# Sets up (tools/setup.sh), compiles the sample decode step through pdg-opt
# (verify, dead-node elimination, canonicalization) and prints it, then
# builds the reference decode program with the Python frontend, compiles it
# ahead of time and runs it on the CPU through the runtime, and checks the
# tokens against the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
echo "== pdg-opt examples/decode_step.mlir --pdg-dce --canonicalize"
.venv/bin/pdg-opt examples/decode_step.mlir \
  --pass-pipeline='builtin.module(pdg-dce,canonicalize)'
echo "== examples/decode.py (frontend -> pdg.graph -> compiled artifact -> runtime, CPU)"
.venv/bin/python examples/decode.py --attention window:8 --engine both
