#!/usr/bin/env bash
# The whole comparison in one command: collectives (bench/coll: nccom-test
# against Open MPI shm/tcp and Gloo) and net plugins (bench/net: against
# iperf3 and fi_pingpong), run one after the other on the same machine, into
# one directory:
#
#   summary.md        what ran where, then every table with its ratios
#                     (nccom / peer; above 1 nccom is faster)
#   coll/, net/       raw outputs, CSV and an SVG chart per table
#                     (coll/charts/*.svg, net/charts/*.svg)
#
#   bench/compare.sh                        # the full run (about 10 min on 2 cores)
#   QUICK=1 bench/compare.sh                # sizes up to 4 MiB, 5 iterations (100 up to 64 KiB, 10 up to 2 MiB), net --quick
#   OUT=/tmp/cmp REPEAT=3 bench/compare.sh  # 3 interleaved rounds of the collectives
#
# Environment: OUT (default: a new /tmp directory), QUICK, NO_BUILD=1 (run
# what build/ holds as it is, e.g. another revision's nccom-test and
# libraries copied in, to compare before and after), and what
# bench/coll/run.sh reads (MIN, MAX, ITERS, WARMUP, REPEAT, CHECK, EIGHT, NET).
# Installs the peers (Open MPI, Gloo, iperf3, libfabric-bin) when missing, as
# root; builds what it runs with the default preset. Not a ctest test. Exit
# status: 0, or 1 when a benchmark failed or found wrong elements.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${OUT:-$(mktemp -d /tmp/nccom-compare.XXXXXX)}
mkdir -p "$out"
case "$out" in /*) ;; *) out=$PWD/$out ;; esac

bench/peers.sh
if [ "${NO_BUILD:-0}" != 1 ]; then
  cmake --preset default >/dev/null
  cmake --build --preset default --target nccom-test nccom_bench_net nccom_bench_chart >/dev/null
  for t in nccom_bench_mpi_coll nccom_bench_gloo_coll; do
    # Present only when their peer's development package is.
    cmake --build --preset default --target "$t" >/dev/null 2>&1 ||
      echo "bench/compare: $t not built; its columns stay empty" >&2
  done
fi

net_args=()
if [ "${QUICK:-0}" = 1 ]; then
  export MAX=${MAX:-4M} ITERS=${ITERS:-5} WARMUP=${WARMUP:-1}
  export SMALL_ITERS=${SMALL_ITERS:-100} SMALL_WARMUP=${SMALL_WARMUP:-10}
  export MID_ITERS=${MID_ITERS:-10} MID_WARMUP=${MID_WARMUP:-2}
  net_args=(--quick)
fi
export CHECK=${CHECK:-0}

status=0
echo "bench/compare: collectives (bench/coll/run.sh), raw in $out/coll" >&2
OUT=$out/coll bench/coll/run.sh >"$out/coll.md" || status=1
echo "bench/compare: net plugins (bench/net/run.sh), raw in $out/net" >&2
OUT=$out/net NCCOM_NET_BENCH_BUILD_DIR=build NO_BUILD=${NO_BUILD:-0} bench/net/run.sh "${net_args[@]}" >"$out/net.md" ||
  status=1

{
  echo "# nccom against its peers"
  echo
  echo "- when: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "- machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo "- ratio = nccom / peer, above 1 nccom is faster (busbw or bandwidth at the same size)"
  echo
  echo "# Collectives"
  cat "$out/coll.md"
  echo
  echo "# Net plugins"
  cat "$out/net.md"
  echo
  echo "# Charts"
  for svg in "$out"/coll/charts/*.svg "$out"/net/charts/*.svg; do
    [ -e "$svg" ] && echo "- ${svg#"$out"/}"
  done
} >"$out/summary.md"
cat "$out/summary.md"
echo "bench/compare: $out/summary.md" >&2
exit "$status"
