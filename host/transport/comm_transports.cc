#include "transport/comm_transports.h"

#include "bootstrap/wire.h"
#include "core/runtime.h"
#include "log/log.h"

#include <cstring>
#include <optional>
#include <map>
#include <thread>

namespace nccom::transport {
namespace {

enum class Kind : uint32_t { RecvBlob = 0, SendBlob = 1 };

// One exchanged entry: the channel, which side's blob, the blob.
struct Entry {
  uint32_t channel;
  Kind kind;
  std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES> blob;
};
constexpr size_t kEntryBytes = 8 + NCCOM_TRANSPORT_CONNECT_BYTES;

std::vector<uint8_t> encode(const std::vector<Entry>& entries) {
  std::vector<uint8_t> out(entries.size() * kEntryBytes);
  for (size_t i = 0; i < entries.size(); ++i) {
    uint8_t* p = out.data() + i * kEntryBytes;
    const uint32_t kind = static_cast<uint32_t>(entries[i].kind);
    std::memcpy(p, &entries[i].channel, 4);
    std::memcpy(p + 4, &kind, 4);
    std::memcpy(p + 8, entries[i].blob.data(), NCCOM_TRANSPORT_CONNECT_BYTES);
  }
  return out;
}

Error at_channel(int channel, int peer, const std::string& what) {
  return make_error(NRT_FAILURE, "transport setup, channel " + std::to_string(channel) +
                                     ", peer rank " + std::to_string(peer) + ": " + what);
}

}  // namespace

nccom_transport_comm_t transport_services(const comm::Communicator& comm,
                                          std::vector<nccom_transport_peer_t>& peers,
                                          const ncclNet_v6_t* net, const char* net_name,
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
  s.net = net;
  s.net_name = net_name;
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
    comm::Communicator& comm, const graph::GraphSummary& graph,
    std::vector<const TransportBackend*> backends, const NetForTransports& net,
    const TransportSettings& settings) {
  std::unique_ptr<CommTransports> t(new CommTransports());
  t->services_ = transport_services(comm, t->peers_, net.table, net.name, net.devices, net.sidelink);
  for (const TransportBackend* b : backends) {
    if (!b->has_proxy()) continue;
    t->proxy_transport_ = b->proxy_transport(t->services_);
    t->scheduler_ = std::make_unique<proxy::Scheduler>(*t->proxy_transport_, settings.scheduler);
    break;
  }
  const int me = comm.rank();
  const graph::Rings& rings = graph.rings;
  t->channels_.resize(static_cast<size_t>(rings.nChannels));
  if (comm.nranks() == 1) return t;

  // selectTransport: the first backend that can connect the pair.
  std::map<int, const TransportBackend*> chosen;
  auto choose = [&](int peer) -> Result<const TransportBackend*> {
    if (auto it = chosen.find(peer); it != chosen.end()) return it->second;
    for (const TransportBackend* b : backends) {
      auto ok = b->can_connect(t->services_, t->peers_[me], t->peers_[peer]);
      if (!ok) return ok.take_error();
      if (*ok) return chosen[peer] = b;
    }
    return make_error(NRT_FAILURE, "No transport found between devices " +
                                       std::to_string(t->peers_[me].device) + " and " +
                                       std::to_string(t->peers_[peer].device) +
                                       ". Possible replica group misconfiguration (ranks " +
                                       std::to_string(me) + " and " + std::to_string(peer) + ")");
  };

  // Setup: every end writes its blob for the peer.
  std::map<int, std::vector<Entry>> outgoing;
  std::map<int, size_t> expected;
  for (int ch = 0; ch < rings.nChannels; ++ch) {
    const graph::RingChannel& ring = rings.channels[static_cast<size_t>(ch)];
    for (const bool send : {false, true}) {
      const int peer = send ? ring.next : ring.prev;
      if (peer < 0 || peer >= comm.nranks() || peer == me) {
        return at_channel(ch, peer, "the ring has no valid " + std::string(send ? "next" : "prev"));
      }
      auto via = choose(peer);
      if (!via) return via.take_error();
      auto made = (*via)->setup(t->services_, send ? NCCOM_TRANSPORT_SEND : NCCOM_TRANSPORT_RECV,
                                ch, t->peers_[peer]);
      if (!made) return at_channel(ch, peer, made.error().message);
      End& e = send ? t->channels_[ch].send : t->channels_[ch].recv;
      e.connector = std::move(made->connector);
      e.via = *via;
      e.peer = peer;
      outgoing[peer].push_back(Entry{static_cast<uint32_t>(ch), send ? Kind::SendBlob : Kind::RecvBlob,
                                     made->blob});
      ++expected[peer];
    }
  }

  // Exchange over the bootstrap: everything out, then everything in.
  for (const auto& [peer, entries] : outgoing) {
    const std::vector<uint8_t> bytes = encode(entries);
    if (Status s = comm.send(peer, bootstrap::MsgType::kTransportInit, bytes.data(), bytes.size()); !s) {
      return at_channel(-1, peer, "sending the connection blobs: " + s.error().message);
    }
  }
  using Blob = std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES>;
  std::vector<std::optional<Blob>> for_send(static_cast<size_t>(rings.nChannels));
  std::vector<std::optional<Blob>> for_recv(static_cast<size_t>(rings.nChannels));
  for (const auto& [peer, count] : expected) {
    std::vector<uint8_t> bytes(count * kEntryBytes);
    if (Status s = comm.recv(peer, bootstrap::MsgType::kTransportInit, bytes.data(), bytes.size()); !s) {
      return at_channel(-1, peer, "receiving the connection blobs: " + s.error().message);
    }
    for (size_t i = 0; i < count; ++i) {
      const uint8_t* p = bytes.data() + i * kEntryBytes;
      uint32_t ch = 0, kind = 0;
      std::memcpy(&ch, p, 4);
      std::memcpy(&kind, p + 4, 4);
      if (ch >= static_cast<uint32_t>(rings.nChannels) || kind > 1) {
        return at_channel(static_cast<int>(ch), peer, "malformed connection blob entry " +
                                                          std::to_string(i) + " (kind " +
                                                          std::to_string(kind) + ")");
      }
      const graph::RingChannel& ring = rings.channels[ch];
      // The peer's recv blob serves my send end (the peer is my next), its
      // send blob my recv end (the peer is my prev).
      const bool peer_recv = kind == static_cast<uint32_t>(Kind::RecvBlob);
      auto& slot = peer_recv ? for_send[ch] : for_recv[ch];
      const int expected_peer = peer_recv ? ring.next : ring.prev;
      if (expected_peer != peer || slot.has_value()) {
        return at_channel(static_cast<int>(ch), peer,
                          std::string("unexpected ") + (peer_recv ? "receive" : "send") +
                              " blob: the rings of the two ranks disagree");
      }
      slot.emplace();
      std::memcpy(slot->data(), p + 8, NCCOM_TRANSPORT_CONNECT_BYTES);
    }
  }

  // Connect every end, non-blocking, until all are up or the time is out.
  const auto deadline = std::chrono::steady_clock::now() + settings.connect_timeout;
  std::vector<bool> done(static_cast<size_t>(rings.nChannels) * 2, false);
  for (size_t left = done.size(); left > 0;) {
    for (int ch = 0; ch < rings.nChannels; ++ch) {
      for (const bool send : {false, true}) {
        const size_t k = static_cast<size_t>(ch) * 2 + (send ? 1 : 0);
        if (done[k]) continue;
        End& e = send ? t->channels_[ch].send : t->channels_[ch].recv;
        const auto& blob = send ? for_send[ch] : for_recv[ch];
        auto up = e.via->connect_step(*e.connector, *blob);
        if (!up) return at_channel(ch, e.peer, up.error().message);
        if (*up) {
          done[k] = true;
          --left;
        }
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      std::string pending;
      for (int ch = 0; ch < rings.nChannels; ++ch) {
        if (!done[static_cast<size_t>(ch) * 2]) pending += " recv ch" + std::to_string(ch) + "<-" + std::to_string(t->channels_[ch].recv.peer);
        if (!done[static_cast<size_t>(ch) * 2 + 1]) pending += " send ch" + std::to_string(ch) + "->" + std::to_string(t->channels_[ch].send.peer);
      }
      return make_error(NRT_TIMEOUT, "transport connect: not connected after " +
                                         std::to_string(settings.connect_timeout.count()) +
                                         " ms (transport.connect_timeout_ms):" + pending);
    }
    if (left > 0) std::this_thread::yield();
  }
  return t;
}

Result<const CommTransports::End*> CommTransports::end(enc_pattern_t pattern, int channel,
                                                        bool is_send) const {
  if (pattern == ENC_PATTERN_MESH) {
    return make_error(NRT_INVALID, "mesh connectors come from neuronExpandConnectivity, which is "
                                   "not implemented yet (issue 6)");
  }
  if (pattern != ENC_PATTERN_RING) {
    return make_error(NRT_INVALID, "pattern " + std::to_string(static_cast<int>(pattern)) +
                                       " is neither ENC_PATTERN_RING nor ENC_PATTERN_MESH");
  }
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

Result<void*> CommTransports::connector(enc_pattern_t pattern, int channel, bool is_send) const {
  auto e = end(pattern, channel, is_send);
  if (!e) return e.take_error();
  return (*e)->connector->handle();
}

Result<void*> CommTransports::reg_mr(enc_pattern_t pattern, int channel, bool is_send, void* data,
                                     size_t size, int type) {
  auto e = end(pattern, channel, is_send);
  if (!e) return e.take_error();
  return (*e)->via->reg_mr(*(*e)->connector, data, size, type);
}

Status CommTransports::dereg_mr(enc_pattern_t pattern, int channel, bool is_send, void* mhandle) {
  auto e = end(pattern, channel, is_send);
  if (!e) return e.take_error();
  return (*e)->via->dereg_mr(*(*e)->connector, mhandle);
}

}  // namespace nccom::transport
