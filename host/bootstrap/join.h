// Joining a communicator's bootstrap: the rank side of the handshake with the
// root, flat (as the original's bootstrapInitFlat) or hierarchical through a
// local leader per host (our protocol: docs/decisions.md). Both end the same
// way: a PeerMesh that knows every rank's address, plus cluster_id and epoch.
#pragma once

#include "bootstrap/peer_mesh.h"
#include "bootstrap/wire.h"

#include <array>
#include <chrono>
#include <memory>

namespace nccom::bootstrap {

struct JoinOptions {
  UniqueId id;
  int rank = -1;
  int nranks = 0;
  std::array<uint8_t, kBuildTagBytes> build_tag{};   // zero unless global init
  uint64_t host_hash = 0;                            // ranks with equal host hashes share a leader
  SocketAddress listen_on;                           // the bootstrap interface (port 0: ephemeral)
  std::chrono::milliseconds socket_timeout{120000};  // each socket operation
  std::chrono::milliseconds handshake_timeout{120000};  // the whole check-in
};

// The root decides at its own deadline (the handshake timeout after rank 0
// started it); a host's leader waits that long plus kRootVerdictGrace for the
// root's verdict, and the host's other ranks wait for the leader's relay up
// to kLeaderVerdictGrace beyond the handshake timeout, so that a verdict that
// exists always arrives before anyone gives up on its own.
inline constexpr std::chrono::milliseconds kRootVerdictGrace{5000};
inline constexpr std::chrono::milliseconds kLeaderVerdictGrace{10000};

struct Joined {
  std::unique_ptr<PeerMesh> mesh;
  uint64_t cluster_id = 0;
  int64_t epoch = 0;
};

Result<Joined> join(const JoinOptions& options);

// Each half, for tests.
Result<Joined> join_flat(const JoinOptions& options, Socket listener);
Result<Joined> join_hierarchical(const JoinOptions& options, Socket listener);

// Framing helpers shared with the root: one message on a blocking exchange.
Status send_message(const Socket& sock, MsgType type, const std::vector<uint8_t>& payload,
                    Deadline deadline);
Result<std::vector<uint8_t>> recv_message(const Socket& sock, MsgType expected,
                                          std::size_t max_size, Deadline deadline);

namespace detail {
// "bootstrap rank R/N", how every message of a joining rank begins.
std::string who(const JoinOptions& o);
Status send_hello(const Socket& sock, const JoinOptions& o, Deadline deadline);
ExtInfo own_info(const JoinOptions& o, const Socket& listener);
Error context(const JoinOptions& o, const std::string& step, const Error& inner);
// A failed check-in send: the root's refusal if it sent one, else the send's error.
Error refused_or(const Socket& sock, const Error& send_failure);
// A failed connect to the root, said as such: no root at that address.
Error no_root(const JoinOptions& o, const Error& inner);
// The connection to the root, or why not. Refuses a root address that is
// this rank's own listener: the check-in would wait unread in its backlog.
Result<Socket> connect_root(const JoinOptions& o, const Socket& listener, Deadline deadline);
}  // namespace detail

}  // namespace nccom::bootstrap
