#!/usr/bin/env bash
# The network benchmark: nccom's net plugins (plugins/socket, and net_neuron
# over tcp;ofi_rxm and over shm) between two processes on 127.0.0.1, driven
# through their ncclNet_v6 tables by nccom_bench_net, next to iperf3 (TCP
# stream bandwidth) and fi_pingpong (libfabric ping-pong, same providers),
# all measured in this one run. Prints the tables and the ratios nccom/peer.
#
#   bench/net/run.sh [--quick]
#
# Environment: NCCOM_NET_BENCH_BUILD_DIR (default: build, configured with the
# default preset when it does not exist yet), NCCOM_NET_BENCH_PORT (first of
# the 3 TCP ports used, default 47700), OUT (directory for the raw results
# and charts; default: a new /tmp directory), NO_BUILD=1 (use what the build
# tree holds, building nothing). Installs iperf3 and libfabric-bin
# when missing (as root; idempotent). Not a ctest test.
set -euo pipefail

cd "$(dirname "$0")/../.."
build=${NCCOM_NET_BENCH_BUILD_DIR:-build}
port=${NCCOM_NET_BENCH_PORT:-47700}
quick=""
[ "${1:-}" = "--quick" ] && quick="--quick"

# --- packages -------------------------------------------------------------------
missing=()
for p in iperf3 libfabric-bin; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bench/net: missing packages: ${missing[*]} (run as root or apt-get install them);" \
         "their columns stay empty" >&2
  else
    echo "bench/net: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# --- build (the benchmark and the two plugins only) ------------------------------
if [ "${NO_BUILD:-0}" != 1 ] && [ ! -f "$build/CMakeCache.txt" ]; then
  if [ "$build" = build ]; then
    cmake --preset default >/dev/null
  else
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
fi
[ "${NO_BUILD:-0}" = 1 ] || cmake --build "$build" --target nccom_bench_net nccom_bench_chart >/dev/null
bench=$build/bin/nccom_bench_net
socket_plugin=$build/lib/nccom/libnccom-net-socket.so
ofi_plugin=$build/lib/libnccom-net.so

if [ -n "${OUT:-}" ]; then
  out=$OUT
  mkdir -p "$out"
else
  out=$(mktemp -d /tmp/nccom-bench-net.XXXXXX)
fi
results=$out/results.txt
: >"$results"
echo "bench/net: raw results in $results" >&2

# Waits (bounded, 10 s) until something listens on TCP port $1.
wait_listen() {
  local hex
  hex=$(printf ':%04X' "$1")
  for _ in $(seq 100); do
    if awk -v p="$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
                        END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "bench/net: nothing listens on port $1" >&2
  return 1
}

# --- nccom -----------------------------------------------------------------------
run_nccom() {  # label, plugin, env...
  local label=$1 plugin=$2
  shift 2
  echo "bench/net: nccom $label" >&2
  if ! env "$@" "$bench" --plugin "$plugin" --label "$label" --device lo $quick >>"$results"; then
    echo "bench/net: nccom $label failed" >&2
  fi
}
run_nccom socket "$socket_plugin"
run_nccom ofi-tcp "$ofi_plugin" FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo
run_nccom ofi-shm "$ofi_plugin" FI_PROVIDER=shm
# The socket plugin with several data sockets per comm (NCCL_NSOCKS_PERTHREAD x
# NCCL_SOCKET_NTHREADS), next to iperf3 -P with as many streams. Stream sizes
# of 1 MiB and more only matter here; the runs are the full ones for simplicity.
run_streams() {  # socks, threads
  local label=socket-$1x$2
  echo "bench/net: nccom $label" >&2
  if ! "$bench" --plugin "$socket_plugin" --label "$label" --device lo --socks "$1" --threads "$2" $quick \
       >>"$results"; then
    echo "bench/net: nccom $label failed" >&2
  fi
}
run_streams 2 1
run_streams 4 1
run_streams 1 2
run_streams 2 2

# --- iperf3: one TCP stream over the loopback -----------------------------------------
if command -v iperf3 >/dev/null; then
  echo "bench/net: iperf3" >&2
  seconds=5
  [ -n "$quick" ] && seconds=1
  for streams in 1 2 4; do
    label=iperf3
    [ "$streams" -gt 1 ] && label=iperf3-P$streams
    iperf3 -s -1 -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
    server=$!
    if wait_listen "$port"; then
      bps=$(iperf3 -c 127.0.0.1 -p "$port" -t "$seconds" -P "$streams" -J 2>/dev/null |
            awk '/"sum_received"/ { f = 1 } f && /"bits_per_second"/ { gsub(/[^0-9.e+]/, "", $2); print $2; exit }')
      [ -n "$bps" ] && awk -v l="$label" -v b="$bps" 'BEGIN { printf "result %s stream 0 0 0 %.3f\n", l, b / 8e6 }' \
        >>"$results"
    fi
    wait "$server" 2>/dev/null || true
  done
fi

# --- fi_pingpong: libfabric's own ping-pong, same providers ----------------------------------
run_pingpong() {  # label, provider, size, iterations, port
  local label=$1 provider=$2 size=$3 iters=$4 p=$5 line
  FI_TCP_IFACE=lo timeout 120 fi_pingpong -p "$provider" -e rdm -I "$iters" -S "$size" -B "$p" \
    >/dev/null 2>&1 &
  local server=$!
  if wait_listen "$p"; then
    line=$(FI_TCP_IFACE=lo timeout 120 fi_pingpong -p "$provider" -e rdm -I "$iters" -S "$size" \
             -P "$p" 127.0.0.1 2>/dev/null | awk '$1 ~ /^[0-9]/ { print; exit }') || true
    # bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
    if [ -n "$line" ]; then
      echo "$line" | awk -v l="$label" -v s="$size" -v i="$iters" \
        '{ t = $5; sub(/s$/, "", t); printf "result %s pingpong %s %s %s %s %s\n", l, s, i, t, $7, $6 }' \
        >>"$results"
    fi
  fi
  wait "$server" 2>/dev/null || true
}
if command -v fi_pingpong >/dev/null; then
  sizes="8:1000 1048576:100 67108864:10"
  [ -n "$quick" ] && sizes="8:100"
  n=1
  for provider in "tcp;ofi_rxm" shm; do
    label=fi_pingpong-${provider%%;*}
    for si in $sizes; do
      echo "bench/net: $label ${si%%:*} B" >&2
      run_pingpong "$label" "$provider" "${si%%:*}" "${si##*:}" $((port + n))
      n=$((n + 1))
    done
  done
fi

# --- tables -------------------------------------------------------------------------------
mkdir -p "$out/charts"
awk -v charts="$out/charts" -f bench/net/report.awk "$results"
bench/chart/render.sh "$build" "$out/charts"
