// device_loop.h — the loop every executor runs an execution in: passes over
// the device's words until they are done, and after a pass that moved
// nothing the idle tail (the network task's help, the dead peers and the
// deadline, the doorbell's wait).
#pragma once

#include "../bell.h"
#include "device_words.h"
#include "links.h"
#include "process_watch.h"
#include "status.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nrt_emu::engine {

// Watches the passes of an execution that made no progress: every 50 ms
// the processes of the ranks on this machine, and the deadline, counted
// from the first such pass. It reads the clock on every kClockPasses-th
// pass only: a spinning pass takes well under a microsecond, a sleeping one
// at most bell::Idle::kMaxSleep.
class IdleWatch {
 public:
  explicit IdleWatch(uint32_t timeout_ms) : timeout_ms_(timeout_ms) {}
  // OK to go on waiting, else the failure: a peer's process is gone, or the
  // deadline passed ("timed out after N ms waiting for " + where()).
  Status check(const std::function<std::string()>& peer_gone,
               const std::function<std::string()>& where);

  static constexpr uint32_t kClockPasses = bell::Idle::kClockPasses;

 private:
  using Clock = std::chrono::steady_clock;
  uint32_t timeout_ms_;
  uint32_t passes_ = 0;
  Clock::time_point deadline_, last_check_;
};

// What one pass over the device's words did.
struct Progress {
  bool moved = false;  // a slice, descriptor or closing word went out
  bool done = false;   // every step ran and every NET side is closed
};

// DeviceLoop: the device loop the executors share, with its knobs and its
// watch over the processes of the same-host peers.
class DeviceLoop {
 public:
  struct Settings {
    uint32_t timeout_ms = 60000;
    uint32_t spin_us = bell::kDefaultSpinUs;  // NEURON_RT_EMU_SPIN_US
    uint32_t poll_ns = bell::kDefaultPollNs;  // NEURON_RT_EMU_POLL_NS
    // NEURON_RT_EMU_PROXY_HELP: while its network task runs, the device loop
    // steps the proxy itself (nrt_emu_proxy_help) instead of waiting for the
    // worker thread.
    bool proxy_help = true;
  };
  DeviceLoop(const Links& links, const Settings& settings) : links_(links), settings_(settings) {}

  // Runs `pass` (Result<Progress>()) until it is done and `task` finished,
  // then waits for the task's end. Between passes that moved nothing it
  // watches the peers and the deadline; a timeout names `waiting_for()`.
  template <typename PassFn, typename WhereFn>
  Status run(NetTask& task, PassFn&& pass, WhereFn&& waiting_for);

  // One watch per rank: of the ranks whose process is another process of
  // this machine (threads of this process cannot die alone, other machines'
  // processes are not ours to see); the others watch nothing.
  void watch_peers(const std::vector<PeerCard>& cards, int rank);
  // "process gone: " and the watched peers whose processes are gone, or "".
  std::string peer_gone() const;

 private:
  Result<bool> tend_network(NetTask& task);
  void idle_pass(NetTask& task, bool helped, bell::Idle& idle, uint32_t seen);
  // peer_gone over a few peers per call, in turn (the idle watch's check).
  std::string some_peer_gone() const;

  const Links& links_;  // the doorbell, and the peers' cards for messages
  const Settings settings_;
  std::vector<ProcessWatch> watches_;  // by rank (watch_peers)
  mutable size_t gone_cursor_ = 0;     // some_peer_gone's next rank
};

template <typename PassFn, typename WhereFn>
Status DeviceLoop::run(NetTask& task, PassFn&& pass, WhereFn&& waiting_for) {
  IdleWatch watch(settings_.timeout_ms);
  bell::Idle idle(links_.bell(), settings_.spin_us, settings_.poll_ns);
  for (;;) {
    const uint32_t seen = idle.seen();  // before any word is looked at
    Result<Progress> progress = pass();
    if (!progress) return progress.take_error();
    if (progress->done && task.done()) break;
    auto helped = tend_network(task);  // the network task moved under this loop's help
    if (!helped) return helped.take_error();
    if (progress->moved) {
      idle.moved();
      continue;
    }
    if (Status s = watch.check([this] { return some_peer_gone(); }, waiting_for); !s) return s;
    idle_pass(task, *helped, idle, seen);
  }
  return task.finish();
}

}  // namespace nrt_emu::engine
