#include "process_watch.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nrt_emu::engine {

namespace {
constexpr unsigned long kPfExiting = 0x4;  // the kernel's PF_EXITING
}

bool stat_says_gone(const char* text, long n, int error) {
  if (n < 0) return error == ESRCH;  // reaped; another error says nothing
  // "pid (name) S ppid pgrp session tty_nr tpgid flags ...": the name may
  // hold spaces and parentheses, so the state follows the last ')'.
  const char* close_paren = nullptr;
  for (long i = 0; i < n; ++i) {
    if (text[i] == ')') close_paren = text + i;
  }
  if (close_paren == nullptr || close_paren + 3 >= text + n) return false;
  const char state = close_paren[2];
  if (state == 'Z' || state == 'X' || state == 'x') return true;
  unsigned long flags = 0;
  return std::sscanf(close_paren + 3, " %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
         (flags & kPfExiting) != 0;
}

ProcessWatch::ProcessWatch(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) gone_at_open_ = errno == ENOENT || errno == ESRCH;
}

ProcessWatch::~ProcessWatch() {
  if (fd_ >= 0) ::close(fd_);
}

ProcessWatch::ProcessWatch(ProcessWatch&& other) noexcept
    : fd_(other.fd_), gone_at_open_(other.gone_at_open_) {
  other.fd_ = -1;
}

ProcessWatch& ProcessWatch::operator=(ProcessWatch&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    gone_at_open_ = other.gone_at_open_;
    other.fd_ = -1;
  }
  return *this;
}

bool ProcessWatch::gone() const {
  if (gone_at_open_) return true;
  if (fd_ < 0) return false;
  char buf[512];
  const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
  const int error = errno;
  if (n >= 0) buf[n] = '\0';
  return stat_says_gone(buf, static_cast<long>(n), error);
}

}  // namespace nrt_emu::engine
