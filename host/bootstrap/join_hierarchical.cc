// The hierarchical handshake (the protocol is ours, see docs/decisions.md).
// Ranks of one host (equal host hash) meet on an abstract Unix socket named
// after the id's secret and the host hash: the first to bind it is the host's
// leader, the others connect to it. Only leaders talk to the root: each
// forwards its members' check-ins as they arrive, so the root needs one
// connection per host instead of one per rank, and no leader has to know in
// advance how many ranks its host runs. The root answers every leader with the
// whole address table, which the leader hands to its members; no ring
// all-gather is needed afterwards.
#include "bootstrap/inbound.h"
#include "bootstrap/join.h"
#include "log/log.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace nccom::bootstrap {
namespace {

sockaddr_un local_name(const JoinOptions& o, socklen_t* length) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  char name[sizeof addr.sun_path - 1];
  const int n = std::snprintf(name, sizeof name, "nccom-bootstrap-%016llx-%016llx",
                              static_cast<unsigned long long>(o.id.secret),
                              static_cast<unsigned long long>(o.host_hash));
  std::memcpy(addr.sun_path + 1, name, n);  // abstract namespace: leading NUL
  *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return addr;
}

// Binds the host's rendezvous name: a listening socket if this rank becomes
// the leader, an invalid one if another rank holds the name.
Result<Socket> try_lead(const JoinOptions& o) {
  socklen_t length = 0;
  const sockaddr_un addr = local_name(o, &length);
  Socket sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!sock.valid())
    return make_error(NRT_RESOURCE, std::string("socket(AF_UNIX): ") + std::strerror(errno));
  if (::bind(sock.fd(), reinterpret_cast<const sockaddr*>(&addr), length) != 0) {
    if (errno == EADDRINUSE) return Socket();
    return make_error(NRT_FAILURE,
                      std::string("bind of the local rendezvous: ") + std::strerror(errno));
  }
  if (::listen(sock.fd(), 1024) != 0) {
    return make_error(NRT_FAILURE,
                      std::string("listen on the local rendezvous: ") + std::strerror(errno));
  }
  return sock;
}

Result<Socket> connect_leader(const JoinOptions& o) {
  socklen_t length = 0;
  const sockaddr_un addr = local_name(o, &length);
  // A local connect completes at once (or fails): connect blocking, then
  // switch to non-blocking like every other bootstrap socket.
  Socket sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid())
    return make_error(NRT_RESOURCE, std::string("socket(AF_UNIX): ") + std::strerror(errno));
  if (::connect(sock.fd(), reinterpret_cast<const sockaddr*>(&addr), length) != 0) {
    return make_error(NRT_FAILURE,
                      std::string("connect to the host's leader: ") + std::strerror(errno));
  }
  ::fcntl(sock.fd(), F_SETFL, ::fcntl(sock.fd(), F_GETFL) | O_NONBLOCK);
  return sock;
}

// LeaderReply.status: 0 the table follows, 1 the root refused the
// communicator, 2 the leader failed before the root answered.
constexpr uint32_t kLeaderFailed = 2;

Result<Joined> finish(const JoinOptions& o, Socket listener, const LeaderReply& reply) {
  if (reply.status == kLeaderFailed) {
    return make_error(NRT_FAILURE, "bootstrap rank " + std::to_string(o.rank) +
                                       ": this host's bootstrap leader failed: " + reply.error);
  }
  if (reply.status != 0) {
    return make_error(NRT_FAILURE, "bootstrap rank " + std::to_string(o.rank) + ": the root at " +
                                       o.id.root.to_string() +
                                       " refused the communicator: " + reply.error);
  }
  return Joined{std::make_unique<PeerMesh>(o.rank, o.nranks, o.id.secret, std::move(listener),
                                           reply.addresses, o.socket_timeout),
                reply.cluster_id, reply.epoch};
}

std::vector<uint8_t> checkin_payload(const ExtInfo& info) {
  LeaderCheckIn batch;
  batch.members.push_back(info);
  return batch.encode();
}

using Members = std::vector<std::unique_ptr<InboundConnection>>;

InboundConnection::HelloValidator member_validator(const JoinOptions& o) {
  return [secret = o.id.secret, nranks = o.nranks](const Hello& hello) -> Status {
    if (hello.secret != secret) return make_error(NRT_INVALID, "wrong secret");
    if (hello.nranks != nranks || hello.rank < 0 || hello.rank >= nranks) {
      return make_error(NRT_INVALID, "bad rank " + std::to_string(hello.rank));
    }
    return {};
  };
}

