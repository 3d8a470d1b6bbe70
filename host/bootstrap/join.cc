#include "bootstrap/join.h"

#include "log/log.h"

#include <cstring>
#include <string_view>

namespace nccom::bootstrap {
namespace {
constexpr const char* kRefusedPrefix = "refused this rank: ";
}  // namespace

Status send_message(const Socket& sock, MsgType type, const std::vector<uint8_t>& payload,
                    Deadline deadline) {
  MessageHeader header;
  header.type = static_cast<uint32_t>(type);
  header.size = payload.size();
  const auto head = header.encode();
  if (Status ok = sock.send_all(head.data(), head.size(), deadline); !ok) return ok;
  return sock.send_all(payload.data(), payload.size(), deadline);
}

Result<std::vector<uint8_t>> recv_message(const Socket& sock, MsgType expected,
                                          std::size_t max_size, Deadline deadline) {
  uint8_t head[kHeaderBytes];
  if (Status ok = sock.recv_all(head, sizeof head, deadline); !ok) return ok.take_error();
  auto header = MessageHeader::decode(head, sizeof head);
  if (!header) return header.take_error();
  if (header->type == static_cast<uint32_t>(MsgType::kRefused) && expected != MsgType::kRefused &&
      header->size <= kMaxRefusalBytes) {
    std::string why(header->size, '\0');
    if (Status ok = sock.recv_all(why.data(), why.size(), deadline); !ok) return ok.take_error();
    return make_error(NRT_INVALID, kRefusedPrefix + why);
  }
  if (header->type != static_cast<uint32_t>(expected) || header->size > max_size) {
    return make_error(NRT_INVALID, std::string("expected ") +
                                       msg_type_name(static_cast<uint32_t>(expected)) + ", got " +
                                       msg_type_name(header->type) + " of " +
                                       std::to_string(header->size) + " bytes");
  }
  std::vector<uint8_t> payload(header->size);
  if (Status ok = sock.recv_all(payload.data(), payload.size(), deadline); !ok) {
    return ok.take_error();
  }
  return payload;
}

namespace detail {

Status send_hello(const Socket& sock, const JoinOptions& o, Deadline deadline) {
  Hello hello;
  hello.secret = o.id.secret;
  hello.rank = o.rank;
  hello.nranks = o.nranks;
  const auto bytes = hello.encode();
  return sock.send_all(bytes.data(), bytes.size(), deadline);
}

ExtInfo own_info(const JoinOptions& o, const Socket& listener) {
  ExtInfo info;
  info.rank = o.rank;
  info.nranks = o.nranks;
  info.listen_address = listener.local_address();
  info.build_tag = o.build_tag;
  return info;
}

std::string who(const JoinOptions& o) {
  return "bootstrap rank " + std::to_string(o.rank) + "/" + std::to_string(o.nranks);
}

Error context(const JoinOptions& o, const std::string& step, const Error& inner) {
  return in_context(inner, who(o) + ", " + step);
}

Error refused_or(const Socket& sock, const Error& send_failure) {
  // The root may have refused the Hello and closed before the rest of the
  // check-in arrived: its REFUSED message is then waiting to be read.
  auto refusal = recv_message(sock, MsgType::kRefused, kMaxRefusalBytes,
                              Clock::now() + std::chrono::milliseconds(200));
  if (!refusal) return send_failure;
  return make_error(NRT_INVALID, kRefusedPrefix + std::string(refusal->begin(), refusal->end()));
}

Error no_root(const JoinOptions& o, const Error& inner) {
  std::string why = inner.message;
  const bool unreachable = why.ends_with(kUnreachableHint);
  for (std::string_view hint : {kRefusedHint, kUnreachableHint}) {
    if (why.ends_with(hint)) why.resize(why.size() - hint.size());
  }
  return in_context(
      make_error(
          inner.status,
          "no root at " + o.id.root.to_string() + ": " + why +
              (unreachable ? " (the network to it did not answer: is it up between this host and "
                             "rank 0's, and is this the address rank 0 listens on, e.g. "
                             "NEURON_RT_ROOT_COMM_ID?)"
                           : " (is rank 0 running, and is this the address it listens on, e.g. "
                             "NEURON_RT_ROOT_COMM_ID? A root closes once its communicator has "
                             "formed: a rank restarted after that cannot rejoin it, restart "
                             "every rank)")),
      who(o));
}

Result<Socket> connect_root(const JoinOptions& o, const Socket& listener, Deadline deadline) {
  auto sock = Socket::connect(o.id.root, deadline);
  if (!sock) return no_root(o, sock.error());
  // The kernel hands listeners their ports from the ephemeral range: a root
  // port in that range, on rank 0's host, can be given to a rank that
  // started before rank 0 could bind it.
  if (sock->peer_address() == listener.local_address()) {
    return in_context(
        make_error(NRT_INVALID,
                   "the root address " + o.id.root.to_string() +
                       " is this rank's own bootstrap listener (the kernel gave it that port "
                       "before rank 0 could bind it): rank 0 cannot listen there; choose a root "
                       "port no program uses, below the ephemeral range "
                       "(net.ipv4.ip_local_port_range), e.g. in NEURON_RT_ROOT_COMM_ID"),
        who(o));
  }
  return sock;
}

}  // namespace detail

// Flat (the original's bootstrapInitFlat): check in with the root, learn the
// ring successor, then a ring all-gather of the 28-byte listen addresses over
// the mesh.
Result<Joined> join_flat(const JoinOptions& o, Socket listener) {
  const Deadline deadline = Clock::now() + o.handshake_timeout;
  const std::string root = o.id.root.to_string();
  auto sock = detail::connect_root(o, listener, deadline);
  if (!sock) return sock.take_error();

  const auto info = detail::own_info(o, listener).encode();
  Status sent = detail::send_hello(*sock, o, deadline);
  if (sent) {
    sent = send_message(*sock, MsgType::kInfoToRoot, std::vector<uint8_t>(info.begin(), info.end()),
                        deadline);
  }
  if (!sent)
    return detail::context(o, "checking in with the root at " + root,
                           detail::refused_or(*sock, sent.error()));
  // The root answers at its own deadline at the latest.
  auto payload =
      recv_message(*sock, MsgType::kInfoFromRoot, 64 + 4096, deadline + kRootVerdictGrace);
  if (!payload) return detail::context(o, "waiting for the root at " + root, payload.error());
  auto reply = RootReply::decode(payload->data(), payload->size());
  if (!reply) return detail::context(o, "reading the root's answer", reply.error());
  if (reply->status != 0) {
    return in_context(make_error(NRT_FAILURE, "the root at " + root +
                                                  " refused the communicator: " + reply->error),
                      detail::who(o));
  }
  sock->close();

  std::vector<SocketAddress> addresses(o.nranks);
  addresses[o.rank] = listener.local_address();
  addresses[(o.rank + 1) % o.nranks] = reply->successor;
  Joined joined{std::make_unique<PeerMesh>(o.rank, o.nranks, o.id.secret, std::move(listener),
                                           addresses, o.socket_timeout),
                reply->cluster_id, reply->epoch};

  std::vector<uint8_t> table(kWireAddressBytes * o.nranks);
  addresses[o.rank].encode(table.data() + kWireAddressBytes * o.rank);
  Status gathered = all_gather(*joined.mesh, o.rank, o.nranks, table.data(), kWireAddressBytes,
                               AllGatherAlgorithm::kRing);
  if (!gathered)
    return detail::context(o, "ring all-gather of the listen addresses", gathered.error());
  for (int r = 0; r < o.nranks; ++r) {
    auto address = SocketAddress::decode(table.data() + kWireAddressBytes * r, kWireAddressBytes);
    if (!address)
      return detail::context(o, "address of rank " + std::to_string(r), address.error());
    addresses[r] = *address;
  }
  joined.mesh->set_addresses(std::move(addresses));
  return joined;
}

}  // namespace nccom::bootstrap
