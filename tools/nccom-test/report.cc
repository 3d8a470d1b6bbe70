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

std::string group(const Timing& t) {
  char buf[96];
  if (!t.ran) {
    std::snprintf(buf, sizeof buf, "  %8s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return buf;
  }
  const std::string wrong = t.wrong < 0 ? "N/A" : std::to_string(t.wrong);
  std::snprintf(buf, sizeof buf, "  %8s  %6.2f  %6.2f  %6s", time_text(t.time_us).c_str(), t.algbw,
                t.busbw, wrong.c_str());
  return buf;
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

std::string timing_json(const Timing& t) {
  if (!t.ran) return "null";
  return "{\"time_us\": " + num(t.time_us) + ", \"algbw_gbps\": " + num(t.algbw) +
         ", \"busbw_gbps\": " + num(t.busbw) +
         ", \"wrong\": " + (t.wrong < 0 ? "null" : std::to_string(t.wrong)) + "}";
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
  t.time_us = time_us;
  t.wrong = wrong;
  if (time_us > 0) {
    t.algbw = static_cast<double>(bytes) / 1e9 / (time_us / 1e6);
    t.busbw = t.algbw * busbw_factor(op, nranks);
  }
  return t;
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
                "check %s, net %s\n",
                op_name(op), info.ranks, info.hosts, info.launcher.c_str(),
                eng::dtype_name(info.dtype), info.iters, info.warmup, info.check ? "on" : "off",
                net_name(info.net));
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
  auto columns = [](const char* a, const char* b, const char* c, const char* d, const char* e,
                    const char* g1, const char* g2, const char* g3, const char* g4) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "#%12s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s", a, b, c, d,
                  e, g1, g2, g3, g4, g1, g2, g3, g4);
    std::string l = buf;
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l + "\n";
  };
  // The group titles centred over their 32-column groups (from column 55 and 89).
  std::string titles(121, ' ');
  titles[0] = '#';
  titles.replace(55 + (32 - 12) / 2, 12, "out-of-place");
  titles.replace(89 + (32 - 8) / 2, 8, "in-place");
  while (titles.back() == ' ') titles.pop_back();
  s += titles + "\n";
  s += columns("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
  s += columns("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  return s;
}

std::string table_row(const RunInfo& info, Op op, const Row& row) {
  char head[128];
  std::snprintf(head, sizeof head, "%13llu  %12llu  %8s  %6s  %6d",
                static_cast<unsigned long long>(row.bytes),
                static_cast<unsigned long long>(row.count), eng::dtype_name(info.dtype),
                redop_text(info, op), root_value(info, op));
  return head + group(row.out_of_place) + group(row.in_place) + "\n";
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
  if (info.check) {
    const int64_t wrong = total_wrong({r});
    s += "# Wrong elements       : " + std::to_string(wrong) + (wrong == 0 ? " OK" : " FAILED") +
         "\n";
  }
  return s + "#\n";
}

std::string to_json(const RunInfo& info, const std::vector<OpResult>& results) {
  std::string s = "{\n";
  s += "  \"tool\": \"nccom-test\",\n  \"schema\": 1,\n";
  s += "  \"ranks\": " + std::to_string(info.ranks) +
       ",\n  \"hosts\": " + std::to_string(info.hosts) + ",\n";
  s += "  \"launcher\": " + str(info.launcher) + ",\n  \"net\": " + str(net_name(info.net)) + ",\n";
  const NetPluginInfo& p = info.net_plugin;
  if (p.known) {
    s += "  \"net_plugin\": {\"name\": " + str(p.name) + ", \"layout\": " + str(p.layout) +
         ", \"version\": " + std::to_string(p.version) + ", \"file\": " + str(p.file) +
         ", \"adapted\": " + (p.adapted ? "true" : "false") +
         ", \"from_runtime\": " + (p.from_runtime ? "true" : "false") + "},\n";
  } else {
    s += "  \"net_plugin\": null,\n  \"net_plugin_error\": " + str(p.error) + ",\n";
  }
  s += "  \"datatype\": " + str(eng::dtype_name(info.dtype)) +
       ",\n  \"redop\": " + str(eng::redop_name(info.redop)) + ",\n";
  s += "  \"root\": " + std::to_string(info.root) +
       ",\n  \"iters\": " + std::to_string(info.iters) +
       ",\n  \"warmup_iters\": " + std::to_string(info.warmup) + ",\n";
  s += "  \"check\": " + std::string(info.check ? "true" : "false") +
       ",\n  \"timeout_ms\": " + std::to_string(info.timeout_ms) + ",\n";
  s += "  \"results\": [";
  for (size_t k = 0; k < results.size(); ++k) {
    const OpResult& r = results[k];
    s += k ? ",\n" : "\n";
    s += "    {\"op\": " + str(op_name(r.op)) + ", \"redop\": " + str(redop_text(info, r.op)) +
         ", \"root\": " + std::to_string(root_value(info, r.op)) +
         ", \"busbw_factor\": " + num(busbw_factor(r.op, info.ranks)) +
         ", \"avg_busbw_gbps\": " + num(avg_busbw(r)) + ",\n     \"rows\": [";
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const Row& row = r.rows[i];
      s += i ? ",\n" : "\n";
      s += "       {\"size_bytes\": " + std::to_string(row.bytes) +
           ", \"count\": " + std::to_string(row.count) +
           ", \"out_of_place\": " + timing_json(row.out_of_place) +
           ", \"in_place\": " + timing_json(row.in_place) + "}";
    }
    s += r.rows.empty() ? "]}" : "\n     ]}";
  }
  s += results.empty() ? "],\n" : "\n  ],\n";
  s += "  \"wrong_total\": " +
       (info.check ? std::to_string(total_wrong(results)) : std::string("null")) + "\n}\n";
  return s;
}

}  // namespace nccom::nccomtest
