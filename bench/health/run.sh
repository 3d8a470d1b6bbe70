#!/usr/bin/env bash
# The health service's cost and speed, measured in one run:
#
#  1. its cost on the main job: nccom-test all-reduce, 4 ranks on 2 emulated
#     hosts, with the service on and off (NCCOM_HEALTH), runs interleaved;
#     the 8 B time and the largest size's busbw, median of the rounds, and
#     the ratio on/off (1.00 = no cost);
#  2. nccom-ras's answer time against jobs of several sizes (RAS_RANKS,
#     default "4 32"): the wall time of nccom-ras while the job runs, median
#     of RAS_ASKS asks, and the collection time the report states.
#
#   bench/health/run.sh
#   ROUNDS=3 RAS_RANKS="4 32 256" bench/health/run.sh
#
# Environment:
#   NCCOM_HEALTH_BENCH_BUILD_DIR  build tree holding bin/ (default: build)
#   ROUNDS        on/off rounds (default 5; 0: only the answer time)
#   MAX           largest all-reduce size (default 64M); ITERS (default 20)
#   RAS_RANKS     job sizes for the answer time (default "4 32")
#   RAS_ASKS      nccom-ras calls per job size (default 5)
#
# Builds nothing: it expects nccom-test and nccom-ras in <build>/bin. Not a
# ctest test. Exit status 0, or 1 when a run failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${NCCOM_HEALTH_BENCH_BUILD_DIR:-build}
rounds=${ROUNDS:-5}
max=${MAX:-64M}
iters=${ITERS:-20}
ras_ranks=${RAS_RANKS:-4 32}
ras_asks=${RAS_ASKS:-5}
nccom_test=$build/bin/nccom-test
nccom_ras=$build/bin/nccom-ras
for b in "$nccom_test" "$nccom_ras"; do
  [ -x "$b" ] || { echo "bench/health: $b is missing: cmake --build $build --target nccom-test nccom-ras" >&2; exit 1; }
done
out=$(mktemp -d /tmp/nccom-bench-health.XXXXXX)
echo "bench/health: raw outputs in $out" >&2

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# ---- 1. cost on the main job (ROUNDS=0 skips it) -------------------------------
for r in $(seq 1 "$rounds"); do
  for mode in on off; do
    flag=1; [ $mode = off ] && flag=0
    f=$out/coll_${mode}_$r.json
    NCCOM_HEALTH=$flag "$nccom_test" -r 4 -N 2 -b 8 -e "$max" -f 8 -n "$iters" -w 5 --json allr >"$f" 2>"$out/coll_${mode}_$r.err" \
      || { echo "bench/health: nccom-test failed (health $mode, round $r): $(tail -1 "$out/coll_${mode}_$r.err")" >&2; exit 1; }
    python3 - "$f" >>"$out/coll_$mode.txt" <<'PY'
import json, sys
# Rank 0's log lines share stdout with the document: read from its first "{".
text = open(sys.argv[1]).read()
d = json.loads(text[text.index("\n{") + 1 if not text.startswith("{") else 0:])
rows = d["results"][0]["rows"]
print(rows[0]["out_of_place"]["time_us"], rows[-1]["out_of_place"]["busbw_gbps"], rows[-1]["size_bytes"])
PY
  done
done
if [ "$rounds" -gt 0 ]; then
t_on=$(awk '{print $1}' "$out/coll_on.txt" | median); t_off=$(awk '{print $1}' "$out/coll_off.txt" | median)
b_on=$(awk '{print $2}' "$out/coll_on.txt" | median); b_off=$(awk '{print $2}' "$out/coll_off.txt" | median)
largest=$(awk 'NR==1 {print $3}' "$out/coll_on.txt")
echo
echo "## Cost on the main job: all-reduce, 4 ranks on 2 emulated hosts, median of $rounds interleaved rounds"
echo
echo "| figure | health on | health off | on / off |"
echo "|---|---|---|---|"
awk -v a="$t_on" -v b="$t_off" 'BEGIN {printf "| 8 B time (us) | %.1f | %.1f | %.2f |\n", a, b, a / b}'
awk -v a="$b_on" -v b="$b_off" -v s="$largest" 'BEGIN {printf "| %d B busbw (GB/s) | %.3f | %.3f | %.2f |\n", s, a, b, a / b}'
fi

# ---- 2. nccom-ras answer time ---------------------------------------------------
echo
echo "## nccom-ras answer time (median of $ras_asks asks while the job runs)"
echo
echo "| ranks | hosts | wall time of nccom-ras (ms) | collection time reported (ms) |"
echo "|---|---|---|---|"
status=0
for n in $ras_ranks; do
  hosts=$(( n >= 8 ? n / 8 : 2 ))
  [ "$hosts" -gt "$n" ] && hosts=$n
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # A job that lasts: every rank is slowed a little per call (nccom-test's seam).
  NCCOM_RAS_ADDR=127.0.0.1:$port NCCOM_TEST_DEBUG_SLOW_RANK=0:20 \
    "$nccom_test" -r "$n" -N "$hosts" -b 8 -e 8 -n 100000 -w 1 --timeout-ms 600000 allr >"$out/ras_job_$n.out" 2>&1 &
  job=$!
  ready=0
  for _ in $(seq 1 1200); do
    # Steady state: every process there and every rank past its first
    # executions (asked during init, the answer also measures the setup's
    # load: 1.5-3 s at 256 ranks on 2 cores, against 0.3 s once running).
    if "$nccom_ras" -p "$port" 2>/dev/null | grep -q "^nccom health: $n processes" &&
       "$nccom_ras" -p "$port" 2>/dev/null | grep -Eq "proxy executions completed ([3-9]|[1-9][0-9]+)"; then ready=1; break; fi
    kill -0 $job 2>/dev/null || break
    sleep 0.5
  done
  if [ $ready = 0 ]; then
    echo "| $n | $hosts | the job did not come up (see $out/ras_job_$n.out) | |"
    status=1
  else
    : >"$out/ras_$n.txt"
    for _ in $(seq 1 "$ras_asks"); do
      t0=$(date +%s%N)
      "$nccom_ras" -p "$port" >"$out/ras_report_$n.txt"
      t1=$(date +%s%N)
      said=$(sed -n 's/.* in \([0-9]*\) ms$/\1/p' "$out/ras_report_$n.txt" | head -1)
      echo "$(( (t1 - t0) / 1000000 )) $said" >>"$out/ras_$n.txt"
    done
    wall=$(awk '{print $1}' "$out/ras_$n.txt" | median); said=$(awk '{print $2}' "$out/ras_$n.txt" | median)
    echo "| $n | $hosts | $wall | $said |"
  fi
  kill $job 2>/dev/null || true
  wait $job 2>/dev/null || true
done
exit $status
