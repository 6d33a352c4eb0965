#!/usr/bin/env bash
# One command for the decode benchmark from a fresh clone: sets up pdg
# (tools/setup.sh), installs the baselines (the [bench] extra: PyTorch, JAX,
# matplotlib), then runs bench/decode.py with any arguments given.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
.venv/bin/python -m pip install --quiet --no-build-isolation -e '.[test,bench]'
exec .venv/bin/python bench/decode.py "$@"
