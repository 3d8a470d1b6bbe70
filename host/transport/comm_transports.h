// The transports of one communicator (buildGraphTransportsRank's
// ncclTransportP2pConnect and ncclTransportP2pSetup): for every ring
// channel a receive connector from `prev` and a send connector to `next`,
// each over the first transport that may and can connect the pair
// (selection.h), set up and exchanged over the bootstrap, then connected
// (link_exchange.h); the mesh/RDH peers that neuronExpandConnectivity adds
// (mesh.cc); and the proxy scheduler whose ops use them
// (neuronStart/Stop/NetworkProxyProgress, neuronGetNetConnector,
// neuronNetRegMr/DeregMr).
#pragma once

#include "comm/communicator.h"
#include "proxy/scheduler.h"
#include "rings/summary.h"
#include "transport/link_exchange.h"
#include "transport/selection.h"
#include "transport/transport_backend.h"

#include <nccom/transport_plugin.h>
#include <nccom/util/result.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nccom::transport {

// The transport channel of every mesh/RDH connection: above the ring
// channels (< NEC_MAX_CHANNELS), so the NET_NEURON plugin tells a mesh
// connection from a ring one
// (docs/decisions/transport.md, "Mesh connections use transport channel 32").
inline constexpr int kMeshChannel = NCCOM_TRANSPORT_MESH_CHANNEL;
static_assert(NCCOM_TRANSPORT_MESH_CHANNEL == NEC_MAX_CHANNELS);

struct TransportSettings {
  std::chrono::milliseconds connect_timeout{60000};
  proxy::SchedulerSettings scheduler;
  P2pPolicy p2p;
};

// The network the transports use: its v6 calls with the Net as context
// (net_facade.h).
struct NetForTransports {
  nccom_transport_net_t with_ctx{};  // struct_size 0: none
  const char* name = "";
  std::string origin;  // net_origin()
  int devices = 0;
  bool sidelink = false;  // Trn2/Trn3 receive confirmation
};

class CommTransports : public comm::CommExtension {
 public:
  // Connects every ring channel of `graph` (no-op for one rank). Every
  // failure names the channel, the peer and the transport.
  static Result<std::unique_ptr<CommTransports>> connect(
      comm::Communicator& comm, const rings::GraphSummary& graph,
      std::vector<const TransportBackend*> backends, const NetForTransports& net,
      const TransportSettings& settings);
  ~CommTransports() override;

  // neuronExpandConnectivity (collective): agrees on `conn` with every rank,
  // then connects the peers connectivity_peers() names that are not
  // connected yet (idempotent). DEFAULT connects nothing.
  Status expand(comm::Communicator& comm, uint32_t conn);

  // neuronGetNetConnector: the network connector of (pattern, channel,
  // direction); nullptr for a direct (P2P) hop, which has none. For MESH the
  // channel is the peer's rank.
  Result<void*> connector(uint32_t pattern, int channel, bool is_send) const;
  // neuronNetRegMr / neuronNetDeregMr on that connector's network comm.
  Result<void*> reg_mr(uint32_t pattern, int channel, bool is_send, void* data, size_t size,
                       int type);
  Status dereg_mr(uint32_t pattern, int channel, bool is_send, void* mhandle);

  // nullptr when no transport of this communicator has a proxy.
  proxy::Scheduler* scheduler() { return scheduler_.get(); }

 private:
  struct Channel {
    End send, recv;
  };
  CommTransports() = default;
  Result<const End*> end(uint32_t pattern, int channel, bool is_send) const;
  Result<const End*> ring_end(int channel, bool is_send) const;
  Result<const End*> mesh_end(int peer, bool is_send) const;

  std::vector<nccom_transport_peer_t> peers_;
  std::vector<int32_t> channel_nic_;  // services_.channel_nic
  nccom_transport_net_t net_{};       // services_.net
  std::string net_origin_;            // services_.net_origin
  nccom_transport_comm_t services_{};
  std::vector<const TransportBackend*> backends_;
  TransportSettings settings_;
  std::vector<Channel> channels_;
  mutable std::mutex mesh_mutex_;                 // expand vs lookups
  std::map<int, std::unique_ptr<Channel>> mesh_;  // peer rank -> its ends (stable addresses)
  std::unique_ptr<proxy::ProxyTransport> proxy_transport_;
  std::unique_ptr<proxy::Scheduler> scheduler_;  // after proxy_transport_: destroyed first
};

// The services a transport gets for `comm` (peers filled from its records).
nccom_transport_comm_t transport_services(const comm::Communicator& comm,
                                          std::vector<nccom_transport_peer_t>& peers,
                                          const char* net_name, const char* net_origin,
                                          int net_devices, bool sidelink);

}  // namespace nccom::transport
