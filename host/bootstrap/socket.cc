#include "bootstrap/socket.h"

#include "log/log.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace nccom::bootstrap {
namespace {

constexpr int kSocketFlags = SOCK_CLOEXEC | SOCK_NONBLOCK;
constexpr std::chrono::milliseconds kFirstBackoff{1};
constexpr std::chrono::milliseconds kMaxBackoff{100};

long long elapsed_ms(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

std::string errno_text(int err) { return std::strerror(err); }

// Exhausted descriptors or buffers are a resource problem, not a bug.
NRT_STATUS status_for(int err) {
  return (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) ? NRT_RESOURCE
                                                                             : NRT_FAILURE;
}

bool peer_gone(int err) { return err == EPIPE || err == ECONNRESET; }

// Errors that mean "nobody is listening there yet": worth another attempt.
bool connect_retryable(int err) {
  return err == ECONNREFUSED || err == ENETUNREACH || err == ETIMEDOUT || err == EHOSTUNREACH;
}

// Waits for `events` on `fd`; false when the deadline passed first.
bool wait_for(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, remaining_ms(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return true;  // let the following call report the error
  }
}

void set_nodelay(int fd) {
  const int one = 1;
  // Best effort: a socket without Nagle disabled still works, only slower.
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// One connect attempt: the errno that ended it (0 = connected).
int connect_once(int fd, const SocketAddress& address, Deadline deadline) {
  if (::connect(fd, address.sa(), address.length()) == 0) return 0;
  if (errno != EINPROGRESS && errno != EINTR) return errno;
  if (!wait_for(fd, POLLOUT, deadline)) return ETIMEDOUT;
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

}  // namespace

int remaining_ms(Deadline deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<long long>(ms, INT_MAX));
}

Socket::~Socket() { close(); }

Socket::Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void Socket::close() {
  // No retry on EINTR: on Linux the descriptor is released either way.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<Socket> Socket::listen(const SocketAddress& address, int backlog) {
  const std::string where = "listen on " + address.to_string();
  if (!address.valid()) return make_error(NRT_INVALID, where + ": not an IPv4/IPv6 address");
  Socket s(::socket(address.family(), SOCK_STREAM | kSocketFlags, 0));
  if (!s.valid()) return make_error(status_for(errno), where + ": socket: " + errno_text(errno));
  const int one = 1;
  if (::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
    return make_error(NRT_FAILURE, where + ": SO_REUSEADDR: " + errno_text(errno));
  }
  if (::bind(s.fd_, address.sa(), address.length()) != 0) {
    return make_error(NRT_FAILURE, where + ": bind: " + errno_text(errno));
  }
  if (::listen(s.fd_, backlog) != 0) {
    return make_error(NRT_FAILURE, where + ": listen: " + errno_text(errno));
  }
  return s;
}

Result<Socket> Socket::connect(const SocketAddress& address, Deadline deadline, Refused refused) {
  if (!address.valid()) {
    return make_error(NRT_INVALID,
                      "connect to " + address.to_string() + ": not an IPv4/IPv6 address");
  }
  const auto start = Clock::now();
  auto backoff = kFirstBackoff;
  int attempts = 0;
  int err = 0;
  for (;;) {
    ++attempts;
    Socket s(::socket(address.family(), SOCK_STREAM | kSocketFlags, 0));
    if (!s.valid()) {
      err = errno;
      break;
    }
    err = connect_once(s.fd_, address, deadline);
    if (err == 0) {
      set_nodelay(s.fd_);
      return s;
    }
    const bool final_refusal = err == ECONNREFUSED && refused == Refused::kFinal;
    if (!connect_retryable(err) || final_refusal || Clock::now() >= deadline) break;
    if (attempts == 1) {  // logged once per connect, however many retries follow
      NCCOM_INFO(log::kBootstrap, "connect to %s: %s; retrying for up to %d ms",
                 address.to_string().c_str(), errno_text(err).c_str(), remaining_ms(deadline));
    }
    s.close();
    // A retry delay, not synchronisation: poll on nothing, bounded by the deadline.
    (void)::poll(nullptr, 0, std::min(remaining_ms(deadline), static_cast<int>(backoff.count())));
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
  if (err == ECONNREFUSED && refused == Refused::kFinal) {
    return make_error(NRT_FAILURE, "connect to " + address.to_string() +
                                       " refused: nothing listens "
                                       "there any more (its process has exited)");
  }
  const bool timed_out = connect_retryable(err) && Clock::now() >= deadline;
  std::string message = "connect to " + address.to_string() + " failed after " +
                        std::to_string(attempts) + " attempts over " +
                        std::to_string(elapsed_ms(start)) + " ms: " + errno_text(err);
  if (err == ECONNREFUSED) {
    message += std::string(kRefusedHint);
  } else if (connect_retryable(err)) {
    message += std::string(kUnreachableHint);
  }
  return make_error(timed_out ? NRT_TIMEOUT : status_for(err), std::move(message));
}

Result<Socket> Socket::accept(Deadline deadline) const {
  const auto start = Clock::now();
  for (;;) {
    const int fd = ::accept4(fd_, nullptr, nullptr, kSocketFlags);
    if (fd >= 0) {
      set_nodelay(fd);
      return Socket(fd);
    }
    const int err = errno;
    // ECONNABORTED: a client gave up while queued; wait for the next one.
    if (err == EINTR || err == ECONNABORTED) continue;
    if (err != EAGAIN && err != EWOULDBLOCK) {
      return make_error(status_for(err), "accept on " + describe() + ": " + errno_text(err));
    }
    if (!wait_for(fd_, POLLIN, deadline)) {
      return make_error(NRT_TIMEOUT, "no connection on " + describe() + " within " +
                                         std::to_string(elapsed_ms(start)) + " ms");
    }
  }
}

Status Socket::send_all(const void* data, std::size_t size, Deadline deadline) const {
  const auto start = Clock::now();
  const auto* bytes = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::send(fd_, bytes + done, size - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    const int err = errno;
    if (err == EINTR) continue;
    const std::string counts = std::to_string(done) + " of " + std::to_string(size) + " bytes";
    if (peer_gone(err)) {
      return make_error(NRT_FAILURE, "connection closed by " + describe() + " after " + counts);
    }
    if (err != EAGAIN && err != EWOULDBLOCK) {
      return make_error(status_for(err), "send to " + describe() + " failed after " + counts +
                                             ": " + errno_text(err));
    }
    if (!wait_for(fd_, POLLOUT, deadline)) {
      return make_error(NRT_TIMEOUT, "send of " + std::to_string(size) + " bytes to " + describe() +
                                         " timed out after " + std::to_string(elapsed_ms(start)) +
                                         " ms (" + std::to_string(done) + " done)");
    }
  }
  return {};
}

Status Socket::recv_all(void* data, std::size_t size, Deadline deadline) const {
  const auto start = Clock::now();
  auto* bytes = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::recv(fd_, bytes + done, size - done, 0);
    const int err = n < 0 ? errno : 0;
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (err == EINTR) continue;
    const std::string counts = std::to_string(done) + " of " + std::to_string(size) + " bytes";
    if (n == 0 || peer_gone(err)) {
      return make_error(NRT_FAILURE, "connection closed by " + describe() + " after " + counts);
    }
    if (err != EAGAIN && err != EWOULDBLOCK) {
      return make_error(status_for(err), "receive from " + describe() + " failed after " + counts +
                                             ": " + errno_text(err));
    }
    if (!wait_for(fd_, POLLIN, deadline)) {
      return make_error(NRT_TIMEOUT, "receive of " + std::to_string(size) + " bytes from " +
                                         describe() + " timed out after " +
                                         std::to_string(elapsed_ms(start)) + " ms (" +
                                         std::to_string(done) + " done)");
    }
  }
  return {};
}

Result<std::size_t> Socket::send_some(const void* data, std::size_t size) const {
  if (size == 0) return std::size_t{0};
  const ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n >= 0) return static_cast<std::size_t>(n);
  const int err = errno;
  if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return std::size_t{0};
  if (peer_gone(err)) return make_error(NRT_FAILURE, "connection closed by " + describe());
  return make_error(status_for(err), "send to " + describe() + " failed: " + errno_text(err));
}

Result<std::size_t> Socket::recv_some(void* data, std::size_t size) const {
  if (size == 0) return std::size_t{0};
  const ssize_t n = ::recv(fd_, data, size, MSG_DONTWAIT);
  if (n > 0) return static_cast<std::size_t>(n);
  const int err = n < 0 ? errno : 0;
  if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return std::size_t{0};
  if (n == 0 || peer_gone(err)) {
    return make_error(NRT_FAILURE, "connection closed by " + describe());
  }
  return make_error(status_for(err), "receive from " + describe() + " failed: " + errno_text(err));
}

SocketAddress Socket::local_address() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (fd_ < 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  return SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&ss), len);
}

SocketAddress Socket::peer_address() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (fd_ < 0 || ::getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  return SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&ss), len);
}

std::string Socket::describe() const {
  if (fd_ < 0) return "<closed socket>";
  const SocketAddress peer = peer_address();
  if (peer.valid()) return peer.to_string();
  int listening = 0;
  socklen_t len = sizeof listening;
  const bool is_listener =
      ::getsockopt(fd_, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening != 0;
  // After a reset the kernel forgets the peer; the local end still identifies the link.
  return is_listener ? local_address().to_string() : "the peer of " + local_address().to_string();
}

}  // namespace nccom::bootstrap
