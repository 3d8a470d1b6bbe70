#!/usr/bin/env bash
# Build nccom with the default preset and run the benchmarks.
#
#   bench/run.sh [nccom_bench_init options...]     e.g. --repeat 5 --json out.json
#
# Then runs the network benchmark, bench/net/run.sh (NCCOM_BENCH_SKIP_NET=1
# skips it).
#
# Installs the peers first when they are missing (bench/peers.sh: Open MPI,
# Gloo, iperf3, fi_pingpong), so the comparisons have something to compare
# with. Benchmarks are not ctest tests. bench/compare.sh runs only the
# comparisons (collectives and net plugins) into one summary.
set -euo pipefail

cd "$(dirname "$0")/.."

bench/peers.sh

# Configure every time: find_program(mpicc) searches again while it is
# NOTFOUND, so a freshly installed Open MPI is picked up.
cmake --preset default >/dev/null
cmake --build --preset default

./build/bin/nccom_bench_init "$@"

# The network benchmark: net plugins vs iperf3 / fi_pingpong (bench/net/run.sh
# installs those when missing). NCCOM_BENCH_SKIP_NET=1 skips it.
if [ "${NCCOM_BENCH_SKIP_NET:-0}" != 1 ]; then
  NCCOM_NET_BENCH_BUILD_DIR=build bench/net/run.sh
fi

# The graph-build benchmark (bench/graphbuild/run.sh): Trn2 LNC=2, 1..256 nodes,
# OLD vs NEW search. NCCOM_BENCH_SKIP_GRAPH=1 skips it.
if [ "${NCCOM_BENCH_SKIP_GRAPH:-0}" != 1 ]; then
  NCCOM_GRAPH_BENCH_BUILD_DIR=build bench/graphbuild/run.sh
fi

# Collectives: nccom-test against Open MPI (shm, tcp) and Gloo (bench/coll/run.sh).
# NCCOM_BENCH_SKIP_COLL=1 skips it.
if [ "${NCCOM_BENCH_SKIP_COLL:-0}" != 1 ]; then
  NCCOM_COLL_BENCH_BUILD_DIR=build bench/coll/run.sh
fi

# The proxy's overhead (bench/proxy/run.sh). NCCOM_BENCH_SKIP_PROXY=1 skips it.
if [ "${NCCOM_BENCH_SKIP_PROXY:-0}" != 1 ]; then
  bench/proxy/run.sh
fi
