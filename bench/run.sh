#!/usr/bin/env bash
# Build nccom with the default preset and run the benchmarks.
#
#   bench/run.sh [nccom_bench_init options...]     e.g. --repeat 5 --json out.json
#
# Then runs the network benchmark, bench/net/run.sh (NCCOM_BENCH_SKIP_NET=1
# skips it).
#
# Installs Open MPI (openmpi-bin, libopenmpi-dev) and Gloo (libgloo-dev) first
# when they are missing, so the comparisons have something to compare with. Idempotent: present packages
# are left alone. Benchmarks are not ctest tests.
set -euo pipefail

cd "$(dirname "$0")/.."

packages=(openmpi-bin libopenmpi-dev libgloo-dev)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bench: missing packages: ${missing[*]} (run as root or apt-get install them);" \
         "continuing without Open MPI" >&2
  else
    echo "bench: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi

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
