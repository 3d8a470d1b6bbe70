# The tables of bench/coll/run.sh, from its CSV (awk -F, -f report.awk FILE):
# one per (collective, ranks, emulated hosts) that nccom or a peer measured;
# columns: size, nccom's busbw, each peer's busbw (the median over the
# rounds), and nccom / peer. Peers always run on one host, so the 4-rank,
# 2-host table compares against the peers' 4-rank figures. Geometric means
# of the ratios close each table.
#
# With -v charts=DIR, each table's medians also go to DIR/<op>-<ranks>r<hosts>h.csv
# as "impl,bytes,busbw_gbps,time_us" lines for nccom_bench_chart, and
# DIR/manifest gets one "file|title" line per table.

function ratio(a, b) { return (a != "" && b != "" && a + 0 > 0 && b + 0 > 0) ? a / b : "" }
function show(v, fmt) { return v == "" ? "-" : sprintf(fmt, v) }
function human(b) {
  if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
  if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
  return b " B"
}

# The median of the values kept for key k (vals[k, 1..nvals[k]], or
# tvals[...] for the times).
function median(k, times,   n, i, j, v, a) {
  n = nvals[k]
  for (i = 1; i <= n; ++i) a[i] = (times ? tvals[k, i] : vals[k, i]) + 0
  for (i = 2; i <= n; ++i) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; --j) a[j + 1] = a[j]; a[j + 1] = v }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# round,impl,ranks,hosts,op,size_bytes,count,time_us,algbw_gbps,busbw_gbps,wrong
NR > 1 && $10 != "" {
  impl = $2; ranks = $3; hosts = $4; op = $5; size = $6 + 0
  key = op SUBSEP ranks
  if (!((key, size) in seen)) {
    seen[key, size] = 1
    nsizes[key]++
    sizes[key, nsizes[key]] = size
  }
  if (impl != "nccom") hosts = 1
  k = impl SUBSEP op SUBSEP ranks SUBSEP hosts SUBSEP size
  vals[k, ++nvals[k]] = $10
  tvals[k, nvals[k]] = $8
  configs[op, ranks, hosts] = 1
}

END {
  npeers = split("mpi-shm mpi-tcp gloo-tcp", peers, " ")
  nops = split("allr allg", ops, " ")
  name["allr"] = "all-reduce (fp32 sum)"; name["allg"] = "all-gather (fp32)"
  nconf = split("2:1 4:1 4:2 8:2", confs, " ")
  for (o = 1; o <= nops; ++o) {
    for (c = 1; c <= nconf; ++c) {
      split(confs[c], rc, ":"); op = ops[o]; ranks = rc[1]; hosts = rc[2]; key = op SUBSEP ranks
      if (!((op, ranks, hosts) in configs)) continue
      # Sizes in ascending order (insertion sort: a handful of rows).
      n = nsizes[key]
      for (i = 1; i <= n; ++i) s[i] = sizes[key, i]
      for (i = 2; i <= n; ++i) { v = s[i]; for (j = i - 1; j >= 1 && s[j] > v; --j) s[j + 1] = s[j]; s[j + 1] = v }

      printf "\n## %s, %d ranks on %d %s: busbw (GB/s); ratio = nccom / peer (> 1: nccom faster)\n",
             name[op], ranks, hosts, hosts == 1 ? "host" : "emulated hosts"
      printf "%10s  %10s", "size", "nccom"
      for (p = 1; p <= npeers; ++p) printf "  %10s", peers[p]
      for (p = 1; p <= npeers; ++p) printf "  %10s", "/" peers[p]
      printf "\n"
      for (p = 1; p <= npeers; ++p) { logsum[p] = 0; cnt[p] = 0; biglog[p] = 0; bigcnt[p] = 0 }
      if (charts != "") {
        chart = charts "/" op "-" ranks "r" hosts "h.csv"
        printf "%s|%s, %d ranks on %d %s (peers on one host)\n", chart, name[op], ranks, hosts,
               hosts == 1 ? "host" : "emulated hosts" >> (charts "/manifest")
        for (i = 1; i <= n; ++i) {
          for (p = 0; p <= npeers; ++p) {
            impl = p == 0 ? "nccom" : peers[p]
            k = impl SUBSEP op SUBSEP ranks SUBSEP (p == 0 ? hosts : 1) SUBSEP s[i]
            if (k in nvals) printf "%s,%d,%s,%s\n", impl, s[i], median(k, 0), median(k, 1) > chart
          }
        }
        close(chart)
      }
      for (i = 1; i <= n; ++i) {
        size = s[i]
        k = "nccom" SUBSEP op SUBSEP ranks SUBSEP hosts SUBSEP size
        mine = (k in nvals) ? median(k) : ""
        printf "%10s  %10s", human(size), show(mine, "%.4g")
        for (p = 1; p <= npeers; ++p) {
          k = peers[p] SUBSEP op SUBSEP ranks SUBSEP 1 SUBSEP size
          v = (k in nvals) ? median(k) : ""
          printf "  %10s", show(v, "%.4g")
          r[p] = ratio(mine, v)
        }
        for (p = 1; p <= npeers; ++p) {
          printf "  %10s", show(r[p], "%.3g")
          if (r[p] != "") {
            logsum[p] += log(r[p]); cnt[p]++
            if (size >= 1048576) { biglog[p] += log(r[p]); bigcnt[p]++ }
          }
        }
        printf "\n"
      }
      printf "%10s  %10s", "geomean", ""
      for (p = 1; p <= npeers; ++p) printf "  %10s", ""
      for (p = 1; p <= npeers; ++p) printf "  %10s", cnt[p] ? sprintf("%.3g", exp(logsum[p] / cnt[p])) : "-"
      printf "\n%10s  %10s", ">= 1 MiB", ""
      for (p = 1; p <= npeers; ++p) printf "  %10s", ""
      for (p = 1; p <= npeers; ++p) printf "  %10s", bigcnt[p] ? sprintf("%.3g", exp(biglog[p] / bigcnt[p])) : "-"
      printf "\n"
    }
  }
}
