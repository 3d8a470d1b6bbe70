#include "config/registry.h"

#include "config/value.h"

#include <nccom/nrt_abi.h>

#include <limits>

namespace nccom::config::detail {
namespace {

bool valid_segment(std::string_view segment) {
  if (segment.empty()) return false;
  for (char c : segment) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Lower-case [a-z0-9_] segments joined by single dots.
bool valid_key(std::string_view key) {
  std::size_t start = 0;
  while (true) {
    std::size_t dot = key.find('.', start);
    if (!valid_segment(key.substr(start, dot == std::string_view::npos ? dot : dot - start)))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string_view first_segment(std::string_view key) { return key.substr(0, key.find('.')); }

void check_knob(const Knob& knob, std::vector<std::string>& problems) {
  auto problem = [&](const std::string& what) {
    problems.push_back("knob table: " + quote(knob.key) + ": " + what);
  };
  if (!valid_key(knob.key)) {
    problem("keys are lower-case [a-z0-9_] segments joined by dots");
    return;
  }
  if (first_segment(knob.key) == "cluster" || first_segment(knob.key) == "clusters")
    problem("\"cluster\" and \"clusters\" are reserved for cluster sections");
  if (knob.help.empty()) problem("has no help text");
  for (std::string_view env : knob.env)
    if (env.empty()) problem("has an empty environment variable name");
  if (knob.type == Type::Int && knob.min > knob.max) problem("min is greater than max");
  if ((knob.flags & kNameList) && knob.type != Type::String)
    problem("kNameList is only for string knobs");
  const bool list = (knob.flags & kNameList) && knob.type == Type::String;
  if ((knob.type == Type::Enum || list) && knob.allowed.empty())
    problem(list ? "name list without allowed names" : "enum without allowed values");
  if (knob.type != Type::Enum && !list && !knob.allowed.empty())
    problem("allowed values are only for enum knobs and name lists");
  if (knob.type != Type::Int && (knob.min != std::numeric_limits<std::int64_t>::min() ||
                                 knob.max != std::numeric_limits<std::int64_t>::max()))
    problem("min and max are only for integer knobs");
  if ((knob.flags & kCaseInsensitive) && knob.type != Type::Enum && !list)
    problem("kCaseInsensitive is only for enum knobs and name lists");
  if ((knob.flags & kPresenceMeansTrue) && knob.type != Type::Bool)
    problem("kPresenceMeansTrue is only for boolean knobs");
}

}  // namespace

Error registry_error(const RegistryProblems& problems) {
  std::string message;
  for (const std::string& p : problems) message += (message.empty() ? "" : "\n") + p;
  return make_error(NRT_INVALID, std::move(message));
}

Result<Registry, RegistryProblems> build_registry(const std::vector<KnobTable>& tables) {
  Registry reg;
  std::vector<std::string> problems;
  for (KnobTable table : tables) {
    for (const Knob& knob : table) {
      std::size_t before = problems.size();
      check_knob(knob, problems);
      if (problems.size() != before) continue;
      if (reg.index.count(knob.key) != 0) {
        problems.push_back("knob table: " + quote(knob.key) + ": declared twice");
        continue;
      }
      Checked def = parse_text(knob, knob.default_text);
      if (!def.value) {
        problems.push_back("knob table: " + quote(knob.key) + ": default " +
                           quote(knob.default_text) + " is not " + def.expected);
        continue;
      }
      reg.index.emplace(knob.key, reg.knobs.size());
      reg.knobs.push_back(&knob);
      reg.defaults.push_back(std::move(*def.value));
      for (std::size_t dot = knob.key.find('.'); dot != std::string_view::npos;
           dot = knob.key.find('.', dot + 1))
        reg.tables.emplace(knob.key.substr(0, dot));
    }
  }
  // A key cannot also be a table ("net" = 1 next to "net.plugin").
  for (const Knob* knob : reg.knobs)
    if (reg.is_table(knob->key))
      problems.push_back("knob table: " + quote(knob->key) +
                         ": is both a key and the table of other keys");
  if (!problems.empty()) return problems;
  for (const Knob* knob : reg.knobs) reg.known_paths.emplace_back(knob->key);
  reg.known_paths.insert(reg.known_paths.end(), reg.tables.begin(), reg.tables.end());
  return reg;
}

}  // namespace nccom::config::detail
