// The connection of a set of ends (as ncclTransportP2pSetup does it): every end
// writes its blob at setup; the blobs travel to the peers over the bootstrap
// (kTransportInit, one message per peer: everything out, then everything in);
// each end is then connected with the peer's blob of the same channel and
// opposite side, non-blocking, until all are up or the deadline passes. Used
// for the ring channels and for the mesh/RDH peers.
#pragma once

#include "comm/communicator.h"
#include "transport/transport_backend.h"

#include <nccom/transport_plugin.h>
#include <nccom/util/result.h>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nccom::transport {

using Blob = std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES>;

// One side of one connection: the connector, the transport that made it.
struct End {
  std::unique_ptr<Connector> connector;
  const TransportBackend* via = nullptr;
  int peer = -1;
  // A hop of a proxy-free transport (P2P): the device reaches the peer
  // directly; there is no network connector behind it.
  bool direct() const { return via != nullptr && !via->has_proxy(); }
};

struct PendingEnd {
  End* end = nullptr;
  int channel = 0;  // the transport channel (ring channel, or kMeshChannel)
  bool send = false;
  Blob mine{};
  std::optional<Blob> theirs;
};

// Sets up `end` towards `peer` over `via` and records it in `pending`.
Status setup_end(End& end, const TransportBackend& via, const nccom_transport_comm_t& services,
                 bool send, int channel, const nccom_transport_peer_t& peer,
                 std::vector<PendingEnd>& pending);

// Exchanges the blobs of `pending` with their peers and connects every end,
// send ends first (it reorders `pending`). `what` names the stage in errors
// ("ring", "mesh"); a timeout says what `net`'s connect and accept calls
// still in the plugin are doing (`net` may be nullptr: no network).
Status exchange_and_connect(comm::Communicator& comm, std::vector<PendingEnd>& pending,
                            std::chrono::milliseconds timeout, const std::string& what,
                            const nccom_transport_net_t* net);

}  // namespace nccom::transport
