// Which transport carries a pair of ranks (as the original's
// selectTransport): the plugins of transport.plugins in order, the first whose
// can_connect says yes. A proxy-free transport (P2P: the device moves the data
// itself) is a device-direct transport; the host's P2P policy
// (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL — the host's knobs, which plugins never
// read) gates it before its can_connect is asked
// (docs/decisions/transport.md, "The P2P policy is the host's").
#pragma once

#include "transport/transport_backend.h"

#include <nccom/transport_plugin.h>
#include <nccom/util/result.h>

#include <optional>
#include <string_view>
#include <vector>

namespace nccom::transport {

struct P2pPolicy {
  bool disabled = false;  // graph.p2p_disable / NCCL_P2P_DISABLE = 1
  int level = -2;         // graph.p2p_level as a topo::PathType value; -2 unset

  // From the knobs' text (empty = unset); errors name the variable.
  static Result<P2pPolicy> from_text(std::string_view disable, std::string_view level);

  // The path between two ranks of one server: LOC on one device, NVL
  // (NeuronLink) between two devices (docs/decisions/transport.md, "The P2P policy is the host's").
  // Allowed when not disabled and that path type is within the level (unset: any).
  bool allows(const nccom_transport_peer_t& a, const nccom_transport_peer_t& b) const;
};

// The first backend that may and can connect `me` to `peer`, or the
// original's error "No transport found between devices ...".
Result<const TransportBackend*> select_transport(
    const std::vector<const TransportBackend*>& backends, const P2pPolicy& policy,
    const nccom_transport_comm_t& services, const nccom_transport_peer_t& me,
    const nccom_transport_peer_t& peer);

}  // namespace nccom::transport
