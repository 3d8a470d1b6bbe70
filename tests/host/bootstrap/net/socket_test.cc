// Socket: listening, connecting, moving bytes, descriptor flags and
// ownership. Failure paths live in socket_errors_test.cc.
#include "machine.h"
#include "net_test_util.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace nccom::bootstrap::test {
namespace {

using BootstrapNetSocket = FdLeakChecked;

std::vector<uint8_t> pattern(std::size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  uint32_t x = seed;
  for (auto& b : bytes) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return bytes;
}

// Client sends `size` bytes, a server thread receives and sends them back.
void echo_round_trip(int family, std::size_t size) {
  auto listener = Socket::listen(loopback(family));
  ASSERT_TRUE(listener.ok()) << listener.error().message;
  Status server_status;
  std::thread server([&] {
    auto conn = listener->accept(deadline_after(10s));
    if (!conn.ok()) {
      server_status = conn.take_error();
      return;
    }
    std::vector<uint8_t> buffer(size);
    server_status = conn->recv_all(buffer.data(), size, deadline_after(30s));
    if (server_status.ok()) {
      server_status = conn->send_all(buffer.data(), size, deadline_after(30s));
    }
  });
  const auto sent = pattern(size, static_cast<uint32_t>(size));
  std::vector<uint8_t> echoed(size);
  auto client = Socket::connect(listener->local_address(), deadline_after(10s));
  Status client_status = client.ok() ? Status{} : Status{client.error()};
  if (client.ok()) client_status = client->send_all(sent.data(), size, deadline_after(30s));
  if (client_status.ok()) {
    client_status = client->recv_all(echoed.data(), size, deadline_after(30s));
  }
  server.join();
  ASSERT_TRUE(client_status.ok()) << client_status.error().message;
  ASSERT_TRUE(server_status.ok()) << server_status.error().message;
  EXPECT_TRUE(sent == echoed) << "payload of " << size << " bytes corrupted";
}

TEST_F(BootstrapNetSocket, ListenOnEphemeralIpv4Port) {
  auto listener = Socket::listen(loopback(AF_INET));
  ASSERT_TRUE(listener.ok()) << listener.error().message;
  const SocketAddress bound = listener->local_address();
  EXPECT_EQ(bound.family(), AF_INET);
  EXPECT_NE(bound.port(), 0);
  EXPECT_TRUE(bound.is_loopback());
  EXPECT_EQ(listener->describe(), bound.to_string());  // a listener names itself
}

TEST_F(BootstrapNetSocket, ListenOnEphemeralIpv6PortAndRoundTrip) {
  if (std::string why = nccom_test::machine::ipv6_loopback(); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kIpv6Loopback) << why;
  auto listener = Socket::listen(loopback(AF_INET6));
  ASSERT_TRUE(listener.ok()) << "the machine binds [::1]:0: " << listener.error().message;
  EXPECT_EQ(listener->local_address().family(), AF_INET6);
  EXPECT_NE(listener->local_address().port(), 0);
  listener->close();
  echo_round_trip(AF_INET6, 100000);
}

class BootstrapNetRoundTrip : public FdLeakChecked,
                              public ::testing::WithParamInterface<std::size_t> {};

TEST_P(BootstrapNetRoundTrip, EchoesEveryByte) { echo_round_trip(AF_INET, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Sizes, BootstrapNetRoundTrip,
                         ::testing::Values(std::size_t{1}, std::size_t{28}, std::size_t{4096},
                                           std::size_t{65537}, std::size_t{1} << 20,
                                           std::size_t{16} << 20));

TEST_F(BootstrapNetSocket, DescriptorsAreCloexecNonBlockingAndNoDelay) {
  auto listener = Socket::listen(loopback(AF_INET));
  ASSERT_TRUE(listener.ok()) << listener.error().message;
  auto client = Socket::connect(listener->local_address(), deadline_after(5s));
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto server = listener->accept(deadline_after(5s));
  ASSERT_TRUE(server.ok()) << server.error().message;
  for (const Socket* s : {&listener.value(), &client.value(), &server.value()}) {
    EXPECT_TRUE(::fcntl(s->fd(), F_GETFD) & FD_CLOEXEC);
    EXPECT_TRUE(::fcntl(s->fd(), F_GETFL) & O_NONBLOCK);
  }
  for (const Socket* s : {&client.value(), &server.value()}) {
    int nodelay = 0;
    socklen_t len = sizeof nodelay;
    ASSERT_EQ(::getsockopt(s->fd(), IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
    EXPECT_NE(nodelay, 0);
  }
  EXPECT_EQ(client->describe(), listener->local_address().to_string());
  EXPECT_EQ(server->describe(), client->local_address().to_string());
  EXPECT_EQ(client->peer_address(), listener->local_address());
}

TEST_F(BootstrapNetSocket, MoveTransfersOwnershipAndCloseIsIdempotent) {
  auto listener = Socket::listen(loopback(AF_INET));
  ASSERT_TRUE(listener.ok());
  Socket a = std::move(listener).value();
  const int fd = a.fd();
  Socket b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(b.fd(), fd);
  Pair pair = connected_pair();
  ASSERT_TRUE(pair.client.valid());
  b = std::move(pair.client);  // closes the listener, takes the client
  EXPECT_TRUE(b.valid());
  EXPECT_FALSE(pair.client.valid());  // NOLINT(bugprone-use-after-move)
  b.close();
  b.close();
  EXPECT_FALSE(b.valid());
  EXPECT_EQ(b.describe(), "<closed socket>");
}

TEST_F(BootstrapNetSocket, SendSomeAndRecvSomeAreSingleNonBlockingSteps) {
  Pair pair = connected_pair();
  ASSERT_TRUE(pair.client.valid() && pair.server.valid());
  char buffer[64] = {};
  auto nothing = pair.server.recv_some(buffer, sizeof buffer);
  ASSERT_TRUE(nothing.ok()) << nothing.error().message;
  EXPECT_EQ(*nothing, 0u) << "recv_some on an idle socket would block: 0";
  auto zero = pair.client.send_some("x", 0);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(*zero, 0u);

  auto sent = pair.client.send_some("hello", 5);
  ASSERT_TRUE(sent.ok()) << sent.error().message;
  EXPECT_EQ(*sent, 5u);
  pollfd p{pair.server.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  auto got = pair.server.recv_some(buffer, sizeof buffer);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(std::string(buffer, *got), "hello");

  // Nobody reads: the send buffer fills, then send_some reports 0, not an error.
  const std::vector<uint8_t> chunk(1 << 20, 0xab);
  std::size_t total = 0;
  for (int i = 0; i < 1024; ++i) {
    auto n = pair.client.send_some(chunk.data(), chunk.size());
    ASSERT_TRUE(n.ok()) << n.error().message;
    if (*n == 0) break;
    total += *n;
  }
  EXPECT_GT(total, 0u);
  auto full = pair.client.send_some(chunk.data(), chunk.size());
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*full, 0u);

  // Orderly close with nothing left to read: an error naming the peer.
  Pair idle = connected_pair();
  ASSERT_TRUE(idle.client.valid() && idle.server.valid());
  const std::string peer = idle.server.describe();
  idle.client.close();
  pollfd q{idle.server.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&q, 1, 5000), 1);
  auto closed = idle.server.recv_some(buffer, sizeof buffer);
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.error().message, "connection closed by " + peer);
}

}  // namespace
}  // namespace nccom::bootstrap::test
