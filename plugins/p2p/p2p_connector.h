// One P2P connection end of one channel (the original's p2pResources):
// reachability (p2pCanConnect's locality part), setup (this side's
// p2pConnectInfo), connect (the peer's, checked), teardown. Nothing here
// touches device memory: the runtime owns it and reaches a peer's memory
// itself (docs/decisions/p2p.md, "What is exchanged"); the connector records how
// (direct pointer in one process, IPC across processes) and logs the
// original's channel line.
#pragma once

#include "connect_info.h"

#include <nccom/transport_plugin.h>
#include <nccom/util/result.h>

#include <cstdint>
#include <string>

namespace nccom::p2p {

inline constexpr uint64_t kConnectorMarker = 0x31434e4e4f435032ull;  // "2PCONNC1"

// The locality rule of p2pCanConnect (docs/decisions/p2p.md, "can_connect"):
// another rank on the same server (host hash, which includes the virtual
// server id) in the same pod node. The host's P2P policy (NCCL_P2P_DISABLE /
// NCCL_P2P_LEVEL) is applied by the host before this is asked
// (docs/decisions/transport.md).
bool reachable(const nccom_transport_peer_t& me, const nccom_transport_peer_t& peer);

struct Connector {
  uint64_t marker = kConnectorMarker;
  const nccom_transport_comm_t* comm = nullptr;
  nccom_transport_direction_t dir = NCCOM_TRANSPORT_SEND;
  int channel = 0;
  nccom_transport_peer_t peer{};
  Mode mode = Mode::Ipc;
  bool connected = false;
  ConnectInfo remote{};  // the peer's connect info, once connected

  std::string describe() const;  // "channel 2 send to rank 5"
};

Result<Connector*> connector_setup(const nccom_transport_comm_t* comm,
                                   nccom_transport_direction_t dir, int channel,
                                   const nccom_transport_peer_t* peer,
                                   uint8_t blob_out[NCCOM_TRANSPORT_CONNECT_BYTES]);
// Completes in one call (nothing to wait for): checks the peer's blob.
Status connector_connect(Connector* c, const uint8_t peer_blob[NCCOM_TRANSPORT_CONNECT_BYTES]);
void connector_free(Connector* c);

}  // namespace nccom::p2p
