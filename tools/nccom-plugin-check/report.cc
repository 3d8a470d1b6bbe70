#include "report.h"

#include <string>

namespace nccom::plugin_check {
namespace {

const char* group_name(Group g) { return g == Group::kCollectives ? "collectives" : "robustness"; }

const char* ending_name(Ending e) {
  switch (e) {
    case Ending::kReturned: return "returned";
    case Ending::kCrashed: return "crashed";
    case Ending::kHung: return "hung";
  }
  return "?";
}

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

// "a, b and c" of the failed checks of `group`.
std::string failed_in(const Report& r, Group group) {
  std::string names;
  for (const CheckRecord& c : r.checks) {
    if (c.group == group && c.outcome.verdict == Verdict::kFail)
      names += (names.empty() ? "" : ", ") + c.name;
  }
  return names;
}

std::string verdict_text(const Report& r) {
  if (r.passed()) return "the plugin conforms";
  if (r.count(Verdict::kFail) == 0) return "the plugin does NOT conform: no check passed";
  switch (r.carries_collectives()) {
    case Carries::kNo:
      return "the plugin does NOT conform and cannot carry collectives (failed: " +
             failed_in(r, Group::kCollectives) + ")";
    case Carries::kYes:
      return "the plugin does NOT conform, but it can carry collectives: only robustness checks "
             "failed (" +
             failed_in(r, Group::kRobustness) + ")";
    case Carries::kUnknown: break;
  }
  return "the plugin does NOT conform; whether it can carry collectives is not known: --only "
         "left out checks they need (failed: " +
         failed_in(r, Group::kRobustness) + ")";
}

}  // namespace

int Report::count(Verdict verdict) const {
  int n = 0;
  for (const CheckRecord& c : checks) n += c.outcome.verdict == verdict ? 1 : 0;
  return n;
}

int Report::count(Ending ending) const {
  int n = 0;
  for (const CheckRecord& c : checks) n += c.ending == ending ? 1 : 0;
  return n;
}

Carries Report::carries_collectives() const {
  for (const CheckRecord& c : checks) {
    if (c.group == Group::kCollectives && c.outcome.verdict == Verdict::kFail) return Carries::kNo;
  }
  return every_check ? Carries::kYes : Carries::kUnknown;
}

int Report::exit_status() const {
  if (count(Ending::kCrashed) > 0) return 4;
  if (count(Ending::kHung) > 0) return 3;
  return passed() ? 0 : 1;
}

void print_header(const Report& r, std::FILE* out) {
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
  std::fprintf(out, "mode:    %s, %s layout; every check in a process of its own\n\n",
               r.mode.c_str(), r.layout.c_str());
  std::fprintf(out, "%-20s %-6s %8s  %s\n", "CHECK", "RESULT", "TIME", "DETAIL");
  std::fflush(out);
}

void print_row(const Report& r, std::FILE* out) {
  if (r.checks.empty()) return;
  const CheckRecord& c = r.checks.back();
  if (r.checks.size() == 1 || r.checks[r.checks.size() - 2].group != c.group) {
    std::fprintf(out, "%s\n",
                 c.group == Group::kCollectives
                     ? "-- what collectives need (a failure here: nccom cannot use the plugin) --"
                     : "-- robustness (error paths; a failure here: the plugin mishandles "
                       "mistakes) --");
  }
  std::fprintf(out, "%-20s %-6s %6lld ms  %s\n", c.name.c_str(), verdict_name(c.outcome.verdict),
               c.milliseconds, c.outcome.detail.c_str());
  std::fflush(out);
}

void print_summary(const Report& r, std::FILE* out) {
  std::string how;
  const int crashed = r.count(Ending::kCrashed);
  const int hung = r.count(Ending::kHung);
  if (crashed > 0) how += std::to_string(crashed) + " crashed";
  if (hung > 0) how += (how.empty() ? "" : ", ") + std::to_string(hung) + " hung";
  std::fprintf(out, "\n%d passed, %d failed%s, %d skipped: %s\n", r.count(Verdict::kPass),
               r.count(Verdict::kFail), how.empty() ? "" : (" (" + how + ")").c_str(),
               r.count(Verdict::kSkip), verdict_text(r).c_str());
  std::fflush(out);
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
                 "%s\n    {\"name\": %s, \"result\": %s, \"milliseconds\": %lld, \"group\": %s, "
                 "\"ending\": %s, \"detail\": %s}",
                 i ? "," : "", json_string(c.name).c_str(),
                 json_string(verdict_name(c.outcome.verdict)).c_str(), c.milliseconds,
                 json_string(group_name(c.group)).c_str(),
                 json_string(ending_name(c.ending)).c_str(), json_string(c.outcome.detail).c_str());
  }
  const Carries carries = r.carries_collectives();
  std::fprintf(out, "\n  ],\n  \"passed\": %d,\n  \"failed\": %d,\n  \"skipped\": %d,\n",
               r.count(Verdict::kPass), r.count(Verdict::kFail), r.count(Verdict::kSkip));
  std::fprintf(out, "  \"crashed\": %d,\n  \"hung\": %d,\n", r.count(Ending::kCrashed),
               r.count(Ending::kHung));
  std::fprintf(out, "  \"carries_collectives\": %s,\n",
               carries == Carries::kYes  ? "true"
               : carries == Carries::kNo ? "false"
                                         : "null");
  std::fprintf(out, "  \"summary\": %s,\n", json_string(verdict_text(r)).c_str());
  std::fprintf(out, "  \"exit_status\": %d,\n", r.exit_status());
  std::fprintf(out, "  \"conforms\": %s\n}\n", r.passed() ? "true" : "false");
  std::fflush(out);
}

}  // namespace nccom::plugin_check
