// The bound Net as the checks call it: every plugin call is passed through
// unchanged, inside a guard::PluginCall that names it, so a call that never
// returns, or crashes, is named in the check's row ("test did not return").
#pragma once

#include "net/net.h"

#include <memory>

namespace nccom::plugin_check {

std::unique_ptr<net::Net> watched(std::unique_ptr<net::Net> bound);

}  // namespace nccom::plugin_check
