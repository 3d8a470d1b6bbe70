#!/usr/bin/env bash
# The collective benchmark: all-reduce (fp32 sum) and all-gather (fp32) bus
# bandwidth of nccom (nccom-test: 2 and 4 ranks on one host, 4 ranks on 2
# emulated hosts) next to Open MPI (mpirun, shared memory and TCP) and Gloo
# (TCP), all measured in this one run on the same sizes. Prints one table per
# (collective, ranks) with the ratios nccom/peer; writes every row as CSV,
# and an SVG chart per table (busbw and time against size, nccom and each
# peer) when nccom_bench_chart is built.
#
#   bench/coll/run.sh
#   MAX=4M ITERS=5 WARMUP=1 bench/coll/run.sh      # a short run
#
# Environment:
#   NCCOM_COLL_BENCH_BUILD_DIR  build tree holding bin/, relative to the repository (default: build)
#   MIN, MAX                    size range, K/M/G suffixes (default 8, 64M); factor 2
#   ITERS, WARMUP               timed / warmup iterations per size (default 20, 5)
#   SMALL_MAX                   sizes up to this one run in a pass of their own with
#   SMALL_ITERS, SMALL_WARMUP   SMALL_ITERS / SMALL_WARMUP iterations (default 64K, 1000,
#                               100): a call of 1 us-2 ms timed 20 times measures the
#                               scheduler more than the library
#   MID_MAX                     the sizes above SMALL_MAX up to this one likewise, with
#   MID_ITERS, MID_WARMUP       MID_ITERS / MID_WARMUP iterations (default 2M, 100, 20):
#                               20 calls of 0.3-5 ms with 8 processes on 2 cores moved
#                               these rows by up to 2x between runs. SMALL_ITERS=0 or
#                               MID_ITERS=0: those sizes join the next pass
#   NET                         nccom-test --net (socket|ofi); default: nccom's config
#   CHECK                       1: nccom-test --check (default; most of its run time
#                               at large sizes), 0: without (the peers always check)
#   RESULTS                     CSV file to write (default: in a new /tmp directory)
#   REPEAT                      rounds of every run, interleaved; tables show the
#                               median per row (default 1; 3 on a loaded machine)
#   RUN_TIMEOUT                 bound of each run in seconds (default 1800)
#   EIGHT                       1: also 8 ranks (nccom on 2 emulated hosts, Open MPI tcp;
#                               default), 0: not
#   OUT                         directory for the raw outputs and charts (default: a new
#                               /tmp directory)
#
# Builds nothing: it expects `cmake --build <build> --target nccom-test
# nccom_bench_mpi_coll nccom_bench_gloo_coll` to have been run, and says so
# for any binary that is missing (its columns then stay empty). Not a ctest
# test. Exit status: 0, or 1 when a run failed or found wrong elements.
set -euo pipefail

results=${RESULTS:-}
[ -n "$results" ] && [ "${results#/}" = "$results" ] && results=$PWD/$results  # relative to the caller
cd "$(dirname "$0")/../.."
build=${NCCOM_COLL_BENCH_BUILD_DIR:-build}
min=${MIN:-8}
max=${MAX:-64M}
iters=${ITERS:-20}
warmup=${WARMUP:-5}
run_timeout=${RUN_TIMEOUT:-1800}
repeat=${REPEAT:-1}
check=()
[ "${CHECK:-1}" = 0 ] || check=(--check)
small_max=${SMALL_MAX:-64K}
small_iters=${SMALL_ITERS:-1000}
small_warmup=${SMALL_WARMUP:-100}
mid_max=${MID_MAX:-2M}
mid_iters=${MID_ITERS:-100}
mid_warmup=${MID_WARMUP:-20}
for v in repeat run_timeout; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench/coll: ${v^^} must be a positive integer, not '${!v}'" >&2; exit 2; }
done
for v in small_iters small_warmup mid_iters mid_warmup; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "bench/coll: ${v^^} must be an integer >= 0, not '${!v}'" >&2; exit 2; }
done

# Sets the variable named $1 to the bytes of size $3 (8, 4K, 64M, 1G), which
# the variable $2 gave; not in a $(…) subshell, so a bad size ends the run.
bytes() {  # result variable, name of the setting, size
  local n=${3%[KkMmGg]} shift=0
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench/coll: $2=$3 is not a size (digits, then K, M or G)" >&2; exit 2; }
  case ${3: -1} in K | k) shift=10 ;; M | m) shift=20 ;; G | g) shift=30 ;; esac
  printf -v "$1" '%d' $((n << shift))
}
bytes min_b MIN "$min"
bytes max_b MAX "$max"
bytes small_b SMALL_MAX "$small_max"
bytes mid_b MID_MAX "$mid_max"
# The passes, as the tools' size arguments: the factor-2 series from MIN cut
# at SMALL_MAX and MID_MAX, each part with its own iteration counts (a part
# with 0 iterations joins the next one).
passes=()
first=$min_b
for part in "$small_b $small_iters $small_warmup" "$mid_b $mid_iters $mid_warmup"; do
  read -r limit n w <<<"$part"
  if [ "$n" -eq 0 ] || [ "$first" -gt "$limit" ] || [ "$first" -gt "$max_b" ]; then continue; fi
  last=$first
  while [ $((last * 2)) -le "$limit" ] && [ $((last * 2)) -le "$max_b" ]; do last=$((last * 2)); done
  passes+=("-b $first -e $last -f 2 -n $n -w $w")
  first=$((last * 2))
