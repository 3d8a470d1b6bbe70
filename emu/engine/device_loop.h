// device_loop.h — the device loop's watch over its idle passes: the
// deadline and the dead peers.
#pragma once

#include "../bell.h"
#include "status.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

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

}  // namespace nrt_emu::engine
