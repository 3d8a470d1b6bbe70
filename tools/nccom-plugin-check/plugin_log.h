// The logger the tool hands to the plugin's init.
//
// It tolerates what real plugins do (calls before init returns, from any
// thread, a NULL format), keeps the plugin's latest warning so a failure can
// quote it, and with --verbose echoes everything to stderr.
#pragma once

#include <nccom/net_common.h>

#include <string>

namespace nccom::plugin_check {

ncclDebugLogger_t plugin_logger();

// Echo every plugin message to stderr, prefixed with `who`.
void set_verbose(bool verbose, const char* who);

// The latest WARN the plugin logged since the previous call, or "".
std::string take_last_warning();

}  // namespace nccom::plugin_check
