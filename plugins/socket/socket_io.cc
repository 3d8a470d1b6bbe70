#include "socket_io.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace nccom::socket {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

int Fd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::string SockAddr::str() const {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (family() == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&storage);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (family() == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
  }
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

IoStatus send_some(int fd, const void* buf, size_t len, size_t* done, int* err) {
  const char* p = static_cast<const char*>(buf);
  while (*done < len) {
    ssize_t n = ::send(fd, p + *done, len - *done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      *done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return IoStatus::kAgain;
    } else {
      *err = n < 0 ? errno : EIO;
      return IoStatus::kError;
    }
  }
  return IoStatus::kDone;
}

IoStatus recv_some(int fd, void* buf, size_t len, size_t* done, int* err) {
  char* p = static_cast<char*>(buf);
  while (*done < len) {
    ssize_t n = ::recv(fd, p + *done, len - *done, MSG_DONTWAIT);
    if (n > 0) {
      *done += static_cast<size_t>(n);
    } else if (n == 0) {
      return IoStatus::kClosed;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return IoStatus::kAgain;
    } else {
      *err = errno;
      return IoStatus::kError;
    }
  }
  return IoStatus::kDone;
}

IoStatus recv_once(int fd, const iovec* iov, int count, size_t* got, int* err) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = static_cast<size_t>(count);
  for (;;) {
    ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
    if (n > 0) {
      *got = static_cast<size_t>(n);
      return IoStatus::kDone;
    }
    if (n == 0) return IoStatus::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return IoStatus::kAgain;
    *err = errno;
    return IoStatus::kError;
  }
}

Fd open_tcp_socket(int family) {
  Fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  int one = 1;
  // Best effort: a socket without TCP_NODELAY still works, only slower.
  (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

uint64_t random_u64() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof value, 0) == static_cast<ssize_t>(sizeof value)) return value;
  auto ticks =
      static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return ticks * 0x9e3779b97f4a7c15ull ^ reinterpret_cast<uintptr_t>(&value);
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace nccom::socket
