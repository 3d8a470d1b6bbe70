// ProcessGroup — many child processes run at once, each with its stdin,
// stdout and stderr on pipes, read by one poll loop so that no child ever
// blocks on a full pipe while the runner waits for another.
//
// The children get this process's environment without LD_LIBRARY_PATH and
// NEURON_RT_* (so the build tree's libraries are the ones loaded, through
// RUNPATH), plus the variables given to start().
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nccom_bench {

using Clock = std::chrono::steady_clock;

struct ChildOutput {
  std::string out;     // stdout so far
  std::string err;     // stderr so far
  int exit_code = -1;  // -1 until it exited normally
  int signal = 0;      // the signal that ended it, if any
  bool reaped = false;
};

class ProcessGroup {
 public:
  ProcessGroup() = default;
  ~ProcessGroup();  // kills and reaps whatever is still running
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Starts a child; returns its index, or -1 with `error` set.
  int start(const std::string& program, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env, std::string* error);

  // Writes `line` and a newline to the child's stdin, then closes it.
  bool send_line_and_close(int child, const std::string& line);

  // Reads output until `done()` holds or the deadline passes; false on timeout.
  bool pump_until(const std::function<bool()>& done, Clock::time_point deadline);

  // Reads everything to EOF and reaps every child; false if the deadline
  // passed first (the stragglers are then killed with SIGKILL and reaped).
  bool finish(Clock::time_point deadline);

  // The line of `child`'s stdout that starts with `prefix` ("" if none yet).
  std::string line_with(int child, const std::string& prefix) const;

  // The child closed its stdout (it exited, or is about to).
  bool stdout_closed(int child) const { return children_[child].out_fd < 0; }
  std::size_t size() const { return children_.size(); }
  const ChildOutput& output(int child) const { return children_[child].output; }

 private:
  struct Child {
    int pid = -1;
    int in_fd = -1;
    int out_fd = -1;
    int err_fd = -1;
    ChildOutput output;
  };

  // One poll over every open pipe, at most `wait`; false on a poll error.
  bool pump_once(std::chrono::milliseconds wait);
  void reap_exited(bool block);
  void kill_all();

  std::vector<Child> children_;
};

// Raises RLIMIT_NOFILE's soft limit to its hard limit; returns the new limit.
long raise_fd_limit();

}  // namespace nccom_bench
