// A Neuron ncclNet_v6 table over the host's selected Net, for transport
// plugins (nccom_transport_comm_t.net): the facade's functions forward to
// the Net, so a transport always sees v6 whatever the plugin's version and
// layout, and connect/accept/closeListen go through net::SetupCalls, so a
// plugin call that blocks never blocks the transport (for a native v6
// plugin too: whether its connect blocks cannot be known beforehand).
//
// Transports get net_with_ctx(): the calls with the Net as context, so
// nothing is process-wide for them. net_v6_for() serves the one caller with
// no context to give, the runtime, through the adapted table
// neuronGetOFIHandle hands out (libnrt's ABI): a context-free table can only
// forward to one Net per process (the net is selected once per process), so
// binding another Net rebinds it, which is only legitimate when the runtime
// is not using the previous one (tests).
#pragma once

#include "net/net.h"

#include <nccom/net_v6.h>
#include <nccom/transport_plugin.h>

#include <string>

namespace nccom::transport {

const ncclNet_v6_t* net_v6_for(net::Net& net);

// The same calls on `net` as context; valid while `net` lives.
nccom_transport_net_t net_with_ctx(net::Net& net);

// `net` as messages name it: "TPN (Neuron ncclNet_v4) from FILE".
std::string net_origin(const net::Net& net);

// The connect/accept calls of the Net behind `net` (a net_with_ctx() table)
// still inside the plugin, for error messages (net::describe_in_flight), or
// "" when none.
std::string net_in_flight(const nccom_transport_net_t& net);

}  // namespace nccom::transport
