// nccl-tests' table and the --json document (see report.h and
// docs/tools/nccom-test.md, "Output").
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nccom::nccomtest {
namespace {

namespace eng = nrt_emu::engine;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// nccl-tests' time column: two decimals while they fit in 7 characters.
std::string time_text(double us) {
  if (us < 10000) return fmt("%.2f", us);
  if (us < 1000000) return fmt("%.1f", us);
  return fmt("%.0f", us);
}

// The algo column's width: the longest name nrt_emu_ccom_algorithm gives.
constexpr int kAlgoWidth = 9;  // "kangaring"

// The algo column (--show-algorithm), after #wrong in each group.
std::string algo_cell(const std::string& text) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "  %*s", kAlgoWidth, text.c_str());
  return buf;
}

std::string group(const Timing& t, bool algo) {
  char buf[96];
  if (!t.ran) {
    std::snprintf(buf, sizeof buf, "  %8s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return buf + (algo ? algo_cell("N/A") : std::string());
  }
  const std::string wrong = t.wrong < 0 ? "N/A" : std::to_string(t.wrong);
  std::snprintf(buf, sizeof buf, "  %8s  %6.2f  %6.2f  %6s", time_text(t.time_us).c_str(), t.algbw,
                t.busbw, wrong.c_str());
  return buf + (algo ? algo_cell(t.algorithm.empty() ? "?" : t.algorithm) : std::string());
}

std::string version_text(const std::string& version, const std::string& git) {
  if (version.empty()) return "unknown";
  return git.empty() ? version : version + " (git " + git + ")";
}

// What the time column holds, in words (the table header).
const char* time_of_text(TimeOf of) {
  switch (of) {
    case TimeOf::Rank0: return "rank 0's";
    case TimeOf::Avg: return "mean over ranks";
    case TimeOf::Min: return "fastest rank's";
    case TimeOf::Max: return "slowest rank's";
  }
  return "?";
}

// A JSON number: finite values only (a non-finite one is written as null).
std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string stats_json(const IterStats& st) {
  if (st.iters == 0) return "null";
  return "{\"iters\": " + std::to_string(st.iters) + ", \"min_us\": " + num(st.min_us) +
         ", \"p50_us\": " + num(st.p50_us) + ", \"p90_us\": " + num(st.p90_us) +
         ", \"p99_us\": " + num(st.p99_us) + ", \"max_us\": " + num(st.max_us) + "}";
}

std::string timing_json(const Timing& t) {
  if (!t.ran) return "null";
  return "{\"time_us\": " + num(t.time_us) + ", \"time_min_us\": " + num(t.time_min_us) +
         ", \"time_avg_us\": " + num(t.time_avg_us) + ", \"time_max_us\": " + num(t.time_max_us) +
         ", \"algbw_gbps\": " + num(t.algbw) + ", \"busbw_gbps\": " + num(t.busbw) +
         ", \"wrong\": " + (t.wrong < 0 ? "null" : std::to_string(t.wrong)) +
         ", \"algorithm\": " + (t.algorithm.empty() ? "null" : str(t.algorithm)) +
         ", \"stats\": " + stats_json(t.stats) + "}";
}

// Consecutive rows (out of place) with the same algorithm.
struct AlgoRange {
  std::string algorithm;
  uint64_t first = 0, last = 0;  // bytes
};
std::vector<AlgoRange> algo_ranges(const OpResult& r) {
  std::vector<AlgoRange> out;
  for (const Row& row : r.rows) {
    const std::string& a = row.out_of_place.algorithm;
    if (a.empty()) continue;
    if (!out.empty() && out.back().algorithm == a) {
      out.back().last = row.bytes;
    } else {
      out.push_back({a, row.bytes, row.bytes});
    }
  }
  return out;
}

const char* redop_text(const RunInfo& info, Op op) {
  return op_reduces(op) ? eng::redop_name(info.redop) : "none";
}
int root_value(const RunInfo& info, Op op) { return op_has_root(op) ? info.root : -1; }

}  // namespace

double busbw_factor(Op op, int nranks) {
  const double n = nranks;
  switch (op) {
    case Op::AllReduce: return 2.0 * (n - 1) / n;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AllToAll: return (n - 1) / n;
    case Op::Broadcast:
    case Op::Reduce:
    case Op::SendRecv: return 1.0;
  }
  return 1.0;
}

