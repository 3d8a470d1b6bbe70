// Small POSIX socket helpers: an owning fd, addresses, and non-blocking
// partial I/O that reports what happened instead of blocking.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nccom::socket {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct SockAddr {
  sockaddr_storage storage{};
  socklen_t len = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&storage); }
  sockaddr* sa() { return reinterpret_cast<sockaddr*>(&storage); }
  std::string str() const;  // "1.2.3.4:port" / "[::1]:port"
};

enum class IoStatus { kDone, kAgain, kClosed, kError };

// Sends/receives buf[*done, len) without blocking; advances *done. kDone when
// *done == len, kAgain on EWOULDBLOCK, kClosed on orderly EOF (recv), kError
// otherwise with the errno in *err.
IoStatus send_some(int fd, const void* buf, size_t len, size_t* done, int* err);
IoStatus recv_some(int fd, void* buf, size_t len, size_t* done, int* err);
// One non-blocking read into the `count` buffers in order: kDone with the
// bytes taken in *got (fewer than asked when that was all the socket had),
// else kAgain, kClosed or kError as above.
IoStatus recv_once(int fd, const iovec* iov, int count, size_t* got, int* err);

// A non-blocking, close-on-exec TCP socket with TCP_NODELAY; invalid on error
// (errno set).
Fd open_tcp_socket(int family);

// 64 random bits from the kernel; falls back to a clock/address mix.
uint64_t random_u64();

// Milliseconds on a monotonic clock.
int64_t now_ms();

}  // namespace nccom::socket
