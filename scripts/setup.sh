#!/usr/bin/env bash
# Create .venv and install moot with the given extras (default: local), editable.
#   scripts/setup.sh              the CLI and the embedded model
#   scripts/setup.sh local,dev    plus the test and type-check tools
#
# llama-cpp-python compiles llama.cpp from source. Its default build tunes for the build CPU
# (GGML_NATIVE), and on some x86 machines that build crashes on any multi-token prompt; these
# flags give a portable build that works everywhere we run. Set CMAKE_ARGS yourself to override.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-local}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF}"
.venv/bin/python -m pip install --quiet -e ".[${extras}]"
echo "moot installed in .venv (extras: ${extras})"
