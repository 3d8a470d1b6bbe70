#!/usr/bin/env bash
# README command 2: install what is missing, build, and run the whole test
# suite (every test not labelled "long").
#   PRESET=asan|tsan bash scripts/test.sh   the same suite under sanitizers
#   bash scripts/test.sh --long             only the long suites (fuzzing, large scales)
# Other arguments go to ctest (e.g. -R Bootstrap).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${PRESET:-default}
test_preset=$preset
if [ "${1:-}" = "--long" ]; then
  test_preset=long
  shift
fi
bash scripts/deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$test_preset" "$@"
