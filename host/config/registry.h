// Internal to nccom_config: the registered knob tables, checked and indexed.
#pragma once

#include "config/config.h"
#include "config/knob.h"

#include <nccom/util/result.h>

#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nccom::config::detail {

struct Registry {
  std::vector<const Knob*> knobs;                           // registration order
  std::vector<Value> defaults;                              // parallel to knobs
  std::unordered_map<std::string_view, std::size_t> index;  // key -> position
  std::set<std::string, std::less<>> tables;                // "net", "net.socket", ...
  std::vector<std::string> known_paths;                     // keys and tables (did-you-mean)

  const Knob* find(std::string_view key) const {
    auto it = index.find(key);
    return it == index.end() ? nullptr : knobs[it->second];
  }
  bool is_table(std::string_view path) const { return tables.find(path) != tables.end(); }
};

// Checks every table (key syntax, duplicates, a key that is also a table,
// help present, type-specific fields, defaults that parse) and indexes them.
// Problems here are programming errors of a component; all are reported,
// one line each.
using RegistryProblems = std::vector<std::string>;
Result<Registry, RegistryProblems> build_registry(const std::vector<KnobTable>& tables);

// Those problems as one NRT_INVALID error, a line each.
Error registry_error(const RegistryProblems& problems);

}  // namespace nccom::config::detail
