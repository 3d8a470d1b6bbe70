#include "transport/link_exchange.h"

#include "bootstrap/wire.h"
#include "transport/net_facade.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>

namespace nccom::transport {
namespace {

enum class Kind : uint32_t { RecvBlob = 0, SendBlob = 1 };

// One exchanged entry: the channel, which side's blob, the blob.
constexpr size_t kEntryBytes = 8 + NCCOM_TRANSPORT_CONNECT_BYTES;

void encode(const PendingEnd& e, uint8_t* p) {
  const uint32_t channel = static_cast<uint32_t>(e.channel);
  const uint32_t kind = static_cast<uint32_t>(e.send ? Kind::SendBlob : Kind::RecvBlob);
  std::memcpy(p, &channel, 4);
  std::memcpy(p + 4, &kind, 4);
  std::memcpy(p + 8, e.mine.data(), NCCOM_TRANSPORT_CONNECT_BYTES);
}

// channel -1: an exchange for every channel with that peer at once.
Error at(const std::string& what, int channel, int peer, const std::string& detail) {
  const std::string where = channel < 0 ? "" : ", channel " + std::to_string(channel);
  return make_error(NRT_FAILURE, what + " transport setup" + where + ", peer rank " +
                                     std::to_string(peer) + ": " + detail);
}

}  // namespace

Status setup_end(End& end, const TransportBackend& via, const nccom_transport_comm_t& services,
                 bool send, int channel, const nccom_transport_peer_t& peer,
                 std::vector<PendingEnd>& pending) {
  auto made =
      via.setup(services, send ? NCCOM_TRANSPORT_SEND : NCCOM_TRANSPORT_RECV, channel, peer);
  if (!made) return made.take_error();
  end.connector = std::move(made->connector);
  end.via = &via;
  end.peer = peer.rank;
  pending.push_back(PendingEnd{&end, channel, send, made->blob, std::nullopt});
  return {};
}

namespace {

using ByPeer = std::map<int, std::vector<const PendingEnd*>>;

// The peer's entries into the ends they serve: its receive blob serves this
// rank's send end of the same channel, its send blob the receive end.
Status take_blobs(const std::vector<uint8_t>& bytes, size_t count, int peer,
                  std::vector<PendingEnd>& pending, const std::string& what) {
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* p = bytes.data() + i * kEntryBytes;
    uint32_t ch = 0, kind = 0;
    std::memcpy(&ch, p, 4);
    std::memcpy(&kind, p + 4, 4);
    if (kind > 1) {
      return at(what, static_cast<int>(ch), peer,
                "malformed connection blob entry " + std::to_string(i) + " (kind " +
                    std::to_string(kind) + ")");
    }
    const bool for_send = kind == static_cast<uint32_t>(Kind::RecvBlob);
    PendingEnd* match = nullptr;
    for (PendingEnd& e : pending) {
      if (e.end->peer == peer && e.send == for_send && static_cast<uint32_t>(e.channel) == ch) {
        match = &e;
      }
    }
    if (match == nullptr || match->theirs.has_value()) {
      return at(what, static_cast<int>(ch), peer,
                std::string(match == nullptr ? "unexpected " : "duplicate ") +
                    (for_send ? "receive" : "send") + " blob: the " + what +
                    " plans of the two ranks disagree");
    }
    match->theirs.emplace();
    std::memcpy(match->theirs->data(), p + 8, NCCOM_TRANSPORT_CONNECT_BYTES);
  }
  return {};
}

// Everything out, then everything in: a peer expects as many entries as it
// has ends towards this rank, which the symmetric plans guarantee.
Status exchange_blobs(comm::Communicator& comm, std::vector<PendingEnd>& pending,
                      const std::string& what) {
  ByPeer by_peer;
  for (const PendingEnd& e : pending) by_peer[e.end->peer].push_back(&e);
  for (const auto& [peer, ends] : by_peer) {
    std::vector<uint8_t> bytes(ends.size() * kEntryBytes);
    for (size_t i = 0; i < ends.size(); ++i) encode(*ends[i], bytes.data() + i * kEntryBytes);
    if (Status s = comm.send(peer, bootstrap::MsgType::kTransportInit, bytes.data(), bytes.size());
        !s) {
      return at(what, -1, peer, "sending the connection blobs: " + s.error().message);
    }
  }
  for (const auto& [peer, ends] : by_peer) {
    std::vector<uint8_t> bytes(ends.size() * kEntryBytes);
    if (Status s = comm.recv(peer, bootstrap::MsgType::kTransportInit, bytes.data(), bytes.size());
        !s) {
      return at(what, -1, peer, "receiving the connection blobs: " + s.error().message);
    }
    if (Status s = take_blobs(bytes, ends.size(), peer, pending, what); !s) return s;
  }
  return {};
}

// The connect that did not finish within the bound: the ends still waiting
// and what the plugin calls in flight are doing.
Error connect_timeout(const comm::Communicator& comm, const std::vector<PendingEnd>& pending,
                      const std::vector<bool>& done, std::chrono::milliseconds timeout,
                      const std::string& what, const nccom_transport_net_t* net) {
  std::string waiting;
  for (size_t k = 0; k < pending.size(); ++k) {
    if (done[k]) continue;
    const PendingEnd& e = pending[k];
    waiting += std::string(e.send ? " send ch" : " recv ch") + std::to_string(e.channel) +
               (e.send ? "->" : "<-") + std::to_string(e.end->peer);
  }
  const std::string stuck = net != nullptr ? net_in_flight(*net) : std::string();
  return make_error(NRT_TIMEOUT, "rank " + std::to_string(comm.rank()) + ": " + what +
                                     " transport connect: not connected after " +
                                     std::to_string(timeout.count()) +
                                     " ms (transport.connect_timeout_ms):" + waiting +
                                     (stuck.empty() ? "" : "; " + stuck));
}

}  // namespace

