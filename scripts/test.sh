#!/usr/bin/env bash
# README command 2: install what is missing, build, and run the whole test
# suite (ctest's default labels; `scripts/test.sh -L long` adds the long ones).
# PRESET=asan or PRESET=tsan runs the same suite under sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${PRESET:-default}
bash scripts/deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" "$@"