Timing make_timing(Op op, int nranks, uint64_t bytes, double time_us, int64_t wrong) {
  Timing t;
  t.time_us = t.time_min_us = t.time_avg_us = t.time_max_us = time_us;
  t.wrong = wrong;
  if (time_us > 0) {
    t.algbw = static_cast<double>(bytes) / 1e9 / (time_us / 1e6);
    t.busbw = t.algbw * busbw_factor(op, nranks);
  }
  return t;
}

double chosen_time(const RankTimes& t, TimeOf of) {
  switch (of) {
    case TimeOf::Rank0: return t.rank0;
    case TimeOf::Avg: return t.avg;
    case TimeOf::Min: return t.min;
    case TimeOf::Max: return t.max;
  }
  return t.max;
}

Timing make_timing(Op op, int nranks, uint64_t bytes, const RankTimes& t, TimeOf of,
                   int64_t wrong) {
  Timing out = make_timing(op, nranks, bytes, chosen_time(t, of), wrong);
  out.time_min_us = t.min;
  out.time_avg_us = t.avg;
  out.time_max_us = t.max;
  return out;
}

IterStats iter_stats(std::vector<double>& values) {
  IterStats st;
  if (values.empty()) return st;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  auto pct = [&](int p) {
    const size_t rank = (static_cast<size_t>(p) * n + 99) / 100;
    return values[std::max<size_t>(rank, 1) - 1];
  };
  st.iters = static_cast<int>(n);
  st.min_us = values.front();
  st.p50_us = pct(50);
  st.p90_us = pct(90);
  st.p99_us = pct(99);
  st.max_us = values.back();
  return st;
}

std::string net_used(const NetPluginInfo& p) {
  if (!p.known) return "unknown";
  if (p.from_runtime) return "ofi";
  const size_t slash = p.file.rfind('/');
  const std::string base = slash == std::string::npos ? p.file : p.file.substr(slash + 1);
  if (base == "libnccom-net-socket.so") return "socket";
  return p.name.empty() ? "unknown" : p.name;
}

std::vector<std::string> job_hostnames(const RunInfo& info) {
  std::vector<std::string> out;
  for (const RankPlace& r : info.placement) {
    if (std::find(out.begin(), out.end(), r.hostname) == out.end()) out.push_back(r.hostname);
  }
  return out;
}

std::string run_header(const RunInfo& info) {
  const Versions& v = info.versions;
  std::string s = "# nccom-test " + version_text(v.tool, v.tool_git) + ", libnccom " +
                  version_text(v.nccom, v.nccom_git) + ", runtime " +
                  version_text(v.runtime, v.runtime_git) + ", platform " +
                  (info.platform.empty() ? std::string("unknown") : info.platform) + "\n";
  if (!info.config_error.empty()) {
    s += "# configuration: " + info.config_error + "\n";
  } else {
    s +=
        "# configuration: " +
        (info.config_file.empty() ? std::string("built-in defaults (no file)") : info.config_file) +
        (info.config_cluster.empty() ? std::string() : ", cluster " + info.config_cluster) +
        ", digest " + info.config_digest + "\n";
  }
  s += "#\n";
  return s + placement_block(info.placement);
}

std::string placement_block(const std::vector<RankPlace>& placement) {
  std::string s;
  for (const RankPlace& r : placement) {
    char line[256];
    std::snprintf(line, sizeof line, "#  Rank %2d Pid %6d on %10s emulated host %d device %2d\n",
                  r.rank, r.pid, r.hostname.c_str(), r.host, r.device);
    s += line;
  }
  if (!placement.empty()) s += "#\n";
  return s;
}

std::string describe(const NetPluginInfo& p) {
  if (!p.known) return "unknown (" + p.error + ")";
  std::string s = p.name + " (" + p.layout + " ncclNet_v" + std::to_string(p.version) + ") from " +
                  (p.file.empty() ? std::string("an unknown file") : p.file);
  if (p.adapted) s += ", through libnccom's v6 adapter";
  if (p.from_runtime) s += ", the runtime's libnccom-net.so";
  return s;
}

