// Whether another process of this machine is still there, asked of the
// kernel through /proc/<pid>/stat opened once, while the process is known to
// be alive (after the engine cards are exchanged).
//
// Holding the file open is what makes the answer trustworthy: a read of it
// fails with ESRCH once that very process is reaped, even if its pid was
// given to a new process since (the pid space here is 32768 wide, and a
// test suite walks through it). Opening the path anew for each question
// answered for whatever holds the pid now, and a process reaped between
// the open and the read returned an empty file, which looked alive.
#pragma once

#include <sys/types.h>

namespace nrt_emu::engine {

class ProcessWatch {
 public:
  ProcessWatch() = default;
  explicit ProcessWatch(pid_t pid);
  ~ProcessWatch();
  ProcessWatch(ProcessWatch&& other) noexcept;
  ProcessWatch& operator=(ProcessWatch&& other) noexcept;
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  // True once the process has begun to exit (PF_EXITING: a SIGKILLed
  // process closes its sockets before it is a zombie, so a peer that saw the
  // close could otherwise be named alone), is a zombie or is reaped. False
  // while it runs, and when the kernel cannot say (no /proc): the caller's
  // own deadline bounds the wait then.
  bool gone() const;
  bool watching() const { return fd_ >= 0 || gone_at_open_; }

 private:
  int fd_ = -1;
  bool gone_at_open_ = false;
};

// The verdict on one read of /proc/<pid>/stat: `text` (`n` bytes; n < 0: the
// read failed with `error`). Split out so the parsing is tested alone.
bool stat_says_gone(const char* text, long n, int error);

}  // namespace nrt_emu::engine
