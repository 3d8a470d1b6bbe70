// nccom::proxy::ProgressSink — how the scheduler tells whoever watches for
// stalls what each stream does. The scheduler keeps no stall clock of its
// own: it reports executions begun, moved and completed, says once per stall
// (after kDescribeAfterMs without progress) what its running ops wait on, and
// fails a stream when the watcher hands it a verdict. The health service
// implements it; a build without that service passes none, and streams are
// then watched by nobody (the runtime's own execution timeout bounds them).
//
// Thread-safety: the scheduler calls a stream's methods under that stream's
// lock, so calls for one stream never overlap; calls for different streams
// may run in parallel on different threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nccom::proxy {

// The peer a stalled op waits on (-1: unknown).
struct WaitTarget {
  int peer = -1;
  int channel = -1;
  std::string in;  // where the wait sits ("its oldest request (RECV) is in the net plugin ...")
};

// What a stalled stream's running ops wait on, described once per stall.
struct StallDescription {
  std::string ops;    // each running op's own position, "; "-separated
  WaitTarget target;  // the first op that names a peer (or none)
};

// A stream describes its stall once it has made no progress for this long.
inline constexpr uint64_t kDescribeAfterMs = 1000;

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // An execution of `block` began at `now_ms` (monotonic milliseconds).
  virtual void began(uint32_t stream, uint32_t block, uint64_t now_ms) = 0;
  // The running execution moved (a post or a completion) at `now_ms`;
  // `after_stall` when it had been described as stalled.
  virtual void moved(uint32_t stream, uint64_t now_ms, bool after_stall) = 0;
  // The running execution completed.
  virtual void completed(uint32_t stream) = 0;
  // The running execution has not moved for kDescribeAfterMs: once per stall.
  virtual void stalled(uint32_t stream, StallDescription what) = 0;
  // Asked on every tick without progress: the watcher's verdict on the
  // stall, which fails the stream with this text (nullopt: carry on).
  virtual std::optional<std::string> verdict(uint32_t stream) = 0;
  // The stream failed with this message (an asynchronous error).
  virtual void failed(uint32_t stream, const std::string& message) = 0;
  // neuronStopNetworkProxy: the stream's executions and verdict are gone.
  virtual void stopped(uint32_t stream) = 0;
};

}  // namespace nccom::proxy
