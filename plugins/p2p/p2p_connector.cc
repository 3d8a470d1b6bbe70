#include "p2p_connector.h"

#include <nccom/util/log.h>

#include <memory>

namespace nccom::p2p {

bool reachable(const nccom_transport_peer_t& me, const nccom_transport_peer_t& peer) {
  return me.rank != peer.rank && me.host_hash == peer.host_hash &&
         me.pod_node_id == peer.pod_node_id;
}

std::string Connector::describe() const {
  return "channel " + std::to_string(channel) +
         (dir == NCCOM_TRANSPORT_SEND ? " send to rank " : " receive from rank ") +
         std::to_string(peer.rank);
}

namespace {

const nccom_transport_peer_t* self_of(const nccom_transport_comm_t* comm) {
  return comm->peers != nullptr && comm->rank >= 0 && comm->rank < comm->n_ranks
             ? &comm->peers[comm->rank]
             : nullptr;
}

// The original's P2P channel lines: channel, sender rank and bus id,
// receiver rank and bus id, the mode, the "/read" suffix. Logged by the send
// side, once its connection is up, as upstream does.
void log_channel(const Connector& c) {
  const nccom_transport_peer_t& me = *self_of(c.comm);
  NCCOM_SDK_INFO(NCCOM_SUBSYS_INIT, "Channel %02d : %d[%lx] -> %d[%lx] via P2P/%s%s", c.channel,
                 me.rank, static_cast<long>(me.bus_id), c.peer.rank,
                 static_cast<long>(c.peer.bus_id), mode_name(c.mode),
                 c.remote.read != 0 ? "/read" : "");
}

}  // namespace

Result<Connector*> connector_setup(const nccom_transport_comm_t* comm,
                                   nccom_transport_direction_t dir, int channel,
                                   const nccom_transport_peer_t* peer,
                                   uint8_t blob_out[NCCOM_TRANSPORT_CONNECT_BYTES]) {
  if (comm == nullptr || peer == nullptr || blob_out == nullptr) {
    return make_error(NRT_INVALID, "P2P setup: NULL comm, peer or blob");
  }
  const nccom_transport_peer_t* me = self_of(comm);
  if (me == nullptr) {
    return make_error(NRT_INVALID, "P2P setup: the communicator lends no record for rank " +
                                       std::to_string(comm->rank) + " of " +
                                       std::to_string(comm->n_ranks));
  }
  if (dir != NCCOM_TRANSPORT_SEND && dir != NCCOM_TRANSPORT_RECV) {
    return make_error(NRT_INVALID, "P2P setup: direction " + std::to_string(static_cast<int>(dir)) +
                                       " is neither RECV (0) nor SEND (1)");
  }
  if (channel < 0 || peer->rank < 0 || peer->rank >= comm->n_ranks || peer->rank == comm->rank) {
    return make_error(NRT_INVALID, "P2P setup: channel " + std::to_string(channel) +
                                       " / peer rank " + std::to_string(peer->rank) +
                                       " out of range (ranks 0.." +
                                       std::to_string(comm->n_ranks - 1) + ", not self " +
                                       std::to_string(comm->rank) + ")");
  }
  if (!reachable(*me, *peer)) {
    return make_error(NRT_INVALID, "P2P setup: rank " + std::to_string(peer->rank) +
                                       " is not on this server and pod node (can_connect says no)");
  }
  auto c = std::make_unique<Connector>();
  c->comm = comm;
  c->dir = dir;
  c->channel = channel;
  c->peer = *peer;
  // Same process: the peer's raw pointer is usable as is; otherwise through
  // the runtime's IPC (on Neuron a unified address space makes both direct).
  c->mode = me->pid_hash == peer->pid_hash ? Mode::DirectPointer : Mode::Ipc;
  write_blob(*me, channel, dir, blob_out);
  return c.release();
}

Status connector_connect(Connector* c, const uint8_t peer_blob[NCCOM_TRANSPORT_CONNECT_BYTES]) {
  if (c->connected) return {};
  auto info = read_blob(peer_blob, c->peer, c->channel, c->dir);
  if (!info) return info.take_error();
  c->remote = *info;
  c->connected = true;
  if (c->dir == NCCOM_TRANSPORT_SEND) log_channel(*c);
  return {};
}

void connector_free(Connector* c) {
  c->marker = 0;
  delete c;
}

}  // namespace nccom::p2p
