// neuronExpandConnectivity (docs/decisions/transport.md, "neuronExpandConnectivity"): the
// argument agreed by an all-gather first (a mismatch fails on every rank instead of hanging
// one of them in a connect), then a send and a receive end to every new peer of the
// pattern, each over the transport the selection picks for the pair (NET_NEURON
// across servers, P2P within one), on the transport channel kMeshChannel,
// exchanged and connected like the rings.
#include "log/log.h"
#include "transport/comm_transports.h"
#include "transport/connectivity.h"

namespace nccom::transport {

Status CommTransports::expand(comm::Communicator& comm, uint32_t conn) {
  const int me = comm.rank();
  const int n = comm.nranks();
  std::vector<int32_t> asked(static_cast<size_t>(n), 0);
  asked[static_cast<size_t>(me)] = static_cast<int32_t>(conn);
  if (Status s = comm.all_gather(asked.data(), sizeof(int32_t)); !s) {
    Error e = in_context(s.take_error(), "agreeing on the connectivity");
    e.status = NRT_FAILURE;
    return e;
  }
  for (int r = 0; r < n; ++r) {
    if (asked[static_cast<size_t>(r)] != static_cast<int32_t>(conn)) {
      return make_error(
          NRT_INVALID, "neuronExpandConnectivity: rank " + std::to_string(me) + " asked for " +
                           connectivity_name(conn) + " (" + std::to_string(static_cast<int>(conn)) +
                           ") but rank " + std::to_string(r) + " for " +
                           connectivity_name(static_cast<uint32_t>(asked[static_cast<size_t>(r)])) +
                           " (" + std::to_string(asked[static_cast<size_t>(r)]) +
                           "); every rank must pass the same argument");
    }
  }
  auto peers = connectivity_peers(conn, me, n);
  if (!peers) return peers.take_error();

  // New ends live here until every one is connected, then join mesh_.
  std::map<int, std::unique_ptr<Channel>> added;
  std::vector<PendingEnd> pending;
  {
    std::lock_guard lock(mesh_mutex_);
    for (int peer : *peers) {
      if (mesh_.count(peer) != 0) continue;  // connected by an earlier call
      auto via = select_transport(backends_, settings_.p2p, services_, peers_[me], peers_[peer]);
      if (!via) return via.take_error();
      auto ch = std::make_unique<Channel>();
      for (const bool send : {false, true}) {
        End& e = send ? ch->send : ch->recv;
        if (Status s = setup_end(e, **via, services_, send, kMeshChannel, peers_[peer], pending);
            !s) {
          Error e =
              in_context(s.take_error(), "mesh transport setup, peer rank " + std::to_string(peer));
          e.status = NRT_FAILURE;
          return e;
        }
      }
      added[peer] = std::move(ch);
    }
  }
  if (Status s =
          exchange_and_connect(comm, pending, settings_.connect_timeout, "mesh", services_.net);
      !s) {
    return s.take_error();
  }
  size_t net = 0;
  for (const auto& [peer, ch] : added) net += ch->send.direct() ? 0 : 1;
  NCCOM_INFO(log::kInit,
             "neuronExpandConnectivity %s: rank %d connected %zu new peer(s), %zu over "
             "the network",
             connectivity_name(conn), me, added.size(), net);
  std::lock_guard lock(mesh_mutex_);
  for (auto& [peer, ch] : added) mesh_[peer] = std::move(ch);
  return {};
}

Result<const End*> CommTransports::mesh_end(int peer, bool is_send) const {
  const int n = static_cast<int>(peers_.size());
  if (peer < 0 || peer >= n || peer == services_.rank) {
    return make_error(NRT_INVALID, "mesh channel " + std::to_string(peer) +
                                       " is not a peer rank (the MESH channel is the peer's rank: "
                                       "0.." +
                                       std::to_string(n - 1) + ", not this rank " +
                                       std::to_string(services_.rank) + ")");
  }
  std::lock_guard lock(mesh_mutex_);
  auto it = mesh_.find(peer);
  if (it == mesh_.end()) {
    return make_error(NRT_INVALID, "rank " + std::to_string(peer) +
                                       " is not connected by the mesh of this communicator "
                                       "(neuronExpandConnectivity MESH connects every rank, RDH "
                                       "only the recursive doubling/halving partners)");
  }
  return is_send ? &it->second->send : &it->second->recv;
}

}  // namespace nccom::transport
