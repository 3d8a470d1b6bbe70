#include "report.h"

namespace nccom::plugin_check {
namespace {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kFail: return "FAIL";
    case Verdict::kSkip: return "SKIP";
  }
  return "?";
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

int Report::count(Verdict verdict) const {
  int n = 0;
  for (const CheckRecord& c : checks) n += c.outcome.verdict == verdict ? 1 : 0;
  return n;
}

void print_text(const Report& r, std::FILE* out) {
  std::fprintf(out, "plugin:  %s\n", r.plugin.c_str());
  std::fprintf(out, "exports:");
  if (!r.symbols_error.empty()) std::fprintf(out, " (unreadable: %s)", r.symbols_error.c_str());
  std::fprintf(out, "\n");
  for (const ExportedSymbol& s : r.symbols) {
    if (s.present) {
      std::fprintf(out, "  %-18s %4zu bytes\n", s.name.c_str(), s.size);
    } else {
      std::fprintf(out, "  %-18s -\n", s.name.c_str());
    }
  }
  std::fprintf(out, "binds:   %s\n", r.binding.c_str());
  std::fprintf(out, "mode:    %s, %s layout\n\n", r.mode.c_str(), r.layout.c_str());

  std::fprintf(out, "%-20s %-6s %8s  %s\n", "CHECK", "RESULT", "TIME", "DETAIL");
  for (const CheckRecord& c : r.checks) {
    std::fprintf(out, "%-20s %-6s %6lld ms  %s\n", c.name.c_str(), verdict_name(c.outcome.verdict),
                 c.milliseconds, c.outcome.detail.c_str());
  }
  std::fprintf(out, "\n%d passed, %d failed, %d skipped: %s\n", r.count(Verdict::kPass),
               r.count(Verdict::kFail), r.count(Verdict::kSkip),
               r.passed() ? "the plugin conforms" : "the plugin does NOT conform");
}

void print_json(const Report& r, std::FILE* out) {
  std::fprintf(out, "{\n  \"plugin\": %s,\n  \"mode\": %s,\n  \"layout\": %s,\n",
               json_string(r.plugin).c_str(), json_string(r.mode).c_str(),
               json_string(r.layout).c_str());
  std::fprintf(out, "  \"exports_error\": %s,\n  \"exports\": [",
               json_string(r.symbols_error).c_str());
  for (std::size_t i = 0; i < r.symbols.size(); ++i) {
    const ExportedSymbol& s = r.symbols[i];
    std::fprintf(out, "%s\n    {\"name\": %s, \"present\": %s, \"size\": %zu}", i ? "," : "",
                 json_string(s.name).c_str(), s.present ? "true" : "false", s.size);
  }
  std::fprintf(out, "\n  ],\n  \"binds\": %s,\n  \"checks\": [", json_string(r.binding).c_str());
  for (std::size_t i = 0; i < r.checks.size(); ++i) {
    const CheckRecord& c = r.checks[i];
    std::fprintf(out,
                 "%s\n    {\"name\": %s, \"result\": %s, \"milliseconds\": %lld, \"detail\": %s}",
                 i ? "," : "", json_string(c.name).c_str(),
                 json_string(verdict_name(c.outcome.verdict)).c_str(), c.milliseconds,
                 json_string(c.outcome.detail).c_str());
  }
  std::fprintf(out, "\n  ],\n  \"passed\": %d,\n  \"failed\": %d,\n  \"skipped\": %d,\n",
               r.count(Verdict::kPass), r.count(Verdict::kFail), r.count(Verdict::kSkip));
  std::fprintf(out, "  \"conforms\": %s\n}\n", r.passed() ? "true" : "false");
}

}  // namespace nccom::plugin_check
