// A Neuron ncclNet_v6 table over the host's selected Net, for transport
// plugins (nccom_transport_comm_t.net). A native v6 plugin's own table is
// handed out unchanged; for adapted plugins (v5, v4, NVIDIA layouts) the
// facade's functions forward to the Net, so a transport always sees v6.
//
// The facade forwards to one Net per process (the net is selected once per
// process): binding another Net rebinds it, which is only legitimate when no
// transport is using the previous one (tests).
#pragma once

#include "net/net.h"

#include <nccom/net_v6.h>

namespace nccom::transport {

const ncclNet_v6_t* net_v6_for(net::Net& net);

}  // namespace nccom::transport
