// What nccom-plugin-check found, and its two renderings: a table for people,
// printed a row at a time as the checks end, and JSON (--json) for scripts,
// printed once at the end.
#pragma once

#include "elf_exports.h"
#include "outcome.h"

#include <cstdio>
#include <string>
#include <vector>

namespace nccom::plugin_check {

// What a check decides: whether nccom can run collectives over the plugin
// (the host's normal path), or how the plugin copes with mistakes and bad
// input (paths the host does not take when all is well).
enum class Group { kCollectives, kRobustness };

// How a check's process ended: the check returned its outcome; the process
// died (a signal, or the plugin ended it); or it made no progress within
// the bound (a plugin call that did not return) and was killed.
enum class Ending { kReturned, kCrashed, kHung };

struct CheckRecord {
  std::string name;
  std::string description;
  Outcome outcome;
  long long milliseconds = 0;
  Group group = Group::kCollectives;
  Ending ending = Ending::kReturned;
};

// Whether the plugin can carry collectives: the checks of Group::kCollectives
// all ran and none failed (kYes), one failed (kNo), or --only left some out
// and none of those that ran failed (kUnknown).
enum class Carries { kYes, kNo, kUnknown };

struct Report {
  std::string plugin;
  std::string mode;    // "in-process (two threads)" / "two processes"
  std::string layout;  // "neuron" / "nvidia"
  std::vector<ExportedSymbol> symbols;
  std::string symbols_error;  // why the exports could not be read
  std::string binding;        // what the host would bind, from the exports
  bool every_check = true;    // false when --only chose some
  std::vector<CheckRecord> checks;

  int count(Verdict verdict) const;
  int count(Ending ending) const;
  // True when no check failed and at least one passed.
  bool passed() const { return count(Verdict::kFail) == 0 && count(Verdict::kPass) > 0; }
  Carries carries_collectives() const;
  // 0 passed; 1 a check failed; 3 a check hung; 4 a check's process died
  // (the highest applies; 2, usage, is main's).
  int exit_status() const;
};

// The table, in three parts: the plugin and its exports, one row per check
// (call after appending it to report.checks; a group's first row is preceded
// by the group's heading), the summary.
void print_header(const Report& report, std::FILE* out);
void print_row(const Report& report, std::FILE* out);
void print_summary(const Report& report, std::FILE* out);
void print_json(const Report& report, std::FILE* out);

}  // namespace nccom::plugin_check
