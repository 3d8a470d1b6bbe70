// Every check in a process of its own.
//
// The supervising process (the tool as the user started it) never loads the
// plugin and starts no threads. For each check it forks: the child puts
// itself in a process group of its own, redoes what the check needs (bind,
// init, devices, the peer, the connections), runs the check and writes its
// outcome to a pipe. Meanwhile the supervisor watches the child's Progress
// (guard.h). A child that dies (a signal, or the plugin ends the process)
// fails that check as crashed; one whose driver thread shows no progress
// for the stall bound (a plugin call that did not return), or that is still
// running after the process bound, is killed and fails as hung. Either way
// the whole group (the child and a --two-process peer) is sent SIGKILL and
// reaped — the supervisor is the group's subreaper — and the next check
// runs. Interrupted (SIGINT, SIGTERM, SIGHUP), the supervisor does the same
// to the running check's group and then dies of the signal.
#pragma once

#include "checks.h"

#include <chrono>
#include <vector>

namespace nccom::plugin_check {

// A plugin call may take a while (init, 64 MiB registrations), but not
// longer than a whole wait and then some: --timeout + max(--timeout / 2, 5 s).
std::chrono::milliseconds stall_bound(std::chrono::milliseconds timeout);
// Every wait in a check's process is bounded; a process still running after
// 16 x (--timeout + 10 s) is ended all the same.
std::chrono::milliseconds process_bound(std::chrono::milliseconds timeout);

class Isolation {
 public:
  explicit Isolation(const Options& options);
  Isolation(const Isolation&) = delete;
  Isolation& operator=(const Isolation&) = delete;

  // Runs `check` after `setup` in a new process; returns its row.
  CheckRecord run(const CheckDef& check, const std::vector<CheckDef>& setup);

 private:
  Options options_;
  Progress* progress_ = nullptr;
};

}  // namespace nccom::plugin_check
