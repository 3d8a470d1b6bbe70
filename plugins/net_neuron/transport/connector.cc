#include "connector.h"

#include <nccom/util/log.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

namespace nccom::net_neuron {

const char* net_result_name(ncclResult_t rc) {
  switch (rc) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
  }
  return "an unknown ncclResult_t";
}

std::string net_plugin_text(const nccom_transport_comm_t* comm) {
  if (comm == nullptr) return "the net plugin";
  const bool lent =
      comm->struct_size >= offsetof(nccom_transport_comm_t, net_origin) + sizeof(comm->net_origin);
  if (lent && comm->net_origin != nullptr && *comm->net_origin != '\0') {
    return std::string("the net plugin ") + comm->net_origin;
  }
  return std::string("the net plugin ") + (comm->net_name != nullptr ? comm->net_name : "");
}

std::string Connector::describe() const {
  return "channel " + std::to_string(channel) +
         (dir == NCCOM_TRANSPORT_SEND ? " send to rank " : " receive from rank ") +
         std::to_string(peer);
}

void ConnectorRegistry::add(Connector* c) {
  std::lock_guard lock(mu_);
  all_.push_back(c);
}

void ConnectorRegistry::remove(Connector* c) {
  std::lock_guard lock(mu_);
  all_.erase(std::remove(all_.begin(), all_.end(), c), all_.end());
}

bool ConnectorRegistry::contains(const void* p) const {
  std::lock_guard lock(mu_);
  return std::find(all_.begin(), all_.end(), p) != all_.end();
}

Connector* ConnectorRegistry::find(const nccom_transport_comm_t* comm,
                                   nccom_transport_direction_t dir, int channel, int peer) const {
  std::lock_guard lock(mu_);
  for (Connector* c : all_) {
    if (c->comm == comm && c->dir == dir && c->channel == channel && c->peer == peer) return c;
  }
  return nullptr;
}

namespace {

Error net_error(const Connector& c, const char* verb, ncclResult_t rc) {
  return in_context(make_error(NRT_FAILURE, std::string(verb) + " in " + net_plugin_text(c.comm) +
                                                " returned " + net_result_name(rc) + " (" +
                                                std::to_string(static_cast<int>(rc)) + ")"),
                    "NET_NEURON " + c.describe());
}

int64_t bus_id_of(const nccom_transport_comm_t* comm, int rank) {
  if (rank < 0 || rank >= comm->n_ranks || comm->peers == nullptr) return 0;
  return comm->peers[rank].bus_id;
}

// The original's "Channel %02d : ... via NET_NEURON" line, once per connection.
void log_channel(const Connector& c) {
  const nccom_transport_comm_t* comm = c.comm;
  const char* name = comm->net_name != nullptr ? comm->net_name : "?";
  if (c.dir == NCCOM_TRANSPORT_SEND) {
    NCCOM_SDK_INFO(NCCOM_SUBSYS_NET,
                   "Channel %02d : %d[%lx] -> %d[%lx] [send] via NET_NEURON/%s/%d%s", c.channel,
                   comm->rank, static_cast<long>(bus_id_of(comm, comm->rank)), c.peer,
                   static_cast<long>(bus_id_of(comm, c.peer)), name, c.dev, "");
  } else {
    NCCOM_SDK_INFO(NCCOM_SUBSYS_NET,
                   "Channel %02d : %d[%lx] -> %d[%lx] [receive] via NET_NEURON/%s/%d%s", c.channel,
                   c.peer, static_cast<long>(bus_id_of(comm, c.peer)), comm->rank,
                   static_cast<long>(bus_id_of(comm, comm->rank)), name, c.dev, "");
  }
}

// The topology's NIC for the channel when the host lends one (an index
// into the topology's NICs, mapped onto the net's devices), else
// channel % devices.
int pick_device(const nccom_transport_comm_t* comm, int channel) {
  const bool lent = comm->struct_size >=
                        offsetof(nccom_transport_comm_t, channel_nic) + sizeof(comm->channel_nic) &&
                    comm->channel_nic != nullptr && channel <= NCCOM_TRANSPORT_MESH_CHANNEL;
  const int nic = lent ? comm->channel_nic[channel] : -1;
  return (nic >= 0 ? nic : channel) % comm->net_devices;
}

}  // namespace

