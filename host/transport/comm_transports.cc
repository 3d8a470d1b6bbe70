#include "transport/comm_transports.h"

#include "core/runtime.h"
#include "log/log.h"

#include <cstring>

namespace nccom::transport {
namespace {

Error at_channel(int channel, int peer, const std::string& what) {
  return make_error(NRT_FAILURE, "transport setup, channel " + std::to_string(channel) +
                                     ", peer rank " + std::to_string(peer) + ": " + what);
}

}  // namespace

nccom_transport_comm_t transport_services(const comm::Communicator& comm,
                                          std::vector<nccom_transport_peer_t>& peers,
                                          const char* net_name, const char* net_origin,
                                          int net_devices, bool sidelink) {
  peers.clear();
  for (const auto& r : comm.peers()) {
    nccom_transport_peer_t p{};
    p.rank = r.rank;
    p.device = r.device;
    p.host_hash = r.host_hash;
    p.pid_hash = r.pid_hash;
    p.mla_idx = r.mla_idx;
    p.pod_node_id = r.pod_node_id;
    p.bus_id = r.bus_id;
    peers.push_back(p);
  }
  const runtime::Api& rt = runtime::api();
  nccom_transport_comm_t s{};
  s.struct_size = sizeof s;
  s.rank = comm.rank();
  s.n_ranks = comm.nranks();
  s.sidelink = sidelink ? 1 : 0;
  s.peers = peers.data();
  s.net_name = net_name;
  s.net_origin = net_origin;
  s.net_devices = net_devices;
  s.inc_semaphore = rt.nec_inc_semaphore;
  s.dynamic_send_size = rt.nec_get_dynamic_send_size_bytes;
  s.dynamic_send_offset = rt.nec_get_dynamic_send_offset_bytes;
  s.dynamic_recv_offset = rt.nec_get_dynamic_recv_offset_bytes;
  s.set_recv_size = rt.nec_set_recv_size_bytes;
  return s;
}

CommTransports::~CommTransports() = default;

Result<std::unique_ptr<CommTransports>> CommTransports::connect(
    comm::Communicator& comm, const rings::GraphSummary& graph,
    std::vector<const TransportBackend*> backends, const NetForTransports& net,
    const TransportSettings& settings) {
  std::unique_ptr<CommTransports> t(new CommTransports());
  t->net_origin_ = net.origin;
  t->services_ = transport_services(comm, t->peers_, net.name, t->net_origin_.c_str(), net.devices,
                                    net.sidelink);
  // The topology's NIC per ring channel; the mesh channel leaves it to the
  // transport.
  t->channel_nic_.assign(NCCOM_TRANSPORT_MESH_CHANNEL + 1, -1);
  for (size_t c = 0; c < graph.channelNic.size() && c < NCCOM_TRANSPORT_MESH_CHANNEL; ++c)
    t->channel_nic_[c] = graph.channelNic[c];
  t->services_.channel_nic = t->channel_nic_.data();
  if (net.with_ctx.struct_size != 0) {
    t->net_ = net.with_ctx;
    t->services_.net = &t->net_;
  }
  t->backends_ = std::move(backends);
  t->settings_ = settings;
  for (const TransportBackend* b : t->backends_) {
    if (!b->has_proxy()) continue;
    t->proxy_transport_ = b->proxy_transport(t->services_);
    t->scheduler_ = std::make_unique<proxy::Scheduler>(*t->proxy_transport_, settings.scheduler);
    break;
  }
  const int me = comm.rank();
  const rings::Rings& rings = graph.rings;
  t->channels_.resize(static_cast<size_t>(rings.nChannels));
  if (comm.nranks() == 1) return t;

  // Setup: every end writes its blob for the peer (selectTransport per pair).
  std::vector<PendingEnd> pending;
  for (int ch = 0; ch < rings.nChannels; ++ch) {
    const rings::RingChannel& ring = rings.channels[static_cast<size_t>(ch)];
    for (const bool send : {false, true}) {
      const int peer = send ? ring.next : ring.prev;
      if (peer < 0 || peer >= comm.nranks() || peer == me) {
        return at_channel(ch, peer, "the ring has no valid " + std::string(send ? "next" : "prev"));
      }
      auto via = select_transport(t->backends_, settings.p2p, t->services_, t->peers_[me],
                                  t->peers_[peer]);
      if (!via) return via.take_error();
      End& e = send ? t->channels_[ch].send : t->channels_[ch].recv;
      if (Status s = setup_end(e, **via, t->services_, send, ch, t->peers_[peer], pending); !s) {
        return at_channel(ch, peer, s.error().message);
      }
    }
  }
  if (Status s =
          exchange_and_connect(comm, pending, settings.connect_timeout, "ring", t->services_.net);
      !s) {
    return s.take_error();
  }
  return t;
}

Result<const End*> CommTransports::ring_end(int channel, bool is_send) const {
  if (channel < 0 || channel >= static_cast<int>(channels_.size())) {
    return make_error(NRT_INVALID, "channel " + std::to_string(channel) + " is out of range (" +
                                       std::to_string(channels_.size()) + " ring channels)");
  }
  const End& e = is_send ? channels_[channel].send : channels_[channel].recv;
  if (!e.connector) {
    return make_error(NRT_INVALID, "channel " + std::to_string(channel) + " has no " +
                                       (is_send ? "send" : "receive") +
                                       " connector (a single-rank communicator)");
  }
  return &e;
}

Result<const End*> CommTransports::end(uint32_t pattern, int channel, bool is_send) const {
  if (pattern == ENC_PATTERN_MESH) return mesh_end(channel, is_send);
  if (pattern != ENC_PATTERN_RING) {
    return make_error(NRT_INVALID, "pattern " + std::to_string(static_cast<int>(pattern)) +
                                       " is neither ENC_PATTERN_RING nor ENC_PATTERN_MESH");
  }
  return ring_end(channel, is_send);
}

Result<void*> CommTransports::connector(uint32_t pattern, int channel, bool is_send) const {
  auto e = end(pattern, channel, is_send);
  if (!e) return e.take_error();
  // A direct (P2P) hop has no network connector: the device reaches the peer.
  if ((*e)->direct()) return static_cast<void*>(nullptr);
  return (*e)->connector->handle();
}

namespace {

Error not_a_network_hop(uint32_t pattern, int channel, bool is_send, const End& e) {
  return make_error(NRT_INVALID,
                    std::string(pattern == ENC_PATTERN_MESH ? "mesh peer " : "ring channel ") +
                        std::to_string(channel) + (is_send ? " send" : " receive") +
                        " is a direct hop over transport " + e.via->name() + " to rank " +
                        std::to_string(e.peer) + ": it has no network comm to register memory on");
}

}  // namespace

Result<void*> CommTransports::reg_mr(uint32_t pattern, int channel, bool is_send, void* data,
                                     size_t size, int type) {
  auto e = end(pattern, channel, is_send);
  if (!e) return e.take_error();
  if ((*e)->direct()) return not_a_network_hop(pattern, channel, is_send, **e);
  return (*e)->via->reg_mr(*(*e)->connector, data, size, type);
}

Status CommTransports::dereg_mr(uint32_t pattern, int channel, bool is_send, void* mhandle) {
  auto e = end(pattern, channel, is_send);
  if (!e) return e.take_error();
  if ((*e)->direct()) return not_a_network_hop(pattern, channel, is_send, **e);
  return (*e)->via->dereg_mr(*(*e)->connector, mhandle);
}

}  // namespace nccom::transport
