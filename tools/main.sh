#!/usr/bin/env bash
# Sets up (tools/setup.sh), then compiles the sample decode program through
# pdg-opt (verify, dead-node elimination, canonicalization) and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
.venv/bin/pdg-opt examples/decode_step.mlir \
  --pass-pipeline='builtin.module(pdg-dce,canonicalize)'
