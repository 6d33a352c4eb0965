#!/usr/bin/env bash
# Creates .venv (Python 3.11) and installs pdg in it, editable, with its test
# dependencies. Build dependencies (pinned in pyproject.toml) are installed
# into the venv first, so that rebuilds after an edit are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3.11}"
if ! command -v "$PYTHON" >/dev/null; then
  echo "setup: $PYTHON not found; pdg needs Python 3.11 (set PYTHON=...)" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# One source of truth for the pins: [build-system].requires.
.venv/bin/python - <<'PY' > .venv/build-requirements.txt
import tomllib
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["build-system"]["requires"]))
PY
.venv/bin/python -m pip install --quiet -r .venv/build-requirements.txt
.venv/bin/python -m pip install --quiet --no-build-isolation -e '.[test]'
echo "setup: pdg installed in .venv ($(.venv/bin/pdg-opt --version | tail -1))"