std::string table_header(const RunInfo& info, Op op) {
  char line[256];
  std::snprintf(line, sizeof line,
                "# nccom-test %s: %d rank(s) on %d host(s) (%s), %s, %d iters after %d warmup, "
                "check %s, net %s%s, time %s\n",
                op_name(op), info.ranks, info.hosts, info.launcher.c_str(),
                eng::dtype_name(info.dtype), info.iters, info.warmup, info.check ? "on" : "off",
                net_used(info.net_plugin).c_str(), info.net == Net::Default ? " (default)" : "",
                time_of_text(info.average));
  std::string s = line;
  s += "# net plugin: " + describe(info.net_plugin) + "\n";
  if (!info.health_address.empty()) {
    const std::size_t colon = info.health_address.rfind(':');
    s += "# health: nccom-ras -h " + info.health_address.substr(0, colon) + " -p " +
         info.health_address.substr(colon + 1) + "\n";
  } else if (!info.health_note.empty()) {
    s += "# health: " + info.health_note + "\n";
  }
  s += "#\n";
  // Built with the row's own widths so every name sits over its values.
  const bool algo = info.show_algorithm;
  auto columns = [algo](const char* a, const char* b, const char* c, const char* d, const char* e,
                        const char* g1, const char* g2, const char* g3, const char* g4,
                        const char* g5) {
    char head[128], grp[96];
    std::snprintf(head, sizeof head, "#%12s  %12s  %8s  %6s  %6s", a, b, c, d, e);
    std::snprintf(grp, sizeof grp, "  %8s  %6s  %6s  %6s", g1, g2, g3, g4);
    const std::string g = grp + (algo ? algo_cell(g5) : std::string());
    std::string l = head + g + g;
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l + "\n";
  };
  // The group titles centred over their groups (32 columns, 43 with the
  // algo column), whose values start at column 55 and 2 after the first ends.
  const int width = 32 + (algo ? 2 + kAlgoWidth : 0);
  const int second = 55 + width + 2;
  std::string titles(static_cast<size_t>(second + width), ' ');
  titles[0] = '#';
  titles.replace(static_cast<size_t>(55 + (width - 12) / 2), 12, "out-of-place");
  titles.replace(static_cast<size_t>(second + (width - 8) / 2), 8, "in-place");
  while (titles.back() == ' ') titles.pop_back();
  s += titles + "\n";
  s +=
      columns("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "algo");
  s += columns("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "");
  return s;
}

std::string table_row(const RunInfo& info, Op op, const Row& row) {
  char head[128];
  std::snprintf(head, sizeof head, "%13llu  %12llu  %8s  %6s  %6d",
                static_cast<unsigned long long>(row.bytes),
                static_cast<unsigned long long>(row.count), eng::dtype_name(info.dtype),
                redop_text(info, op), root_value(info, op));
  return head + group(row.out_of_place, info.show_algorithm) +
         group(row.in_place, info.show_algorithm) + "\n";
}

std::string algorithm_summary(const OpResult& r) {
  const std::vector<AlgoRange> ranges = algo_ranges(r);
  if (ranges.empty()) return "unknown";
  if (ranges.size() == 1) return ranges[0].algorithm;
  std::string s;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const AlgoRange& a = ranges[i];
    if (i > 0) s += ", ";
    if (i == 0) {
      s += a.algorithm + " up to " + std::to_string(a.last) + " B";
    } else if (i + 1 == ranges.size()) {
      s += a.algorithm + " above";
    } else {
      s += a.algorithm + " from " + std::to_string(a.first) + " B up to " + std::to_string(a.last) +
           " B";
    }
  }
  return s;
}

std::string stats_table(const RunInfo& info, const OpResult& r) {
  char line[256];
  std::snprintf(line, sizeof line,
                "# %s per iteration (us): each iteration's slowest rank, over %d iterations\n",
                op_name(r.op), info.iters);
  std::string s = line;
  std::snprintf(line, sizeof line, "#%12s  %12s  %10s  %10s  %10s  %10s  %10s\n", "size(B)",
                "placement", "min", "p50", "p90", "p99", "max");
  s += line;
  for (const Row& row : r.rows) {
    const std::pair<const char*, const Timing*> groups[] = {{"out-of-place", &row.out_of_place},
                                                            {"in-place", &row.in_place}};
    for (const auto& [name, t] : groups) {
      if (!t->ran || t->stats.iters == 0) continue;
      const IterStats& st = t->stats;
      std::snprintf(line, sizeof line, "#%12llu  %12s  %10s  %10s  %10s  %10s  %10s\n",
                    static_cast<unsigned long long>(row.bytes), name, time_text(st.min_us).c_str(),
                    time_text(st.p50_us).c_str(), time_text(st.p90_us).c_str(),
                    time_text(st.p99_us).c_str(), time_text(st.max_us).c_str());
      s += line;
    }
  }
  return s + "#\n";
}

double avg_busbw(const OpResult& r) {
  double sum = 0;
  int n = 0;
  for (const Row& row : r.rows) {
    for (const Timing* t : {&row.out_of_place, &row.in_place}) {
      if (!t->ran) continue;
      sum += t->busbw;
      ++n;
    }
  }
  return n == 0 ? 0 : sum / n;
}

int64_t total_wrong(const std::vector<OpResult>& results) {
  int64_t n = 0;
  for (const OpResult& r : results) {
    for (const Row& row : r.rows) {
      for (const Timing* t : {&row.out_of_place, &row.in_place}) {
        if (t->ran) n += std::max<int64_t>(0, t->wrong);
      }
    }
  }
  return n;
}

std::string table_footer(const RunInfo& info, const OpResult& r) {
  std::string s = "# Avg bus bandwidth    : " + fmt("%.6g", avg_busbw(r)) + "\n";
  s += "# Algorithm            : " + algorithm_summary(r) + "\n";
  if (info.check) {
    const int64_t wrong = total_wrong({r});
    s += "# Wrong elements       : " + std::to_string(wrong) + (wrong == 0 ? " OK" : " FAILED") +
         "\n";
  }
  return s + "#\n";
}

namespace {

std::string text_or_null(const std::string& t) { return t.empty() ? std::string("null") : str(t); }

// "version" to "placement": what ran, where, on how many ranks.
std::string json_job(const RunInfo& info) {
  const Versions& v = info.versions;
  std::string s = "  \"version\": {\"nccom_test\": " + text_or_null(v.tool) +
                  ", \"nccom_test_git\": " + text_or_null(v.tool_git) +
                  ", \"libnccom\": " + text_or_null(v.nccom) +
                  ", \"libnccom_git\": " + text_or_null(v.nccom_git) +
                  ", \"runtime\": " + text_or_null(v.runtime) +
                  ", \"runtime_git\": " + text_or_null(v.runtime_git) + "},\n";
  s += "  \"started_utc\": " + text_or_null(info.started_utc) +
       ",\n  \"platform\": " + text_or_null(info.platform) + ",\n";
  s += "  \"ranks\": " + std::to_string(info.ranks) +
       ",\n  \"emulated_hosts\": " + std::to_string(info.hosts) + ",\n  \"hosts\": [";
  const std::vector<std::string> names = job_hostnames(info);
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + str(names[i]);
  s += "],\n  \"launcher\": " + str(info.launcher) + ",\n  \"placement\": [";
  for (size_t i = 0; i < info.placement.size(); ++i) {
    const RankPlace& r = info.placement[i];
    s += i ? ",\n" : "\n";
    s += "    {\"rank\": " + std::to_string(r.rank) + ", \"pid\": " + std::to_string(r.pid) +
         ", \"hostname\": " + str(r.hostname) + ", \"host\": " + std::to_string(r.host) +
         ", \"device\": " + std::to_string(r.device) +
         ", \"config_digest\": " + text_or_null(r.config_digest) + "}";
  }
  return s + (info.placement.empty() ? "],\n" : "\n  ],\n");
}

// "config" to "net_plugin": the configuration and the network.
std::string json_setup(const RunInfo& info) {
  bool same_digest = true;
  for (const RankPlace& r : info.placement)
    same_digest = same_digest && r.config_digest == info.placement[0].config_digest;
  std::string s = "  \"config\": {\"file\": " + str(info.config_file) +
                  ", \"cluster\": " + str(info.config_cluster) +
                  ", \"digest\": " + text_or_null(info.config_digest) +
                  ", \"same_on_every_rank\": " + (same_digest ? "true" : "false") +
                  ", \"error\": " + text_or_null(info.config_error) + ", \"launch_env\": {";
  for (size_t i = 0; i < info.launch_env.size(); ++i) {
    s += (i ? ", " : "") + str(info.launch_env[i].first) + ": " + str(info.launch_env[i].second);
  }
  s += "}},\n";
  s += "  \"net\": " + str(net_used(info.net_plugin)) +
       ",\n  \"net_requested\": " + str(net_name(info.net)) + ",\n";
  const NetPluginInfo& p = info.net_plugin;
  if (!p.known)
    return s + "  \"net_plugin\": null,\n  \"net_plugin_error\": " + str(p.error) + ",\n";
  return s + "  \"net_plugin\": {\"name\": " + str(p.name) + ", \"layout\": " + str(p.layout) +
         ", \"version\": " + std::to_string(p.version) + ", \"file\": " + str(p.file) +
         ", \"adapted\": " + (p.adapted ? "true" : "false") +
         ", \"from_runtime\": " + (p.from_runtime ? "true" : "false") + "},\n";
}

// "datatype" to "iteration_stats": the options of the run.
std::string json_options(const RunInfo& info) {
  std::string s = "  \"datatype\": " + str(eng::dtype_name(info.dtype)) +
                  ",\n  \"redop\": " + str(eng::redop_name(info.redop)) + ",\n";
  s += "  \"root\": " + std::to_string(info.root) +
       ",\n  \"iters\": " + std::to_string(info.iters) +
       ",\n  \"warmup_iters\": " + std::to_string(info.warmup) + ",\n";
  s += "  \"check\": " + std::string(info.check ? "true" : "false") +
       ",\n  \"timeout_ms\": " + std::to_string(info.timeout_ms) + ",\n";
  return s + "  \"average\": " + std::to_string(static_cast<int>(info.average)) +
         ",\n  \"time_us_is\": " + str(time_of_name(info.average)) +
         ",\n  \"iteration_stats\": " + (info.stats ? "true" : "false") + ",\n";
}

// One operation's entry of "results".
std::string json_result(const RunInfo& info, const OpResult& r) {
  std::string s =
      "    {\"op\": " + str(op_name(r.op)) + ", \"redop\": " + str(redop_text(info, r.op)) +
      ", \"root\": " + std::to_string(root_value(info, r.op)) +
      ", \"busbw_factor\": " + num(busbw_factor(r.op, info.ranks)) +
      ", \"avg_busbw_gbps\": " + num(avg_busbw(r)) +
      ",\n     \"algorithm_summary\": " + str(algorithm_summary(r)) + ", \"algorithms\": [";
  const std::vector<AlgoRange> ranges = algo_ranges(r);
  for (size_t i = 0; i < ranges.size(); ++i) {
    s += (i ? ", " : "") + std::string("{\"algorithm\": ") + str(ranges[i].algorithm) +
         ", \"min_bytes\": " + std::to_string(ranges[i].first) +
         ", \"max_bytes\": " + std::to_string(ranges[i].last) + "}";
  }
  s += "],\n     \"rows\": [";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const Row& row = r.rows[i];
    s += i ? ",\n" : "\n";
    s += "       {\"size_bytes\": " + std::to_string(row.bytes) +
         ", \"count\": " + std::to_string(row.count) +
         ", \"out_of_place\": " + timing_json(row.out_of_place) +
         ", \"in_place\": " + timing_json(row.in_place) + "}";
  }
  return s + (r.rows.empty() ? "]}" : "\n     ]}");
}

}  // namespace

std::string to_json(const RunInfo& info, const std::vector<OpResult>& results) {
  std::string s = "{\n  \"tool\": \"nccom-test\",\n  \"schema\": 2,\n";
  s += json_job(info) + json_setup(info) + json_options(info);
  s += "  \"results\": [";
  for (size_t k = 0; k < results.size(); ++k)
    s += (k ? ",\n" : "\n") + json_result(info, results[k]);
  s += results.empty() ? "],\n" : "\n  ],\n";
  s += "  \"wrong_total\": " +
       (info.check ? std::to_string(total_wrong(results)) : std::string("null")) + "\n}\n";
  return s;
}

}  // namespace nccom::nccomtest
