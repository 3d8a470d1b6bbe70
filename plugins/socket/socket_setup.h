// Connection setup: listen, connect, accept. Everything is a non-blocking
// state machine polled by the caller (v5/v6 semantics: ncclSuccess with a
// NULL comm means "not yet, call again"); the v4 entry points wrap the same
// machines in a bounded wait (kBlockingTimeoutMs).
//
// A connect opens 1 + nsocks_per_thread x nthreads TCP sockets to the
// listener and sends a Hello on each (the listen magic, a random connection
// id, the socket's index, the counts and the eager offer). The listener groups sockets by
// connection id and returns a RecvComm once a group is complete; sockets
// presenting the wrong magic or malformed hellos are closed and logged.
#pragma once

#include "socket_comm.h"
#include "socket_io.h"

#include <nccom/net_common.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace nccom::socket {

inline constexpr uint32_t kListenCommMarker = 0x4e54534c;  // "LSTN"
// Bound of a blocking (v4) connect/accept, of a non-blocking connect, and of
// a half-arrived connection on the listener.
inline constexpr int64_t kSetupTimeoutMs = 30000;

class ListenComm {
 public:
  ~ListenComm() { marker_ = 0; }
  static ListenComm* from_handle(void* handle);

  // Binds to device `dev`, writes the WireHandle into `handle`.
  static ncclResult_t create(int dev, void* handle, ListenComm** out);
  // Non-blocking: *out stays NULL until a whole connection has arrived.
  ncclResult_t accept(RecvComm** out);
  // Waits up to kSetupTimeoutMs.
  ncclResult_t accept_blocking(RecvComm** out);

 private:
  struct Incoming {
    Fd fd;
    Hello hello{};
    size_t got = 0;
    int64_t since_ms = 0;
  };
  struct Group {
    std::vector<Fd> fds;  // by hello index; 0 is the control socket
    int nsocks_per_thread = 0;
    int nthreads = 0;
    EagerOffer eager;  // from the control socket's hello
    size_t arrived = 0;
    int64_t since_ms = 0;
  };

  ListenComm() = default;
  void accept_new_sockets();
  void read_hellos();
  void file(Incoming& in);
  void expire_stale();
  ncclResult_t take_complete_group(RecvComm** out);

  uint32_t marker_ = kListenCommMarker;
  std::mutex mutex_;
  Fd fd_;
  uint64_t magic_ = 0;
  std::string addr_;
  std::vector<Incoming> incoming_;
  std::map<uint64_t, Group> groups_;  // by connection id
};

// connect for v5/v6: non-blocking, progress kept in a process-local registry
// keyed by the handle's connect_token.
ncclResult_t connect_nonblocking(void* handle, SendComm** out);
// connect for v4: waits up to kSetupTimeoutMs; does not write the handle.
ncclResult_t connect_blocking(const void* handle, SendComm** out);
// Drops connects that were started and never finished (fini).
void connectors_fini();

}  // namespace nccom::socket
