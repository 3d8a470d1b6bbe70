// The logger handed to net plugins at init (ncclDebugLogger_t).
//
// Plugins call it from any thread, possibly before their init has returned,
// sometimes with odd arguments (a NULL format is seen in the wild). It
// forwards to nccom's log with the plugin's level and subsystem flags and
// never dereferences a NULL format or file.
#pragma once

#include <nccom/net_common.h>

namespace nccom::net {

ncclDebugLogger_t plugin_logger();

}  // namespace nccom::net
