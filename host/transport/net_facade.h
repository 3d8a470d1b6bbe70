// A Neuron ncclNet_v6 table over the host's selected Net, for transport
// plugins (nccom_transport_comm_t.net): the facade's functions forward to
// the Net, so a transport always sees v6 whatever the plugin's version and
// layout, and connect/accept/closeListen go through net::SetupCalls, so a
// plugin call that blocks never blocks the transport (for a native v6
// plugin too: whether its connect blocks cannot be known beforehand).
//
// A context-free table can only forward to one Net per process (the net is
// selected once per process): binding another Net rebinds it, which is only
// legitimate when no transport is using the previous one (tests). It serves
// what has no context to give: the runtime's adapted table
// (neuronGetOFIHandle) and transports built before nccom_transport_net_t.
// Transports get net_with_ctx(): the same calls with the Net as context, so
// nothing is process-wide for them.
#pragma once

#include "net/net.h"

#include <nccom/net_v6.h>
#include <nccom/transport_plugin.h>

#include <string>

namespace nccom::transport {

const ncclNet_v6_t* net_v6_for(net::Net& net);

// The same calls on `net` as context; valid while `net` lives.
nccom_transport_net_t net_with_ctx(net::Net& net);

// The bound Net as messages name it: "TPN (Neuron ncclNet_v4) from FILE";
// valid while it stays bound.
const char* net_facade_origin();

// The bound Net's connect/accept calls still inside the plugin, for error
// messages (net::describe_in_flight), or "" when none or no Net is bound.
std::string net_facade_in_flight();

}  // namespace nccom::transport
