#!/usr/bin/env bash
# The graph-build benchmark: build time and peak memory of the whole-cluster
# graph (simulate_cluster + simulate_rank through the real topology plugins)
# for Trn2 at LNC=2 with 1, 16, 64 and 256 nodes, OLD vs NEW search.
#
#   bench/graphbuild/run.sh [nccom_bench_graph options...]   e.g. --repeat 5 --json out.json
#
# Environment: NCCOM_GRAPH_BENCH_BUILD_DIR (default: build, configured with
# the default preset when it does not exist yet). Not a ctest test.
set -euo pipefail

cd "$(dirname "$0")/../.."
build=${NCCOM_GRAPH_BENCH_BUILD_DIR:-build}
if [ ! -d "$build" ]; then
  cmake --preset default >/dev/null
fi
cmake --build "$build" --target nccom_bench_graph

"$build/bin/nccom_bench_graph" "$@"
