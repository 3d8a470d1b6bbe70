// Configuring a network plugin of the ncclNet layout through the one SDK
// entry it may export (nccom/net_config.h, "nccomNetConfig"): its knob table
// resolved like the host's own knobs, then its configure() called once,
// before the net's init.
#pragma once

#include "config/config.h"
#include "net/net.h"

#include <nccom/net_config.h>
#include <nccom/util/result.h>

#include <string>

namespace nccom::net {

// Validates an nccomNetConfig declaration found at `symbol` (struct size, ABI
// version, name); `who` names the plugin in the message.
Result<const nccom_net_config_t*> read_net_config(const void* symbol, const std::string& who);

// When `net`'s object exports nccomNetConfig: resolves its knobs against
// `config` ([plugins.<name>], cluster section, environment), calls its
// configure() with a host API (logger, config_get) that lives as long as
// `net`, and logs the values taken at INFO (NET|INIT). A bad declaration, a
// bad value or a refusal is an NRT_INVALID error naming the plugin, the keys
// and where each value came from. Without the symbol: success, nothing done.
Status configure_net(Net& net, const config::Config& config);

}  // namespace nccom::net