done
[ "$first" -le "$max_b" ] && passes+=("-b $first -e $max_b -f 2 -n $iters -w $warmup")

if [ -n "${OUT:-}" ]; then
  out=$OUT
  mkdir -p "$out"
else
  out=$(mktemp -d /tmp/nccom-bench-coll.XXXXXX)
fi
csv=${results:-$out/results.csv}
echo "round,impl,ranks,hosts,op,size_bytes,count,time_us,algbw_gbps,busbw_gbps,wrong" >"$csv"
echo "bench/coll: raw outputs in $out, CSV in $csv" >&2
status=0

nccom_test=$build/bin/nccom-test
mpi_coll=$build/bin/nccom_bench_mpi_coll
gloo_coll=$build/bin/nccom_bench_gloo_coll

# Says once what is missing and how to get it; returns 1 then.
have() {  # path, how to get it
  [ -x "$1" ] && return 0
  echo "bench/coll: $(basename "$1") missing ($1): $2; its columns stay empty" >&2
  return 1
}
have_nccom=0 have_mpi=0 have_gloo=0
have "$nccom_test" "cmake --build $build --target nccom-test" && have_nccom=1
if ! command -v mpirun >/dev/null; then
  echo "bench/coll: mpirun missing: apt-get install openmpi-bin; its columns stay empty" >&2
else
  have "$mpi_coll" "apt-get install libopenmpi-dev, then cmake --build $build --target nccom_bench_mpi_coll" &&
    have_mpi=1
fi
have "$gloo_coll" "apt-get install libgloo-dev, then cmake --build $build --target nccom_bench_gloo_coll" &&
  have_gloo=1
if [ $((have_nccom + have_mpi + have_gloo)) -eq 0 ]; then
  echo "bench/coll: nothing to run in $build (set NCCOM_COLL_BENCH_BUILD_DIR?)" >&2
  exit 1
fi

# Rows of mpi_coll / gloo_coll ("allr <size> <count> fp32 <time> <algbw> <busbw> <wrong>") as CSV.
peer_rows_to_csv() {  # impl, ranks, raw file
  awk -v round="$round" -v impl="$1" -v n="$2" '$1 ~ /^(allr|allg)$/ && $2 ~ /^[0-9]+$/ {
    printf "%s,%s,%s,1,%s,%s,%s,%s,%s,%s,%s\n", round, impl, n, $1, $2, $3, $5, $6, $7, $8 }' "$3" >>"$csv"
}

# nccom-test --json (schema 2) as CSV, out-of-place figures. Splitting on "{"
# leaves one piece per object, whatever the line breaks: an operation's piece
# holds "op", a row's "size_bytes", and the piece after a row is its
# out-of-place timing (or the row says "out_of_place": null: not run).
nccom_json_to_csv() {  # ranks, hosts, raw file
  awk -v round="$round" -v n="$1" -v h="$2" '
    function val(piece, key,   m) {
      if (!match(piece, "\"" key "\": *[^,}]*")) return ""
      m = substr(piece, RSTART, RLENGTH); sub(/^"[^"]*": */, "", m); gsub(/"/, "", m); return m
    }
    { doc = doc " " $0 }
    END {
      if (doc !~ /"schema": *2[,} ]/) { print "bench/coll: nccom-test JSON is not schema 2" > "/dev/stderr"; exit 1 }
      k = split(doc, pieces, "{")
      for (i = 1; i <= k; ++i) {
        p = pieces[i]
        if (p ~ /"op":/) op = val(p, "op")
        if (p ~ /"size_bytes":/ && p !~ /"out_of_place": *null/ && i < k) {
          t = pieces[i + 1]
          w = val(t, "wrong"); if (w == "null") w = ""
          printf "%s,nccom,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", round, n, h, op, val(p, "size_bytes"), val(p, "count"),
                 val(t, "time_us"), val(t, "algbw_gbps"), val(t, "busbw_gbps"), w
        }
      }
    }' "$3" >>"$csv"
}

# One pass of sizes ($p numbers the raw files, sizes holds the tools'
# arguments); each_pass runs a *_pass function over every pass in turn.
each_pass() {  # function, its arguments
  local p sizes
  for p in "${!passes[@]}"; do
    read -ra sizes <<<"${passes[$p]}"
    "$@"
  done
}

