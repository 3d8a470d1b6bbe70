#!/usr/bin/env bash
# README command 2 (and CI, through .ci/run): install what is missing; check
# the tree's style (scripts/style.sh --check); then
# for each preset build, check that the build read no header a new machine
# would lack (scripts/check-deps.sh), lint the tree once the default build is
# there (scripts/lint.sh), and run the whole test suite (every test not
# labelled "long"):
#   bash scripts/test.sh                    default, then asan (AddressSanitizer + UBSan)
#   PRESET=tsan bash scripts/test.sh        one preset only (default, asan or tsan)
#   bash scripts/test.sh --long             the long suites (fuzzing, large scales),
#                                           then the whole suite under tsan
# Other arguments go to ctest (e.g. -R Bootstrap). Each preset's wall time is
# printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
long=0
if [ "${1:-}" = "--long" ]; then
  long=1
  shift
fi
if [ -n "${PRESET:-}" ]; then
  presets=$PRESET
elif [ "$long" = 1 ]; then
  presets="default tsan"
else
  presets="default asan"
fi
bash scripts/deps.sh
# The style check first: a tree CI would refuse fails in seconds.
bash scripts/style.sh --check
summary=()
for preset in $presets; do
  start=$(date +%s)
  build_dir=build
  if [ "$preset" != default ]; then
    build_dir=build-$preset
  fi
  test_preset=$preset
  if [ "$long" = 1 ] && [ "$preset" = default ]; then
    test_preset=long
  fi
  echo "== $preset: configure, build, check-deps, ctest --preset $test_preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  bash scripts/check-deps.sh "$build_dir"
  # The lint reads the default build's compile commands (and its generated
  # headers), so it runs once that build is there.
  if [ "$preset" = default ]; then bash scripts/lint.sh; fi
  ctest --preset "$test_preset" "$@"
  summary+=("$preset: $(( $(date +%s) - start )) s")
done
printf '== %s\n' "${summary[@]}"