Result<Connector*> connector_setup(ConnectorRegistry& registry, const nccom_transport_comm_t* comm,
                                   nccom_transport_direction_t dir, int channel,
                                   const nccom_transport_peer_t* peer,
                                   uint8_t blob_out[NCCOM_TRANSPORT_CONNECT_BYTES]) {
  if (comm == nullptr || peer == nullptr || blob_out == nullptr) {
    return make_error(NRT_INVALID, "NET_NEURON setup: NULL comm, peer or blob");
  }
  if (net_of(comm) == nullptr || comm->net_devices <= 0) {
    return make_error(NRT_INVALID,
                      "NET_NEURON setup: the communicator has no network plugin "
                      "(net NULL, or 0 devices); NET_NEURON needs one");
  }
  if (dir != NCCOM_TRANSPORT_SEND && dir != NCCOM_TRANSPORT_RECV) {
    return make_error(NRT_INVALID, "NET_NEURON setup: direction " +
                                       std::to_string(static_cast<int>(dir)) +
                                       " is neither "
                                       "RECV (0) nor SEND (1)");
  }
  if (channel < 0 || peer->rank < 0 || peer->rank >= comm->n_ranks || peer->rank == comm->rank) {
    return make_error(NRT_INVALID, "NET_NEURON setup: channel " + std::to_string(channel) +
                                       " / peer rank " + std::to_string(peer->rank) +
                                       " out of range (ranks 0.." +
                                       std::to_string(comm->n_ranks - 1) + ", not self " +
                                       std::to_string(comm->rank) + ")");
  }
  auto c = std::make_unique<Connector>();
  c->comm = comm;
  c->net = net_of(comm);
  c->dir = dir;
  c->channel = channel;
  c->peer = peer->rank;
  c->dev = pick_device(comm, channel);  // docs/decisions/net-neuron-transport.md, "NIC"
  ncclNetProperties_v6_t props{};
  if (c->net->get_properties != nullptr &&
      c->net->get_properties(c->net->ctx, c->dev, &props) == ncclSuccess) {
    c->rma = props.rma_supported == 1;
  }
  std::memset(blob_out, 0, NCCOM_TRANSPORT_CONNECT_BYTES);
  if (dir == NCCOM_TRANSPORT_RECV) {
    ncclResult_t rc = c->net->listen(c->net->ctx, c->dev, c->handle, &c->listen_comm);
    if (rc != ncclSuccess) return net_error(*c, "listen", rc);
    std::memcpy(blob_out, c->handle, NCCOM_TRANSPORT_CONNECT_BYTES);
  }
  registry.add(c.get());
  return c.release();
}

Status connector_connect(Connector* c, const uint8_t peer_blob[NCCOM_TRANSPORT_CONNECT_BYTES],
                         bool* done) {
  *done = false;
  if (c->connected) {
    *done = true;
    return {};
  }
  if (c->dir == NCCOM_TRANSPORT_SEND) {
    if (!c->handle_copied) {
      if (peer_blob == nullptr) {
        return make_error(NRT_INVALID, "NET_NEURON " + c->describe() +
                                           ": connect needs the peer's listen handle (NULL blob)");
      }
      std::memcpy(c->handle, peer_blob, NCCOM_TRANSPORT_CONNECT_BYTES);
      c->handle_copied = true;
    }
    ncclResult_t rc = c->net->connect(c->net->ctx, c->dev, c->handle, &c->net_comm);
    if (rc != ncclSuccess) return net_error(*c, "connect", rc);
  } else {
    ncclResult_t rc = c->net->accept(c->net->ctx, c->listen_comm, &c->net_comm);
    if (rc != ncclSuccess) return net_error(*c, "accept", rc);
    if (c->net_comm != nullptr) {
      // One connection per listen comm: the listener is not needed any more.
      c->net->close_listen(c->net->ctx, c->listen_comm);
      c->listen_comm = nullptr;
    }
  }
  if (c->net_comm == nullptr) return {};
  c->connected = true;
  *done = true;
  log_channel(*c);
  return {};
}

void connector_free(ConnectorRegistry& registry, Connector* c) {
  registry.remove(c);
  if (c->net_comm != nullptr) {
    if (c->sidelink_word_mh != nullptr)
      c->net->dereg_mr(c->net->ctx, c->net_comm, c->sidelink_word_mh);
    if (c->sidelink_msg_mh != nullptr)
      c->net->dereg_mr(c->net->ctx, c->net_comm, c->sidelink_msg_mh);
    if (c->dir == NCCOM_TRANSPORT_SEND) {
      c->net->close_send(c->net->ctx, c->net_comm);
    } else {
      c->net->close_recv(c->net->ctx, c->net_comm);
    }
  }
  if (c->listen_comm != nullptr) c->net->close_listen(c->net->ctx, c->listen_comm);
  c->marker = 0;
  delete c;
}

Result<void*> connector_reg_mr(Connector* c, void* data, size_t size, int type) {
  if (!c->connected) {
    return make_error(NRT_INVALID, "NET_NEURON " + c->describe() +
                                       ": reg_mr before the connection is established");
  }
  void* mhandle = nullptr;
  ncclResult_t rc = c->net->reg_mr(c->net->ctx, c->net_comm, data, size, type, &mhandle);
  if (rc != ncclSuccess) return net_error(*c, "regMr", rc);
  return mhandle;
}

Status connector_dereg_mr(Connector* c, void* mhandle) {
  if (!c->connected) {
    return make_error(NRT_INVALID, "NET_NEURON " + c->describe() +
                                       ": dereg_mr on a connection that is not established");
  }
  ncclResult_t rc = c->net->dereg_mr(c->net->ctx, c->net_comm, mhandle);
  if (rc != ncclSuccess) return net_error(*c, "deregMr", rc);
  return {};
}

}  // namespace nccom::net_neuron
