// The knobs of the plugins a configuration would load, for nccom-config.
#pragma once

#include "config/config.h"
#include "config/environment.h"

#include <filesystem>
#include <string>
#include <vector>

namespace nccom::tools {

struct PluginListing {
  std::string text;  // the listing, or each problem
  // false when a plugin's knob table or a value set for one of its knobs is
  // invalid (what libnccom would refuse)
  bool ok = true;
  // [plugins.<name>] sections naming no plugin nccom can find
  std::vector<config::SectionNote> unknown_sections;
};

// Where the plugins are, seen from this tool in bin/: plugins.search_path,
// then the installed lib/nccom (libnccom looks in the same places).
std::vector<std::filesystem::path> plugin_dirs(const config::Config& config);

// Opens (never initialises) every plugin the configuration names —
// topology.plugins, transport.plugins, net.plugin, the socket fallback and
// the runtime's libnccom-net.so next to the library — reads each one's
// declared knobs and resolves them as libnccom would (binding them records
// their variables in `config`'s plugin claims). Settings the file makes for
// plugins none of these declares are listed as unclaimed; those whose
// section names no plugin that is opened, in the plugin directories or
// shipped with nccom are reported as libnccom reports them.
PluginListing describe_plugins(const config::Config& config);

}  // namespace nccom::tools