nccom_pass() {  # ranks, hosts
  local raw=$out/$round.$p-nccom-r$1-N$2.json net=()
  [ -n "${NET:-}" ] && net=(--net "$NET")
  echo "bench/coll: nccom-test -r $1 -N $2 ${sizes[*]}" >&2
  if ! timeout "$run_timeout" "$nccom_test" -r "$1" -N "$2" "${sizes[@]}" -d fp32 "${check[@]}" --json \
       "${net[@]}" allr allg >"$raw" 2>"$out/$round.$p-nccom-r$1-N$2.err"; then
    echo "bench/coll: nccom-test -r $1 -N $2 failed; see $out/$round.$p-nccom-r$1-N$2.err" >&2
    tail -n 3 "$out/$round.$p-nccom-r$1-N$2.err" >&2 || true
    status=1
  fi
  if [ -s "$raw" ]; then
    nccom_json_to_csv "$1" "$2" "$raw" || status=1
  fi
}
run_nccom() {
  [ "$have_nccom" = 1 ] || return 0
  each_pass nccom_pass "$@"
}

mpi_pass() {  # ranks, label (shm|tcp)
  local raw=$out/$round.$p-mpi-$2-np$1.txt btl=(--mca btl "self,vader") root=()
  [ "$2" = tcp ] && btl=(--mca btl "self,tcp" --mca btl_tcp_if_include lo)
  [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
  echo "bench/coll: mpirun -np $1 ($2) ${sizes[*]}" >&2
  # pml ob1 so the btl list is what carries the data (not the cm pml's
  # libfabric MTL); no binding, as nccom's and Gloo's ranks are not bound.
  if ! timeout "$run_timeout" mpirun "${root[@]}" --oversubscribe --bind-to none -np "$1" \
       --mca pml ob1 "${btl[@]}" --mca oob_tcp_if_include lo \
       "$mpi_coll" "${sizes[@]}" allr allg >"$raw" 2>"$out/$round.$p-mpi-$2-np$1.err"; then
    # Open MPI 4.x may exit 1 after a complete run (bench/RESULTS.md):
    # the rows it printed are kept; the warning says how many.
    echo "bench/coll: mpirun -np $1 ($2) exited non-zero after $(grep -c '^ *all' "$raw") rows;" \
         "see $out/$round.$p-mpi-$2-np$1.err" >&2
    grep -q 'Wrong elements : 0 OK' "$raw" || status=1
  fi
  peer_rows_to_csv "mpi-$2" "$1" "$raw"
}
run_mpi() {
  [ "$have_mpi" = 1 ] || return 0
  each_pass mpi_pass "$@"
}

gloo_pass() {  # ranks
  local raw=$out/$round.$p-gloo-np$1.txt store pids=() r rc failed=0
  store=$(mktemp -d "$out/$round.$p-gloo-store.XXXXXX")  # a fresh FileStore per run
  echo "bench/coll: gloo -np $1 ${sizes[*]}" >&2
  for ((r = 0; r < $1; ++r)); do
    if [ "$r" -eq 0 ]; then
      timeout "$run_timeout" "$gloo_coll" --rank 0 --size "$1" --store "$store" "${sizes[@]}" allr allg \
        >"$raw" 2>"$out/$round.$p-gloo-np$1-rank0.err" &
    else
      timeout "$run_timeout" "$gloo_coll" --rank "$r" --size "$1" --store "$store" "${sizes[@]}" allr allg \
        >/dev/null 2>"$out/$round.$p-gloo-np$1-rank$r.err" &
    fi
    pids+=($!)
  done
  # The first rank to fail stops the others (they would wait for it until timeout).
  for ((r = 0; r < $1; ++r)); do
    rc=0
    wait -n || rc=$?  # only the ranks run in the background here
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
      failed=1
      echo "bench/coll: a gloo rank exited $rc; stopping the others; see $out/$round.$p-gloo-np$1-rank*.err" >&2
      kill "${pids[@]}" 2>/dev/null || true
    fi
  done
  [ "$failed" -eq 0 ] || status=1
  peer_rows_to_csv gloo-tcp "$1" "$raw"
}

run_gloo() {
  [ "$have_gloo" = 1 ] || return 0
  each_pass gloo_pass "$@"
}

# Interleaved (by rank count, then by round), so drift in the machine's load
# hits every side alike.
echo "bench/coll: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((round = 1; round <= repeat; ++round)); do
  [ "$repeat" -gt 1 ] && echo "bench/coll: round $round of $repeat" >&2
  run_nccom 2 1
  run_mpi 2 shm
  run_mpi 2 tcp
  run_gloo 2
  run_nccom 4 1
  run_nccom 4 2
  run_mpi 4 shm
  run_mpi 4 tcp
  run_gloo 4
  if [ "${EIGHT:-1}" = 1 ]; then
    run_nccom 8 2
    run_mpi 8 tcp
  fi
done
echo "bench/coll: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

charts=$out/charts
mkdir -p "$charts"
awk -F, -v charts="$charts" -f bench/coll/report.awk "$csv"
bench/chart/render.sh "$build" "$charts"
awk -F, 'NR > 1 && $11 != "" && $11 != 0 { bad = 1 } END { exit bad }' "$csv" || {
  echo "bench/coll: some rows have wrong elements (last CSV column)" >&2
  status=1
}
echo "bench/coll: CSV in $csv" >&2
exit "$status"
