// DeviceLoop (device_loop.h): the idle tail of a pass, the idle watch, the
// dead-peer checks.
#include "device_loop.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace nrt_emu::engine {

Status IdleWatch::check(const std::function<std::string()>& peer_gone,
                        const std::function<std::string()>& where) {
  if (passes_++ % kClockPasses != 0) return {};
  const auto now = Clock::now();
  if (passes_ == 1) {
    deadline_ = now + std::chrono::milliseconds(timeout_ms_);
    last_check_ = now;
    return {};
  }
  if (now - last_check_ > std::chrono::milliseconds(50)) {
    last_check_ = now;
    if (std::string gone = peer_gone(); !gone.empty()) return engine_error(gone);
  }
  if (now > deadline_)
    return engine_error("timed out after " + std::to_string(timeout_ms_) + " ms waiting for " +
                        where());
  return {};
}

// Between passes: the failure of a network task that finished (with the
// peers found gone), else whether this loop's help moved the running task.
Result<bool> DeviceLoop::tend_network(NetTask& task) {
  if (task.done()) {
    if (Status s = task.failure(); !s) {
      const std::string gone = peer_gone();
      return gone.empty() ? s.take_error() : engine_error(s.error().message + "; " + gone);
    }
    return false;
  }
  return settings_.proxy_help && task.help();
}

void DeviceLoop::watch_peers(const std::vector<PeerCard>& cards, int rank) {
  char me[64] = {};
  gethostname(me, sizeof me - 1);
  watches_.clear();
  watches_.resize(cards.size());
  for (size_t r = 0; r < cards.size(); ++r) {
    const PeerCard& p = cards[r];
    if (static_cast<int>(r) != rank && p.pid != static_cast<int32_t>(getpid()) &&
        std::strncmp(p.hostname, me, 64) == 0)
      watches_[r] = ProcessWatch(p.pid);
  }
}

// The ranks on this machine whose processes are gone ("" when none): the
// first one named is the lowest rank, usually the one that died first —
// the others may have exited after failing because of it.
// At most two are described; the rest are counted.
std::string DeviceLoop::peer_gone() const {
  std::string out;
  int named = 0, more = 0;
  for (size_t r = 0; r < watches_.size(); ++r) {
    if (!watches_[r].gone()) continue;
    if (named++ < 2) {
      out += (out.empty() ? "" : ", ") + links_.describe_peer(static_cast<int>(r));
    } else {
      ++more;
    }
  }
  if (more > 0) out += " and " + std::to_string(more) + " more";
  return out.empty() ? out : "process gone: " + out;
}

// A few peers per call, in turn; the full scan (and its message) only when
// one of them is gone. The idle watch calls this every 50 ms: scanning every
// same-host peer each time costs n reads of /proc per rank, n^2 per host,
// which at 256 ranks on one machine was most of its CPU.
std::string DeviceLoop::some_peer_gone() const {
  constexpr size_t kPerCall = 8;
  if (watches_.empty()) return {};
  for (size_t i = 0; i < std::min(kPerCall, watches_.size()); ++i) {
    const size_t r = gone_cursor_++ % watches_.size();
    if (watches_[r].gone()) return peer_gone();
  }
  return {};
}

// The end of a pass in which the device's own words did not move (the
// deadline was checked): while the network task runs and this loop helps
// it, it polls in place of the worker, so it does not sleep — at once again
// when the help moved the task; otherwise the doorbell's wait.
void DeviceLoop::idle_pass(NetTask& task, bool helped, bell::Idle& idle, uint32_t seen) {
  if (helped) return;
  if (settings_.proxy_help && !task.done()) {
    sched_yield();
  } else {
    idle.wait(seen);
  }
}

}  // namespace nrt_emu::engine
