// The control channel between the driver and its peer: text lines over one
// end of a socketpair (the peer being a thread or a child process). The
// driver's reads are bounded by a deadline; the peer waits for its next
// command without one.
#pragma once

#include "guard.h"
#include "outcome.h"

#include <optional>
#include <string>

namespace nccom::plugin_check {

class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}  // takes ownership of fd
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  Expected<> send_line(const std::string& line);
  // The next line without its '\n'. `deadline` nullptr: wait as long as it
  // takes. A closed channel is a Failure saying so.
  Expected<std::string> read_line(const Deadline* deadline, const std::string& waiting_for);
  // A complete line if one has arrived, without waiting.
  Expected<std::optional<std::string>> try_read_line();

 private:
  std::optional<std::string> take_line();
  Expected<> fill(int wait_ms, const std::string& waiting_for);  // one read, if ready

  int fd_;
  std::string buffer_;
};

}  // namespace nccom::plugin_check
