// What nccom-plugin-check found, and its two renderings: a table for people
// and JSON (--json) for scripts.
#pragma once

#include "elf_exports.h"
#include "outcome.h"

#include <cstdio>
#include <string>
#include <vector>

namespace nccom::plugin_check {

struct CheckRecord {
  std::string name;
  std::string description;
  Outcome outcome;
  long long milliseconds = 0;
};

struct Report {
  std::string plugin;
  std::string mode;    // "in-process (two threads)" / "two processes"
  std::string layout;  // "neuron" / "nvidia"
  std::vector<ExportedSymbol> symbols;
  std::string symbols_error;  // why the exports could not be read
  std::string binding;        // what the host would bind, from the exports
  std::vector<CheckRecord> checks;

  int count(Verdict verdict) const;
  // True when no check failed and at least one passed.
  bool passed() const { return count(Verdict::kFail) == 0 && count(Verdict::kPass) > 0; }
};

void print_text(const Report& report, std::FILE* out);
void print_json(const Report& report, std::FILE* out);

}  // namespace nccom::plugin_check
