// Internal to nccom_config: one TOML file turned into value layers (top level
// and one layer per [clusters.<name>] section). The only file that includes
// toml++.
#pragma once

#include "config/config.h"
#include "config/registry.h"

#include <nccom/util/result.h>

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nccom::config::detail {

// One problem found while loading. Problems inside a file carry its
// position so they can be reported in file order; others have line 0.
struct Problem {
  int line = 0;
  int column = 0;
  std::string text;
};

struct Assigned {
  Value value;
  Source source;
};
using Layer = std::unordered_map<const Knob*, Assigned>;

struct FileLayers {
  std::string path;
  Layer top;
  std::map<std::string, Layer> clusters;       // every section, checked, by name
  std::vector<PluginSetting> plugin_settings;  // [plugins.<name>] values, file order
  std::string cluster;                         // top-level `cluster = "..."`; empty if absent
  int cluster_line = 0;
  int cluster_column = 0;
};

// Parses `text`, the contents of the file at `path`. A TOML syntax error is
// returned as an Error ("path:line:col: TOML syntax error: ..."); every other
// problem (unknown key, wrong type, out of range) is appended to `problems`
// and reading goes on, so that all of them are reported together.
Result<FileLayers> read_layers(const Registry& registry, const std::string& path,
                               std::string_view text, std::vector<Problem>& problems);

}  // namespace nccom::config::detail
