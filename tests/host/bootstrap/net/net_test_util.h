// Helpers shared by the bootstrap_net suites: loopback addresses, connected
// pairs, and a fixture that fails a test which leaks file descriptors.
#pragma once

#include "bootstrap/socket.h"

#include <dirent.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>

namespace nccom::bootstrap::test {

using namespace std::chrono_literals;

// Entries of /proc/self/fd (the directory's own descriptor is counted every
// time, so before/after comparisons are exact).
inline int count_open_fds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count;
}

class FdLeakChecked : public ::testing::Test {
 protected:
  void SetUp() override { fds_before_ = count_open_fds(); }
  void TearDown() override {
    EXPECT_EQ(count_open_fds(), fds_before_) << "file descriptors leaked by this scenario";
  }

 private:
  int fds_before_ = 0;
};

// "127.0.0.1" / "::1" with port 0 (SocketAddress::parse refuses port 0).
inline SocketAddress loopback(int family, uint16_t port = 0) {
  auto parsed = SocketAddress::parse(family == AF_INET6 ? "[::1]:1" : "127.0.0.1:1");
  SocketAddress address = parsed.ok() ? parsed.value() : SocketAddress{};
  address.set_port(port);
  return address;
}

// A port bound (SO_REUSEADDR) but not listening: connecting to it is refused,
// no one else can take it, and Socket::listen may still bind it later.
inline Socket reserve_port(int family = AF_INET) {
  Socket s(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int one = 1;
  const SocketAddress any = loopback(family);
  if (!s.valid() || ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(s.fd(), any.sa(), any.length()) != 0) {
    s.close();
  }
  return s;
}

struct Pair {
  Socket client;
  Socket server;
};

// A connected loopback pair; on loopback the handshake completes in the
// kernel, so connect() returns before accept() is called.
inline Pair connected_pair(int family = AF_INET) {
  Pair pair;
  auto listener = Socket::listen(loopback(family));
  if (!listener.ok()) return pair;
  auto client = Socket::connect(listener->local_address(), deadline_after(5s));
  if (!client.ok()) return pair;
  auto server = listener->accept(deadline_after(5s));
  if (!server.ok()) return pair;
  pair.client = std::move(client).value();
  pair.server = std::move(server).value();
  return pair;
}

inline std::string message_of(const Status& s) { return s.ok() ? "<ok>" : s.error().message; }

}  // namespace nccom::bootstrap::test
