// The knobs of the plugins a configuration would load, for nccom-config.
#pragma once

#include "config/config.h"

#include <set>
#include <string>

namespace nccom::tools {

// Opens (never initialises) every plugin the configuration names —
// topology.plugins, transport.plugins, net.plugin, the socket fallback and
// the runtime's libnccom-net.so next to the library — reads each one's
// declared knobs and resolves them as libnccom would. Appends the listing
// (or each problem) to `out`; false when a plugin's knob table or a value set
// for one of its knobs is invalid (what libnccom would refuse). Settings the
// file makes for plugins none of these declares are listed as unclaimed.
// The environment variables those plugins' knobs read go into `env_names`
// when it is given.
bool describe_plugins(const config::Config& config, std::string& out,
                      std::set<std::string>* env_names = nullptr);

}  // namespace nccom::tools
