#!/usr/bin/env bash
# README command 2: what a newcomer runs after the quick start, and the first
# part of CI (.ci/run). In order, each step timed:
#   install what is missing (scripts/deps.sh); check the tree's style
#   (scripts/style.sh --check); build the default preset; check that the build
#   read no header a new machine would lack (scripts/check-deps.sh); run the
#   whole default suite (every test not labelled "long"); list its skips by
#   what the machine lacks, failing on a skip for any other reason
#   (scripts/skips.py, docs/testing.md).
#
#   bash scripts/test.sh                  as above
#   bash scripts/test.sh --preset asan    the build and suite of another preset
#                                         (asan: AddressSanitizer + UBSan; tsan)
#   bash scripts/test.sh --long           the long suites on the default build
#   bash scripts/test.sh --no-setup ...   without deps and the style check
#                                         (.ci/run, which did them already)
# Other arguments go to ctest (e.g. -R Bootstrap). docs/testing.md says how
# long each step takes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh
preset=default
test_preset=
setup=1
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset=$2; shift 2 ;;
    --long) test_preset=long; shift ;;
    --no-setup) setup=0; shift ;;
    -h|--help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
case "$preset" in
  default|asan|tsan) ;;
  *) echo "test.sh: unknown preset '$preset' (default, asan or tsan)" >&2; exit 2 ;;
esac
if [ "$test_preset" = long ] && [ "$preset" != default ]; then
  echo "test.sh: --long runs on the default preset only" >&2
  exit 2
fi
test_preset=${test_preset:-$preset}
build_dir=build
[ "$preset" = default ] || build_dir=build-$preset

if [ "$setup" = 1 ]; then
  run_step "deps: install what is missing" bash scripts/deps.sh
  # First: a tree CI would refuse fails in seconds.
  run_step "style: clang-format check" bash scripts/style.sh --check
fi
# The build's compiler-cache hits, from the log cmake/ccache-launch.sh keeps.
rm -f "$build_dir/ccache-stats.log"
run_step "$preset: configure and build" \
  sh -c "cmake --preset $preset >/dev/null && cmake --build --preset $preset"
if [ -s "$build_dir/ccache-stats.log" ] && command -v ccache >/dev/null; then
  CCACHE_STATSLOG="$build_dir/ccache-stats.log" ccache --show-log-stats |
    sed -n 's/^ *\(Hits\|Misses\): *\([0-9]*\) *\/ *\([0-9]*\).*/\1 \2 \3/p' |
    awk '{v[$1] = $2; n = $3} END {printf "== %s: ccache %d of %d compilations hit\n", "'"$preset"'", v["Hits"], n}'
fi
run_step "$preset: check-deps" bash scripts/check-deps.sh "$build_dir"
junit="$PWD/$build_dir/Testing/junit-$test_preset.xml"
mkdir -p "$(dirname "$junit")"
run_step "$preset: ctest --preset $test_preset" \
  ctest --preset "$test_preset" --output-junit "$junit" "$@"
run_step "$preset: skips by reason" python3 scripts/skips.py "$junit" tests/harness/machine.cc
print_steps