// The leader's part: checks in its own rank and forwards each member's
// check-in to the root until the root answers; returns that answer, still
// encoded. `members` collects the host's connected ranks.
Result<std::vector<uint8_t>> gather_and_ask(const JoinOptions& o, Socket& rendezvous,
                                            const Socket& listener, Deadline deadline,
                                            Members& members) {
  auto root = detail::connect_root(o, listener, deadline);
  if (!root) return root.take_error();
  const ExtInfo own = detail::own_info(o, listener);
  Status sent = detail::send_hello(*root, o, deadline);
  if (sent) sent = send_message(*root, MsgType::kLeaderToRoot, checkin_payload(own), deadline);
  if (!sent)
    return detail::context(o, "leader checking in with the root",
                           detail::refused_or(*root, sent.error()));

  const auto validator = member_validator(o);
  // The root answers at its deadline at the latest, which began when rank 0
  // started it: the leader waits that long and a grace beyond its own.
  const Deadline verdict_deadline = deadline + kRootVerdictGrace;
  for (;;) {
    std::vector<pollfd> fds{{rendezvous.fd(), POLLIN, 0}, {root->fd(), POLLIN, 0}};
    for (auto& m : members) fds.push_back({m->fd(), POLLIN, 0});
    const int left = remaining_ms(verdict_deadline);
    const int ready = left > 0 ? ::poll(fds.data(), fds.size(), left) : 0;
    if (ready == 0) {
      return make_error(
          NRT_TIMEOUT,
          "bootstrap rank " + std::to_string(o.rank) + " (host leader): the root at " +
              o.id.root.to_string() + " accepted the check-in but gave no verdict within " +
              std::to_string((o.handshake_timeout + kRootVerdictGrace).count()) +
              " ms (is rank 0's process stopped, its host unreachable, or another program "
              "listening at that address?)");
    }
    if (ready < 0) continue;
    if (fds[1].revents != 0) break;  // the root answered (or hung up): read below
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (fds[i + 2].revents == 0) continue;
      std::vector<InboundConnection::Message> messages;
      Status ok = members[i]->read_available(&messages);
      for (auto& m : messages) {
        auto info = ExtInfo::decode(m.payload.data(), m.payload.size());
        if (m.type != static_cast<uint32_t>(MsgType::kInfoToRoot) || !info) {
          ok = make_error(NRT_INVALID, "a local rank sent an unexpected message");
          break;
        }
        sent = send_message(*root, MsgType::kLeaderToRoot, checkin_payload(*info), deadline);
        if (!sent) return detail::context(o, "forwarding a check-in to the root", sent.error());
      }
      if (!ok) {
        NCCOM_WARN("bootstrap rank %d (host leader) dropped a local connection: %s", o.rank,
                   ok.error().message.c_str());
        members[i]->close();
      }
    }
    if (fds[0].revents & POLLIN) {
      for (;;) {
        const int fd = ::accept4(rendezvous.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        members.push_back(std::make_unique<InboundConnection>(Socket(fd), validator));
      }
    }
  }
  // No rank can still be arriving (the root had them all, or failed): the
  // ones already in the backlog join the members, to be told the verdict.
  for (;;) {
    const int fd = ::accept4(rendezvous.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    members.push_back(std::make_unique<InboundConnection>(Socket(fd), member_validator(o)));
  }
  rendezvous.close();
  auto payload =
      recv_message(*root, MsgType::kRootToLeader, 64 + 4096 + 28 * o.nranks + 8, verdict_deadline);
  if (!payload)
    return detail::context(o, "leader waiting for the root at " + o.id.root.to_string(),
                           payload.error());
  return payload;
}

void relay(const JoinOptions& o, Members& members, const std::vector<uint8_t>& payload,
           Deadline deadline) {
  for (auto& m : members) {
    if (m->closed()) continue;
    Status relayed = send_message(m->socket(), MsgType::kRootToLeader, payload, deadline);
    if (!relayed) {
      NCCOM_WARN("bootstrap rank %d (host leader) could not relay the answer to a local rank: %s",
                 o.rank, relayed.error().message.c_str());
    }
  }
}

// The leader: forwards its own and each member's check-in to the root, then
// relays the root's answer to every member — or, when it fails itself, its
// own failure, so that every rank of the host names the cause.
Result<Joined> lead(const JoinOptions& o, Socket rendezvous, Socket listener, Deadline deadline) {
  Members members;
  auto payload = gather_and_ask(o, rendezvous, listener, deadline, members);
  const Deadline relay_deadline = Clock::now() + std::chrono::milliseconds(1000);
  // Ranks still waiting in the rendezvous backlog (the root failed the
  // communicator before they were forwarded, or this leader failed) are
  // told as well; what they sent is taken, so that closing does not reset
  // them before they read the verdict.
  if (rendezvous.valid()) {
    for (;;) {
      const int fd = ::accept4(rendezvous.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) break;
      members.push_back(std::make_unique<InboundConnection>(Socket(fd), member_validator(o)));
    }
  }
  for (auto& m : members) {
    std::vector<InboundConnection::Message> ignored;
    if (!m->closed()) (void)m->read_available(&ignored);
  }
  if (!payload) {
    LeaderReply failed;
    failed.status = kLeaderFailed;
    failed.error = payload.error().message.substr(0, 4000);
    relay(o, members, failed.encode(), relay_deadline);
    return payload.take_error();
  }
  relay(o, members, *payload, relay_deadline);  // verbatim; each member decodes it itself
  auto reply = LeaderReply::decode(payload->data(), payload->size(), o.nranks);
  if (!reply) return detail::context(o, "reading the root's answer", reply.error());
  return finish(o, std::move(listener), *reply);
}

Result<Joined> follow(const JoinOptions& o, Socket leader, Socket listener, Deadline deadline) {
  const auto info = detail::own_info(o, listener).encode();
  Status sent = detail::send_hello(leader, o, deadline);
  if (sent) {
    sent = send_message(leader, MsgType::kInfoToRoot,
                        std::vector<uint8_t>(info.begin(), info.end()), deadline);
  }
  if (!sent) return detail::context(o, "checking in with the host's leader", sent.error());
  // The leader relays a verdict (the root's or its own failure) by then.
  auto payload = recv_message(leader, MsgType::kRootToLeader, 64 + 4096 + 28 * o.nranks + 8,
                              deadline + kLeaderVerdictGrace);
  if (!payload) {
    if (payload.error().status == NRT_TIMEOUT) {
      return detail::context(o, "waiting for the host's bootstrap leader", payload.error());
    }
    return in_context(make_error(NRT_FAILURE,
                                 "this host's bootstrap leader (the host's first rank to start) "
                                 "hung up without a verdict: its process died before it could "
                                 "relay one, and its output says why"),
                      detail::who(o));
  }
  auto reply = LeaderReply::decode(payload->data(), payload->size(), o.nranks);
  if (!reply) return detail::context(o, "reading the root's answer", reply.error());
  return finish(o, std::move(listener), *reply);
}

}  // namespace

