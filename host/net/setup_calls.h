// nccom::net::SetupCalls — a plugin's connect and accept, run where the host
// can give up on them.
//
// A v4 plugin's connect and accept block until the connection is made (the
// v4 contract), and so do those of plugins derived from NCCL's socket code,
// whatever version they claim. Called on the communicator's thread, one such
// call that never returns hangs setup for ever: no deadline can fire. Here
// each call runs on a helper thread of its own. The caller keeps v6
// semantics: connect/accept answer NULL ("call again") while the helper is
// inside the plugin, and the caller's next call with the same handle (or
// listen comm) collects the result — so the host's connect loop, its
// deadline and its message apply to every plugin alike.
//
// Rules the helpers keep:
//  - one call at a time per handle and per listen comm; the plugin is never
//    called concurrently on one object;
//  - connect works on the helper's own copy of the handle (plugins keep
//    their connect stage in it), copied back when the result is collected,
//    so a caller that gives up and frees its handle is never written to;
//  - close_listen while an accept runs on that listen comm is deferred: the
//    helper closes what the accept returns (if anything) and then the
//    listen comm, when the plugin lets go;
//  - a connect whose caller went away (its handle buffer reused for another
//    handle, or its result left uncollected for 30 s) has its send comm
//    closed by the host;
//  - a call still inside the plugin when the host gives up keeps its thread
//    until the plugin returns (a thread cannot be taken out of foreign code);
//    in_flight() names it, and the Net is never unloaded meanwhile (the
//    process's Net lives until exit; a Net destroyed with calls still
//    inside its plugin — only tests destroy Nets — is a caller's bug).
//
// Cost: a thread start and join per connect/accept call (tens of
// microseconds), and each call waits at most kCollectWait for its helper
// before answering NULL.
#pragma once

#include "net/net.h"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace nccom::net {

class SetupCalls {
 public:
  // How long a call waits for its helper before answering "call again".
  static constexpr std::chrono::microseconds kCollectWait{1000};

  // `stale`: how long a finished connect may wait for its caller before the
  // host closes its send comm (tests shorten it).
  explicit SetupCalls(Net& net, std::chrono::milliseconds stale = std::chrono::seconds(30));
  ~SetupCalls();
  SetupCalls(const SetupCalls&) = delete;
  SetupCalls& operator=(const SetupCalls&) = delete;

  ncclResult_t connect(int dev, void* handle, void** send_comm);
  ncclResult_t accept(void* listen_comm, void** recv_comm);
  ncclResult_t close_listen(void* listen_comm);

  struct InFlight {
    std::string call;  // "connect (device 0)", "accept"
    std::chrono::milliseconds running{0};
  };
  // Calls whose helper is still inside the plugin, oldest first.
  std::vector<InFlight> in_flight() const;
  // Whether a connect on this handle buffer (or an accept on this listen
  // comm) is inside the plugin right now.
  bool running(const void* handle_or_listen_comm) const;
  // Helper threads that exist (inside the plugin or about to be joined).
  std::size_t helpers() const;

  struct State;

 private:
  void close_stale();
  std::shared_ptr<State> state_;
  std::chrono::milliseconds stale_;
};

// A line for error messages: "the plugin "<name>" (<layout>, <origin>) has
// N call(s) that have not returned: accept for 5003 ms, ..." or "" when none.
std::string describe_in_flight(Net& net);

}  // namespace nccom::net
