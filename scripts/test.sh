#!/usr/bin/env bash
# README command 2: install what is missing, build, check that the build read
# no header a new machine would lack (scripts/check-deps.sh), and run the
# whole test suite (every test not labelled "long").
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
build_dir=build
if [ "$preset" != default ]; then
  build_dir=build-$preset
fi
bash scripts/deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
bash scripts/check-deps.sh "$build_dir"
ctest --preset "$test_preset" "$@"
