# Tables for bench/net/run.sh from its "result" lines:
#   result LABEL stream SIZE ITERS SECONDS MBPS
#   result LABEL pingpong SIZE ITERS SECONDS USEC_ONE_WAY MBPS
# With -v charts=DIR, the stream and ping-pong figures also go to
# DIR/stream.csv and DIR/pingpong.csv ("label,bytes,GB/s,us" lines for
# nccom_bench_chart; a stream's time is the time per message, iperf3 is one
# point at its 128 KiB write size), and DIR/manifest names them.
function human(s) {
  if (s >= 1048576) return sprintf("%d MiB", s / 1048576)
  if (s >= 1024) return sprintf("%d KiB", s / 1024)
  return sprintf("%d B", s)
}
# Sorts a[1..n] numerically in place (mawk has no asort).
function sort(a, n,    i, j, t) {
  for (i = 2; i <= n; ++i) {
    t = a[i]
    for (j = i - 1; j >= 1 && a[j] > t; --j) a[j + 1] = a[j]
    a[j + 1] = t
  }
}
function cell(v) { return v == "" ? "-" : v }
function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
$1 == "result" && $3 == "stream" {
  bw[$2, $4] = $7
  if ($2 !~ /^iperf3/ && $2 !~ /^socket-/ && !($4 in ssize)) { ssize[$4] = 1; sizes[++ns] = $4 + 0 }
}
$1 == "result" && $3 == "pingpong" {
  lat[$2, $4] = $7; pbw[$2, $4] = $8; if (!($4 in psize)) { psize[$4] = 1; psizes[++np] = $4 + 0 }
}
function chart_data(   f, g, n, j, i, l, s, all) {
  f = charts "/stream.csv"; g = charts "/pingpong.csv"
  print f "|net plugins: stream, one direction, 16 in flight (GB/s = 1000 MB/s)" >> (charts "/manifest")
  print g "|net plugins: ping-pong (GB/s both directions; time = one-way latency)" >> (charts "/manifest")
  n = split("socket ofi-tcp ofi-shm socket-2x1 socket-4x1 socket-1x2 socket-2x2", all, " ")
  for (j = 1; j <= n; ++j) {
    l = all[j]
    for (i = 1; i <= ns; ++i) {
      s = sizes[i]
      if (bw[l, s] > 0) printf "%s,%d,%s,%s\n", l, s, bw[l, s] / 1000, s / bw[l, s] > f
    }
  }
  n = split("iperf3 iperf3-P2 iperf3-P4", all, " ")
  for (j = 1; j <= n; ++j) {
    l = all[j]
    if (bw[l, 0] > 0) printf "%s,%d,%s,%s\n", l " (128 KiB writes)", 131072, bw[l, 0] / 1000, 131072 / bw[l, 0] > f
  }
  n = split("socket ofi-tcp ofi-shm fi_pingpong-tcp fi_pingpong-shm", all, " ")
  for (j = 1; j <= n; ++j) {
    l = all[j]
    for (i = 1; i <= np; ++i) {
      s = psizes[i]
      if (lat[l, s] != "") printf "%s,%d,%s,%s\n", l, s, pbw[l, s] / 1000, lat[l, s] > g
    }
  }
  close(f); close(g)
}
END {
  sort(sizes, ns)
  sort(psizes, np)
  if (charts != "") chart_data()
  split("socket ofi-tcp ofi-shm", nccom, " ")
  printf "\nStream bandwidth, MB/s (10^6 B/s), one direction, 16 requests in flight\n"
  printf "%-9s %10s %10s %10s\n", "size", "socket", "ofi-tcp", "ofi-shm"
  sort(sizes, ns)
  for (i = 1; i <= ns; ++i) {
    s = sizes[i]
    printf "%-9s %10s %10s %10s\n", human(s), cell(bw["socket", s]), cell(bw["ofi-tcp", s]),
           cell(bw["ofi-shm", s])
  }
  printf "iperf3, one TCP stream over 127.0.0.1: %s MB/s\n", cell(bw["iperf3", 0])

  M = 1048576; G = 64 * M
  printf "\nSeveral streams: the socket plugin with S data sockets x T helper threads per comm\n"
  printf "%-12s %12s %12s %14s %12s %8s %8s\n", "S x T", "1 MiB", "64 MiB", "iperf3 -P", "MB/s", "1 MiB", "64 MiB"
  n = split("socket-2x1:2 socket-4x1:4 socket-1x2:2 socket-2x2:4", multi, " ")
  for (j = 1; j <= n; ++j) {
    split(multi[j], part, ":")
    l = part[1]; p = part[2] == 1 ? "iperf3" : "iperf3-P" part[2]
    printf "%-12s %12s %12s %14s %12s %8s %8s\n", substr(l, 8), cell(bw[l, M]), cell(bw[l, G]), part[2],
           cell(bw[p, 0]), ratio(bw[l, M], bw[p, 0]), ratio(bw[l, G], bw[p, 0])
  }

  printf "\nPing-pong: one-way latency in us (time / 2 iterations) | MB/s (both directions)\n"
  printf "%-9s %17s %17s %17s %21s %21s\n", "size", "socket", "ofi-tcp", "ofi-shm",
         "fi_pingpong tcp;rxm", "fi_pingpong shm"
  sort(psizes, np)
  for (i = 1; i <= np; ++i) {
    s = psizes[i]
    printf "%-9s", human(s)
    n = split("socket ofi-tcp ofi-shm fi_pingpong-tcp fi_pingpong-shm", all, " ")
    for (j = 1; j <= n; ++j) {
      w = j <= 3 ? 17 : 21
      v = lat[all[j], s] == "" ? "-" : sprintf("%.1f | %.1f", lat[all[j], s], pbw[all[j], s])
      printf " %" w "s", v
    }
    printf "\n"
  }

  printf "\nRatios nccom / peer (bandwidth: above 1 is better; latency: below 1 is better)\n"
  printf "%-44s %12s %12s %8s\n", "figure", "nccom", "peer", "ratio"
  n = split("socket ofi-tcp ofi-shm", labels, " ")
  for (j = 1; j <= n; ++j) {
    l = labels[j]
    peer = l == "ofi-shm" ? "fi_pingpong-shm" : "fi_pingpong-tcp"
    for (k = 0; k < 2; ++k) {
      s = k == 0 ? M : G
      printf "%-44s %12s %12s %8s\n", l " stream " human(s) " MB/s vs iperf3", cell(bw[l, s]),
             cell(bw["iperf3", 0]), ratio(bw[l, s], bw["iperf3", 0])
    }
    for (k = 0; k < 2; ++k) {
      s = k == 0 ? M : G
      printf "%-44s %12s %12s %8s\n", l " ping-pong " human(s) " MB/s vs " peer,
             cell(pbw[l, s]), cell(pbw[peer, s]), ratio(pbw[l, s], pbw[peer, s])
    }
    printf "%-44s %12s %12s %8s\n", l " 8 B latency us vs " peer, cell(lat[l, 8]),
           cell(lat[peer, 8]), ratio(lat[l, 8], lat[peer, 8])
  }
}
