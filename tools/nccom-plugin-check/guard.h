// What a check's process tells its supervisor while it runs.
//
// Every check runs in a process of its own (isolate.h). Every wait in the
// tool has a deadline (Deadline), but a plugin call that never returns
// cannot be interrupted, and a plugin may crash. So the check's driver
// thread keeps a Progress record in memory it shares with the supervising
// process: what runs (the setup step or the check), the step within it,
// the plugin call it is inside and since when, and when it last showed
// progress. The supervisor reads it to end a process that made no progress
// for too long, and to word a crash or a hang; a dead or stuck process can
// still be described, as the record outlives it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace nccom::plugin_check {

class Deadline {
 public:
  explicit Deadline(std::chrono::milliseconds budget)
      : end_(std::chrono::steady_clock::now() + budget) {}
  // Also tells the supervisor that the calling thread is still making
  // progress (when it is a check's driver thread).
  bool expired() const;
  std::chrono::milliseconds remaining() const;

 private:
  std::chrono::steady_clock::time_point end_;
};

// In a MAP_SHARED page: written by the check's driver thread only, read by
// the supervisor. Times are steady_clock (CLOCK_MONOTONIC, one clock for
// every process of the machine) in nanoseconds; 0 is "not yet". The texts
// are only read once the writer is dead or stuck, so they need no lock.
struct Progress {
  std::atomic<int64_t> started_ns;        // the process began its work
  std::atomic<int64_t> check_started_ns;  // the check itself began (its setup is done)
  std::atomic<int64_t> beat_ns;           // the driver thread last showed progress
  std::atomic<int64_t> call_started_ns;   // the current plugin call began; 0 outside one
  char running[64];                       // the check, or the setup step, now running
  char step[256];                         // what the running check is doing
  char call[64];                          // the plugin call the driver thread is inside
};

namespace guard {

// Progress records in memory shared with the processes forked later.
Progress* create_shared();
void reset(Progress* progress);
// A check's process: the calling thread is its driver; its progress goes
// to `progress`. Without it (the supervisor, the --peer process) every
// call below does nothing.
void attach(Progress* progress);

// What runs now: a setup step, then (check_started) the check itself.
void running(const char* name);
void check_started();
void step(const std::string& what);

// Called by the driver thread's waits (Deadline::expired does it).
void beat();

// While it lives, the driver thread is inside plugin call `name` (a string
// literal). Other threads' calls are not recorded.
class PluginCall {
 public:
  explicit PluginCall(const char* name);
  ~PluginCall();
  PluginCall(const PluginCall&) = delete;
  PluginCall& operator=(const PluginCall&) = delete;

 private:
  bool recorded_ = false;
};

int64_t now_ns();

}  // namespace guard
}  // namespace nccom::plugin_check
