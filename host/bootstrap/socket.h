// Socket — one TCP socket (RAII) with deadline-bounded operations. Every
// blocking step (connect, accept, send, receive) takes a deadline and fails
// with NRT_TIMEOUT naming the peer and the operation when it passes; nothing
// waits forever. EINTR is retried; the fd is close-on-exec and non-blocking.
#pragma once

#include "bootstrap/socket_address.h"

#include <nccom/util/result.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace nccom::bootstrap {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline deadline_after(std::chrono::milliseconds ms) { return Clock::now() + ms; }

// Milliseconds left until `deadline` as poll() takes them: rounded up, so a
// poll never wakes just before the deadline and reports a timeout early;
// clamped to INT_MAX; 0 once it has passed.
int remaining_ms(Deadline deadline);

// How a failed connect's message ends, by its last errno: a refusal (nothing
// listens) or no answer from the network (unreachable, timed out).
inline constexpr std::string_view kRefusedHint = " (is the peer running and listening?)";
inline constexpr std::string_view kUnreachableHint =
    " (no route or no answer: is the network to it up?)";

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& other) noexcept;
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // A listening socket bound to `address` (port 0 = ephemeral). SO_REUSEADDR.
  static Result<Socket> listen(const SocketAddress& address, int backlog = 1024);

  // Connects, retrying refused/unreachable attempts with a short back-off
  // until `deadline` (the peer's listener may not exist yet). The error names
  // the address and the last errno. With `retry_refused` false a refusal is
  // final at once: for peers whose listener is known to exist, a refusal
  // means their process is gone.
  enum class Refused { kRetry, kFinal };
  static Result<Socket> connect(const SocketAddress& address, Deadline deadline,
                                Refused refused = Refused::kRetry);

  // Accepts one connection on a listening socket before `deadline`.
  Result<Socket> accept(Deadline deadline) const;

  // Sends / receives exactly `size` bytes before `deadline`. A peer that
  // closes early is an error ("connection closed by <peer> after N of M bytes").
  Status send_all(const void* data, std::size_t size, Deadline deadline) const;
  Status recv_all(void* data, std::size_t size, Deadline deadline) const;

  // Non-blocking single steps for poll-driven engines: bytes moved, 0 when the
  // call would block; a closed peer or an error is an Error.
  Result<std::size_t> send_some(const void* data, std::size_t size) const;
  Result<std::size_t> recv_some(void* data, std::size_t size) const;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  SocketAddress local_address() const;
  SocketAddress peer_address() const;
  // Human label for messages: the peer address, or the local one for a listener.
  std::string describe() const;

  void close();

 private:
  int fd_ = -1;
};

}  // namespace nccom::bootstrap
