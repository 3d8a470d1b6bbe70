// The tool's last line of defence against the plugin it examines.
//
// Every wait in the tool has a deadline (Deadline), but a plugin call that
// never returns cannot be interrupted, and a plugin may crash. The guard
// knows which check and step are running; a watchdog thread ends the process
// with "FAIL <check>: timed out waiting for <step>" when the driver thread
// has made no progress for too long, and a crash handler prints the same
// line with the signal before the process dies of it.
#pragma once

#include <chrono>
#include <string>

namespace nccom::plugin_check {

class Deadline {
 public:
  explicit Deadline(std::chrono::milliseconds budget)
      : end_(std::chrono::steady_clock::now() + budget) {}
  // Also tells the watchdog that the calling thread is still making progress.
  bool expired() const;
  std::chrono::milliseconds remaining() const;

 private:
  std::chrono::steady_clock::time_point end_;
};

namespace guard {

// Installs the crash handler and starts the watchdog: the driver thread (the
// caller) must show progress at least every `stall_limit`. The watchdog
// only acts while a check is running (see running()); a zero limit starts
// no watchdog (the peer process, which waits for commands without end).
void install(std::chrono::milliseconds stall_limit);

// What is running now, for the messages; `check` must be a string literal
// or otherwise outlive the run. nullptr check: nothing is running.
void running(const char* check);
void step(const std::string& what);

// Called by the driver thread's waits (Deadline::expired does it).
void beat();

}  // namespace guard
}  // namespace nccom::plugin_check
