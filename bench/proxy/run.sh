#!/usr/bin/env bash
# The proxy-overhead benchmark, bench/proxy/README.md:
#   1. rate  — slices per second through the NET_NEURON proxy primitives over
#              a zero-cost net, blocks of 1, 64 and 512 slices, ticked
#              directly and through the host's proxy scheduler;
#   2. share — a stream of 1 MiB slices between two ranks over the socket net
#              and libnccom-net (FI_PROVIDER="tcp;ofi_rxm"): time inside the
#              net plugin vs the rest of the time inside the proxy.
#
#   3. stack — the whole path for comparison: two ranks as threads through the
#              reference runtime and libnccom (all-gathers on one ring channel
#              between two emulated hosts), over the zero-cost net as a plugin
#              .so and over the socket net.
#
#   bench/proxy/run.sh [--repeat R] [--json-dir DIR]
#
# Environment: NCCOM_PROXY_BENCH_BUILD_DIR (default: build, configured with
# the default preset when it does not exist yet). Not a ctest test.
set -euo pipefail

cd "$(dirname "$0")/../.."
build=${NCCOM_PROXY_BENCH_BUILD_DIR:-build}
repeat=3
json_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --json-dir) json_dir=$2; shift 2 ;;
    *) echo "bench/proxy/run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ ! -d "$build" ]; then
  cmake --preset default >/dev/null
fi
cmake --build "$build" --target nccom_bench_proxy nccom_bench_proxy_stack

json() { [ -n "$json_dir" ] && echo "--json $json_dir/proxy_$1.json" || true; }
[ -n "$json_dir" ] && mkdir -p "$json_dir"

status=0
echo "## rate: zero-cost net, one thread ticking both ranks"
"$build/bin/nccom_bench_proxy" rate --repeat "$repeat" $(json rate) || status=1
echo
echo "## share: 1 MiB slices, one proxy thread per rank"
"$build/bin/nccom_bench_proxy" share --repeat "$repeat" $(json share) || status=1
echo
echo "## stack: reference runtime + libnccom, 2 ranks as threads on 2 emulated hosts, all-gather"
echo "| net plugin | slice B | slices/op/rank | ops | wall ms | slices/s | µs/op |"
echo "|---|--:|--:|--:|--:|--:|--:|"
for net in "$build/lib/bench/libnccom-net-zero.so" "$build/lib/nccom/libnccom-net-socket.so"; do
  for slices in 1 64 512; do
    case $slices in 1) ops=3000 ;; 64) ops=500 ;; *) ops=100 ;; esac
    "$build/bin/nccom_bench_proxy_stack" "$net" --slices-per-op "$slices" --ops "$ops" || status=1
  done
done
exit $status
