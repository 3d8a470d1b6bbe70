// PeerMesh — the bootstrap network of one communicator after the handshake:
// every rank's listen address is known, and any rank can send typed messages to
// any other (the original's bootstrapSend/Recv). Connections are opened lazily,
// one outgoing per peer, and each starts with a Hello carrying the unique id's
// secret; connections without it are refused and logged, never trusted.
//
// Single-threaded progress: whoever calls send/recv/exchange drives all
// sockets of the mesh (outgoing writes, accepts, incoming reads) in one poll
// loop, so two ranks sending to each other at once cannot deadlock.
// Messages that arrive before they are asked for wait in a queue keyed by
// (sender, type). Every call is bounded by the mesh's timeout; the error
// names the peer rank, its address and what was missing.
#pragma once

#include "bootstrap/allgather.h"
#include "bootstrap/inbound.h"
#include "bootstrap/socket.h"
#include "bootstrap/wire.h"

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace nccom::bootstrap {

class PeerMesh final : public PeerExchange {
 public:
  // `listener` is this rank's listening socket (already bound; its address is
  // addresses[rank]). `timeout` bounds every operation.
  PeerMesh(int rank, int nranks, uint64_t secret, Socket listener,
           std::vector<SocketAddress> addresses, std::chrono::milliseconds timeout);
  ~PeerMesh() override;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const std::vector<SocketAddress>& addresses() const { return addresses_; }
  // Completes the table once the handshake has gathered every address.
  void set_addresses(std::vector<SocketAddress> addresses) { addresses_ = std::move(addresses); }

  Status send(int peer, MsgType type, const void* data, std::size_t size);
  // Receives exactly `size` bytes; a message of another size is an error.
  Status recv(int peer, MsgType type, void* data, std::size_t size);
  Status exchange(int send_to, const void* send_data, std::size_t send_size, int recv_from,
                  void* recv_data, std::size_t recv_size, MsgType type) override;

  // All-gather with the algorithm every rank chooses for (nranks, size).
  Status all_gather(void* data, std::size_t size_per_rank);
  Status barrier();

  // Communicator setup (from the handshake until the rings are connected):
  // every operation is bounded by min(timeout, `bound`), and a point-to-point
  // wait fails as soon as any member's connection breaks, since the setup
  // cannot complete without it. (An all-gather or barrier is not failed by a
  // member that closed after finishing its part; a member it still needs
  // fails it as always.)
  void set_setup(bool on, std::chrono::milliseconds bound = {});

  // A clean departure: this member completed its part of the communicator
  // and frees it. Sends GOODBYE on every connection this rank opened
  // (after whatever it sent before, so the receiver has all of it), each
  // write bounded by `bound`. A member that receives it no longer counts
  // the closing connection as broken: its setup waits are not given up,
  // and only a wait for something the departed rank never sent fails (at
  // once, naming it). Best effort: a peer already gone is skipped.
  void leave(std::chrono::milliseconds bound);

  // The opposite: this member's setup failed (`why`, at most
  // kGaveUpTextBytes of it). Sends GAVE_UP with the reason on every
  // connection this rank opened, each write bounded by `bound`; a member
  // waiting for this rank then fails with that reason (which names the rank
  // that started it) instead of "rank N closed its connection" when this
  // process exits. Best effort, like leave().
  void give_up(const std::string& why, std::chrono::milliseconds bound);
  static constexpr std::size_t kGaveUpTextBytes = 4096;

  // Connections refused so far (wrong secret, garbage, bad rank): for tests
  // and for the log.
  int refused_connections() const { return refused_; }

 private:
  struct Outgoing;

  Status ensure_outgoing(int peer, Deadline deadline);
  // One poll round over the listener, all incoming connections and (when
  // `writer` is set) the outgoing one being written. Returns when something
  // happened or the deadline passed.
  Status pump(Outgoing* writer, const std::vector<uint8_t>* pending, std::size_t* written,
              Deadline deadline);
  void accept_ready();
  void read_ready(InboundConnection& in);
  bool take_message(int peer, MsgType type, std::vector<uint8_t>* out);
  // The message `from` sent (into `data`): true once it is there, false not
  // yet, an error when it has the wrong size or `from` left or broke first.
  Result<bool> take_received(int from, MsgType type, void* data, std::size_t size);
  Status check_peer(int peer, const char* op) const;
  std::string departed(int peer) const;  // "rank p at a:b completed its setup and freed ..."

  std::string timeout_message(const char* op, int peer, MsgType type, std::size_t size,
                              std::chrono::milliseconds bound) const;

  const int rank_;
  const int nranks_;
  const uint64_t secret_;
  Socket listener_;
  std::vector<SocketAddress> addresses_;
  const std::chrono::milliseconds timeout_;

  std::mutex mutex_;                                          // one operation at a time per mesh
  std::vector<std::unique_ptr<Outgoing>> outgoing_;           // by peer rank
  std::vector<std::unique_ptr<InboundConnection>> incoming_;  // accepted connections
  std::map<std::pair<int, uint32_t>, std::deque<std::vector<uint8_t>>> queue_;
  std::map<int, std::string> broken_;  // peer rank -> why its connection died
  std::set<int> departed_;             // peers that said GOODBYE
  bool setup_ = false;
  std::chrono::milliseconds setup_bound_{0};
  int refused_ = 0;
};

}  // namespace nccom::bootstrap
