// Runs a program in a fresh child process and collects what it printed.
//
// glibc reads LD_LIBRARY_PATH once, at process start, so every loader
// scenario needs a process of its own. The child gets this process's
// environment without LD_LIBRARY_PATH and NEURON_RT_*, plus `env`.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace nccom_test {

struct ChildResult {
  int exit_code = -1;  // -1 when the child did not exit normally
  int signal = 0;      // the signal that ended it, if any
  std::string out;     // stdout
  std::string err;     // stderr
};

ChildResult run_child(const std::string& program, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env);

// The same, in two halves, for several children running at once. A child
// gets SIGTERM if the thread that started it ends first (PR_SET_PDEATHSIG):
// finish it on that thread.
struct RunningChild {
  int pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::string out;               // stdout read so far
  std::size_t consumed = 0;      // how much of `out` read_line has returned
  std::string err;               // stderr read so far (by read_err_line)
  std::size_t err_consumed = 0;  // how much of `err` read_err_line has returned
};
RunningChild start_child(const std::string& program, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env);
// The next line of the child's stdout (without '\n'); "" at EOF or timeout.
std::string read_line(RunningChild& child, std::chrono::milliseconds timeout);
// The same for its stderr (where nccom's tools send libnccom's log lines).
std::string read_err_line(RunningChild& child, std::chrono::milliseconds timeout);
// Reads the rest of both streams and reaps the child.
ChildResult finish_child(RunningChild& child);

// "key=value" lines of a child's stdout (the first '=' splits). Lines after a
// line equal to `stop` are not parsed.
std::map<std::string, std::string> parse_report(const std::string& out,
                                                const std::string& stop = "--- log ---");

// What Python's json module (a real JSON parser, run as python3 in a child
// process) says of `text` as one JSON document: "" when it parses, else its
// complaint.
std::string python_json_error(const std::string& text);

// A loopback TCP port for a root address, held (bound with SO_REUSEADDR,
// never listening) while this object lives: no other process is given it
// meanwhile — a port only found free and released could be, under ctest -j2 —
// and a bootstrap root that binds it with SO_REUSEADDR can still listen.
// port() is -1 when none could be had.
class LoopbackPort {
 public:
  LoopbackPort();
  ~LoopbackPort();
  LoopbackPort(const LoopbackPort&) = delete;
  LoopbackPort& operator=(const LoopbackPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = -1;
};

// This process's threads (/proc/self/task) and open descriptors
// (/proc/self/fd), for checks that nothing was left behind.
//
// A sanitizer's runtime may start a thread of its own the first time the
// program starts one (ThreadSanitizer's background thread does), and that
// thread is indistinguishable from the program's in /proc. Counted before
// it exists, it would look like a leak in every later count. So the first
// count in each process first starts and joins one thread and waits until
// it has left /proc/self/task: every count then includes the runtime's
// thread, and a difference between two counts is the program's.
int thread_count();
int open_fd_count();

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace nccom_test
