// Socket failure paths: every wait ends at its deadline with NRT_TIMEOUT and
// a message naming the peer; closed peers are errors, never signals.
#include "net_test_util.h"

#include <csignal>
#include <cstring>
#include <latch>
#include <thread>
#include <vector>

namespace nccom::bootstrap::test {
namespace {

using BootstrapNetSocketErrors = FdLeakChecked;
using Ms = std::chrono::milliseconds;

// How far past its deadline a wait may end before it counts as a hang: a
// wait that ends at its deadline may be seen that much later on a loaded
// machine. (That it does not end early is the exact check.)
constexpr Ms kHang{10000};

Ms since(Clock::time_point start) { return std::chrono::duration_cast<Ms>(Clock::now() - start); }

TEST_F(BootstrapNetSocketErrors, ConnectToSilentPortTimesOutAtTheDeadline) {
  Socket reserved = reserve_port();
  ASSERT_TRUE(reserved.valid());
  const SocketAddress target = reserved.local_address();
  const Ms budget{200};
  const auto start = Clock::now();
  auto result = Socket::connect(target, start + budget);
  const Ms took = since(start);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, NRT_TIMEOUT);
  const std::string& message = result.error().message;
  EXPECT_NE(message.find("connect to " + target.to_string() + " failed after "), std::string::npos)
      << message;
  EXPECT_NE(message.find("Connection refused (is the peer running and listening?)"),
            std::string::npos)
      << message;
  EXPECT_GE(took, budget);
  EXPECT_LT(took, budget + kHang) << "the retries must end at the deadline";
}

TEST_F(BootstrapNetSocketErrors, ConnectToNoAddressIsInvalid) {
  auto result = Socket::connect(SocketAddress{}, deadline_after(1s));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, NRT_INVALID);
  EXPECT_NE(result.error().message.find("<none>"), std::string::npos);
}

TEST_F(BootstrapNetSocketErrors, ListenOnAPortInUseNamesTheAddress) {
  auto first = Socket::listen(loopback(AF_INET));
  ASSERT_TRUE(first.ok());
  const SocketAddress taken = first->local_address();
  auto second = Socket::listen(taken);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().message,
            "listen on " + taken.to_string() + ": bind: " + std::strerror(EADDRINUSE));
}

// The client starts first and is refused until the listener exists; the
// retries must then find it well before the deadline.
TEST_F(BootstrapNetSocketErrors, ListenerAppearingAfterTheClientStartedIsFound) {
  Socket reserved = reserve_port();
  ASSERT_TRUE(reserved.valid());
  const SocketAddress target = reserved.local_address();
  std::latch client_started(1);
  Result<Socket> client = make_error(NRT_FAILURE, "client thread did not run");
  std::thread connector([&] {
    client_started.count_down();
    client = Socket::connect(target, deadline_after(20s));
  });
  client_started.wait();
  auto listener = Socket::listen(target);
  ASSERT_TRUE(listener.ok()) << listener.error().message;
  auto server = listener->accept(deadline_after(20s));
  connector.join();
  ASSERT_TRUE(client.ok()) << client.error().message;
  ASSERT_TRUE(server.ok()) << server.error().message;
  const char ping = 'p';
  ASSERT_TRUE(client->send_all(&ping, 1, deadline_after(5s)).ok());
  char got = 0;
  ASSERT_TRUE(server->recv_all(&got, 1, deadline_after(5s)).ok());
  EXPECT_EQ(got, ping);
}

TEST_F(BootstrapNetSocketErrors, AcceptWithoutClientTimesOut) {
  auto listener = Socket::listen(loopback(AF_INET));
  ASSERT_TRUE(listener.ok());
  const Ms budget{100};
  const auto start = Clock::now();
  auto result = listener->accept(start + budget);
  const Ms took = since(start);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, NRT_TIMEOUT);
  const std::string prefix =
      "no connection on " + listener->local_address().to_string() + " within ";
  EXPECT_EQ(result.error().message.rfind(prefix, 0), 0u) << result.error().message;
  EXPECT_GE(took, budget);
  EXPECT_LT(took, budget + kHang);
}

TEST_F(BootstrapNetSocketErrors, PeerClosingMidMessageReportsHowFarItGot) {
  Pair pair = connected_pair();
  ASSERT_TRUE(pair.client.valid() && pair.server.valid());
  const std::string peer = pair.client.describe();
  const std::vector<char> ten(10, 'z');
  ASSERT_TRUE(pair.server.send_all(ten.data(), ten.size(), deadline_after(5s)).ok());
  pair.server.close();
  std::vector<char> buffer(100);
  const Status status = pair.client.recv_all(buffer.data(), buffer.size(), deadline_after(5s));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().status, NRT_FAILURE);
  EXPECT_EQ(status.error().message, "connection closed by " + peer + " after 10 of 100 bytes");
}

TEST_F(BootstrapNetSocketErrors, RecvFromSilentPeerTimesOut) {
  Pair pair = connected_pair();
  ASSERT_TRUE(pair.client.valid() && pair.server.valid());
  ASSERT_TRUE(pair.server.send_all("abcd", 4, deadline_after(5s)).ok());
  char buffer[16];
  const Ms budget{100};
  const auto start = Clock::now();
  const Status status = pair.client.recv_all(buffer, sizeof buffer, start + budget);
  const Ms took = since(start);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().status, NRT_TIMEOUT);
  const std::string prefix =
      "receive of 16 bytes from " + pair.client.describe() + " timed out after ";
  EXPECT_EQ(status.error().message.rfind(prefix, 0), 0u) << status.error().message;
  EXPECT_NE(status.error().message.find(" ms (4 done)"), std::string::npos) << message_of(status);
  EXPECT_GE(took, budget);
  EXPECT_LT(took, budget + kHang);
}

TEST_F(BootstrapNetSocketErrors, SendToPeerThatNeverReadsTimesOut) {
  Pair pair = connected_pair();
  ASSERT_TRUE(pair.client.valid() && pair.server.valid());
  const std::vector<char> big(64 << 20, 'q');  // far more than the socket buffers hold
  const Status status = pair.client.send_all(big.data(), big.size(), deadline_after(100ms));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().status, NRT_TIMEOUT);
  EXPECT_EQ(status.error().message.rfind("send of " + std::to_string(big.size()) + " bytes to " +
                                             pair.client.describe() + " timed out after ",
                                         0),
            0u)
      << status.error().message;
}

// Writing to a closed peer must come back as an error: with the default
// SIGPIPE disposition, a send without MSG_NOSIGNAL would kill this process.
TEST_F(BootstrapNetSocketErrors, WritingToClosedPeerRaisesNoSigpipe) {
  auto previous = std::signal(SIGPIPE, SIG_DFL);
  Pair pair = connected_pair();
  ASSERT_TRUE(pair.client.valid() && pair.server.valid());
  pair.server.close();
  const std::vector<char> chunk(4096, 'w');
  Status status;
  for (int i = 0; i < 1000 && status.ok(); ++i) {
    status = pair.client.send_all(chunk.data(), chunk.size(), deadline_after(5s));
  }
  ASSERT_FALSE(status.ok()) << "a closed peer was never reported";
  EXPECT_NE(status.error().message.find("connection closed by "), std::string::npos)
      << status.error().message;
  auto some = pair.client.send_some(chunk.data(), chunk.size());
  ASSERT_FALSE(some.ok());
  EXPECT_EQ(some.error().message.rfind("connection closed by ", 0), 0u) << some.error().message;
  std::signal(SIGPIPE, previous);
}

}  // namespace
}  // namespace nccom::bootstrap::test
