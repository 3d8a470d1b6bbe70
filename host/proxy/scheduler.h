// nccom::proxy::Scheduler — the passive proxy engine of one communicator. It
// owns no thread: the runtime's proxy worker calls progress() once per tick,
// and each tick advances every running op of the stream's current basic block
// by one step of its transport primitive.
//
// Lifecycle of an op (as in the original's ncclProxyArgs lists): registered by
// start() (one SEND and one RECV op per call, parked under its basic block),
// activated when a tick finds nothing running, re-armed and parked again when
// it reaches its EXEC_COMPLETE (ops are block-scoped and reused across
// executions), and released only by stop() or destruction.
//
// Thread-safety: each stream has its own lock; start/progress/stop on one
// stream serialise, different streams proceed in parallel. The transport's
// ops are only ever called under their stream's lock.
#pragma once

#include "proxy/fifo.h"
#include "proxy/progress_sink.h"

#include <nccom/util/result.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace nccom::proxy {

// ncclProxyArgs.proxyType values.
enum class Direction : int { Recv = 0, Send = 1 };

// What one tick of a primitive reports.
struct Tick {
  bool idle = true;             // nothing moved (no post, no completion)
  bool execution_done = false;  // reached EXEC_COMPLETE: park and re-arm
};

// One registered direction of one basic block: the transport's per-op state
// (the original's ncclProxyArgs plus its request tracker).
class ProxyOp {
 public:
  virtual ~ProxyOp() = default;
  virtual Result<Tick> progress() = 0;
  // Prepare the next execution: fresh requests, cursors at the start, the
  // next tick is a first touch again.
  virtual Status rearm() = 0;
  // Where the op stands, for the stall warning (e.g. "send op 3
  // (func_rel_op:12), descriptor 40 of 96, 2 requests in flight").
  virtual std::string describe() const = 0;
  // What it waits on, for the stall watcher (a transport may not know).
  virtual WaitTarget waiting_on() const { return {}; }
};

// The transport side: builds the op of one direction of a registration
// (the NET_NEURON primitives in production, test primitives in tests).
class ProxyTransport {
 public:
  virtual ~ProxyTransport() = default;
  virtual Result<std::unique_ptr<ProxyOp>> make_op(Direction dir, const BlockFifos& fifos,
                                                   uint32_t stream, uint32_t basic_block) = 0;
};

struct SchedulerSettings {
  // Who watches this communicator's streams for stalls (the health
  // service): the scheduler reports every stream's progress to it and fails
  // a stream with the verdict it hands back. nullptr: nobody watches.
  std::shared_ptr<ProgressSink> watcher;
  // Monotonic milliseconds; tests substitute a clock they advance.
  std::function<uint64_t()> now_ms;
};

struct Progress {
  bool idle = true;
  bool done = true;
};

class Scheduler {
 public:
  Scheduler(ProxyTransport& transport, SchedulerSettings settings);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // neuronStartNetworkProxy: validates the FIFOs, then registers one SEND
  // and one RECV op under `basic_block` (appending to earlier ones).
  Status start(uint32_t stream, uint32_t basic_block, const BlockFifos& fifos);

  // neuronNetworkProxyProgress: one tick (ncclProxyProgress). A failure is
  // sticky: every later tick of the stream returns it until stop().
  Result<Progress> progress(uint32_t stream, uint32_t basic_block);

  // neuronStopNetworkProxy: releases every op of the stream and resets it.
  Status stop(uint32_t stream);

  // For tests and diagnostics.
  size_t registered_ops(uint32_t stream) const;

 private:
  struct Parked {
    std::unique_ptr<ProxyOp> op;
    bool running = false;
  };
  struct Stream {
    mutable std::mutex mu;
    std::map<uint32_t, std::vector<Parked>> blocks;
    uint32_t current = kNoBlock;
    uint32_t pending = kNoBlock;
    std::optional<Error> failed;
    uint64_t last_progress_ms = 0;
    bool described = false;  // the watcher was told what this stall waits on
  };

  Status check_stream(uint32_t stream, const char* call) const;
  bool any_running(const Stream& s) const;
  // Tells the watcher how the tick went and takes its verdict (watcher set).
  void report(Stream& s, uint32_t stream, bool moved, bool finished);
  // Makes `e` the stream's sticky failure, logged once and reported.
  Error fail(Stream& s, uint32_t stream, Error e);

  ProxyTransport& transport_;
  SchedulerSettings settings_;
  std::array<Stream, kMaxStreams> streams_;
};

}  // namespace nccom::proxy
