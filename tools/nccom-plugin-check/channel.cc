#include "channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nccom::plugin_check {

Channel::~Channel() {
  if (fd_ >= 0) close(fd_);
}

Expected<> Channel::send_line(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(std::string("the peer channel is closed (") + strerror(errno) + ")");
    sent += static_cast<std::size_t>(n);
  }
  return {};
}

std::optional<std::string> Channel::take_line() {
  const auto newline = buffer_.find('\n');
  if (newline == std::string::npos) return std::nullopt;
  std::string line = buffer_.substr(0, newline);
  buffer_.erase(0, newline + 1);
  return line;
}

Expected<> Channel::fill(int wait_ms, const std::string& waiting_for) {
  pollfd p{fd_, POLLIN, 0};
  const int ready = poll(&p, 1, wait_ms);
  if (ready < 0 && errno != EINTR) return fail(std::string("poll: ") + strerror(errno));
  if (ready <= 0) return {};
  char chunk[4096];
  const ssize_t n = read(fd_, chunk, sizeof chunk);
  if (n < 0 && errno == EINTR) return {};
  if (n <= 0) return fail("the peer went away while the driver was waiting for " + waiting_for);
  buffer_.append(chunk, static_cast<std::size_t>(n));
  return {};
}

Expected<std::string> Channel::read_line(const Deadline* deadline, const std::string& waiting_for) {
  for (;;) {
    if (auto line = take_line()) return *line;
    int wait_ms = -1;
    if (deadline != nullptr) {
      if (deadline->expired()) return timeout(waiting_for);
      // Short slices, so the supervisor sees this thread is alive.
      wait_ms = static_cast<int>(std::min<long long>(deadline->remaining().count(), 100));
    }
    auto filled = fill(wait_ms, waiting_for);
    if (!filled) return filled.take_error();
  }
}

Expected<std::optional<std::string>> Channel::try_read_line() {
  if (auto line = take_line()) return line;
  auto filled = fill(0, "a line");
  if (!filled) return filled.take_error();
  return take_line();
}

}  // namespace nccom::plugin_check