Result<Joined> join_hierarchical(const JoinOptions& o, Socket listener) {
  const Deadline deadline = Clock::now() + o.handshake_timeout;
  // Becoming the leader or reaching it can race with a leader that is just
  // binding; a few quick attempts settle it.
  for (int attempt = 0; attempt < 100 && Clock::now() < deadline; ++attempt) {
    auto rendezvous = try_lead(o);
    if (!rendezvous) return detail::context(o, "local rendezvous", rendezvous.error());
    if (rendezvous->valid())
      return lead(o, std::move(rendezvous).value(), std::move(listener), deadline);
    auto leader = connect_leader(o);
    if (leader) return follow(o, std::move(leader).value(), std::move(listener), deadline);
    std::this_thread::yield();
  }
  return make_error(NRT_FAILURE, "bootstrap rank " + std::to_string(o.rank) +
                                     ": could neither lead nor reach this host's bootstrap leader");
}

Result<Joined> join(const JoinOptions& o) {
  auto listener = Socket::listen(o.listen_on);
  if (!listener)
    return detail::context(o, "listening on " + o.listen_on.to_string(), listener.error());
  if (o.id.protocol == Protocol::kHierarchical)
    return join_hierarchical(o, std::move(listener).value());
  return join_flat(o, std::move(listener).value());
}

}  // namespace nccom::bootstrap