Status exchange_and_connect(comm::Communicator& comm, std::vector<PendingEnd>& pending,
                            std::chrono::milliseconds timeout, const std::string& what,
                            const nccom_transport_net_t* net) {
  if (Status s = exchange_blobs(comm, pending, what); !s) return s;
  // NCCL's order: send ends (connect) before receive ends (accept), by
  // channel and peer, so that a plugin whose accept blocks always has its
  // peer's connect coming. The plugin's connect/accept also run on helper
  // threads (net/setup_calls.h), so a blocking call never stops this loop
  // or its deadline.
  std::stable_sort(pending.begin(), pending.end(), [](const PendingEnd& x, const PendingEnd& y) {
    if (x.send != y.send) return x.send;
    if (x.channel != y.channel) return x.channel < y.channel;
    return x.end->peer < y.end->peer;
  });
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The health service's word on dead members is read every 50 ms, not on
  // every pass of this loop (it takes a lock and copies a string).
  constexpr auto kHealthEvery = std::chrono::milliseconds(50);
  auto next_health = std::chrono::steady_clock::now() + kHealthEvery;
  std::vector<bool> done(pending.size(), false);
  for (size_t left = pending.size(); left > 0;) {
    for (size_t k = 0; k < pending.size(); ++k) {
      if (done[k]) continue;
      PendingEnd& e = pending[k];
      auto up = e.end->via->connect_step(*e.end->connector, *e.theirs);
      if (!up) return at(what, e.channel, e.end->peer, up.error().message);
      if (*up) {
        done[k] = true;
        --left;
      }
    }
    if (left > 0 && comm.health() && std::chrono::steady_clock::now() >= next_health) {
      next_health = std::chrono::steady_clock::now() + kHealthEvery;
      if (const std::string lost = comm.health()->lost(); !lost.empty()) {
        return make_error(NRT_FAILURE, "rank " + std::to_string(comm.rank()) + ": " + what +
                                           " transport connect given up: the health service "
                                           "found " +
                                           lost +
                                           " (the communicator cannot be completed without it)");
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline)
      return connect_timeout(comm, pending, done, timeout, what, net);
    if (left > 0) std::this_thread::yield();
  }
  return {};
}

}  // namespace nccom::transport
