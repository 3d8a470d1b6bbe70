// What the health service reads of /proc to tell its job's nccom-ras
// listeners from another job's: the listener rows of /proc/net/tcp, the
// sockets a process holds, and which process started first — on made-up
// text and on real sockets and processes.
#include "health/port_share.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace nccom::health::engine;

// Rows as the kernel prints them: a listener on 127.0.0.1:28028 (0x6D7C),
// one on 28029, a connection from 28028 (not a listener), a v6 listener on
// [::]:28028, and lines that are not rows.
const char kTcp[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode\n"
    "   0: 0100007F:6D7C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
    "0 41001 1 0000000000000000 100 0 0 10 0\n"
    "   1: 0100007F:6D7D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
    "0 41002 1 0000000000000000 100 0 0 10 0\n"
    "   2: 0100007F:6D7C 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        "
    "0 41003 1 0000000000000000 20 4 30 10 -1\n"
    "garbage\n"
    "   3: 0100007F:ZZZZ 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
    "0 41004 1\n"
    "   4: 0100007F:6D7C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
    "0 notanumber 1\n";
const char kTcp6[] =
    "  sl  local_address                         remote_address                        st "
    "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000000000000000000000000000:6D7C 00000000000000000000000000000000:0000 0A "
    "00000000:00000000 00:00000000 00000000     0        0 52001 1 0000000000000000 100 0 0 "
    "10 0\n";

TEST(PortShare, ListenerRowsAreReadByPortAndState) {
  EXPECT_EQ(listener_inodes(kTcp, 28028), std::vector<uint32_t>{41001});
  EXPECT_EQ(listener_inodes(kTcp, 28029), std::vector<uint32_t>{41002});
  EXPECT_TRUE(listener_inodes(kTcp, 28030).empty());
  EXPECT_EQ(listener_inodes(kTcp6, 28028), std::vector<uint32_t>{52001});
  EXPECT_TRUE(listener_inodes("", 28028).empty());
}

class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) == 0 && ::listen(fd_, 4) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port_ = ntohs(a.sin_port);
    }
  }
  ~Listener() { ::close(fd_); }
  int fd() const { return fd_; }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

TEST(PortShare, ARealListenerIsFoundAndItsHolderIsThisProcess) {
  Listener l;
  ASSERT_NE(l.port(), 0);
  const uint32_t inode = socket_inode(l.fd());
  ASSERT_NE(inode, 0u);
  const auto on_port = listeners_on(l.port());
  EXPECT_NE(std::find(on_port.begin(), on_port.end(), inode), on_port.end());

  const auto mine = inode_holders({inode}, {static_cast<int>(getpid())});
  ASSERT_EQ(mine.count(inode), 1u);
  EXPECT_EQ(mine.at(inode), getpid());
  // Looked for among every process.
  const auto anyone = inode_holders({inode}, {});
  ASSERT_EQ(anyone.count(inode), 1u);
  EXPECT_EQ(anyone.at(inode), getpid());
  // Not held by a process that is not given.
  EXPECT_TRUE(inode_holders({inode}, {static_cast<int>(getppid())}).empty());
}

TEST(PortShare, AClosedListenerIsGone) {
  uint16_t port = 0;
  uint32_t inode = 0;
  {
    Listener l;
    port = l.port();
    inode = socket_inode(l.fd());
  }
  ASSERT_NE(port, 0);
  const auto on_port = listeners_on(port);
  EXPECT_EQ(std::find(on_port.begin(), on_port.end(), inode), on_port.end());
}

TEST(PortShare, TheProcessThatStartedFirstIsSenior) {
  // A child started after this process: this one is senior, whatever the pids.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c = 0;
    ::close(ready[1]);
    [[maybe_unused]] ssize_t n = ::read(ready[0], &c, 1);  // until the parent is done
    _exit(0);
  }
  ::close(ready[0]);
  const int me = static_cast<int>(getpid());
  EXPECT_GT(start_ticks(me), 0u);
  EXPECT_GE(start_ticks(child), start_ticks(me));
  const Seniority parent = seniority({me});
  const Seniority young = seniority({child});
  if (start_ticks(child) == start_ticks(me)) {
    // Started within one clock tick: the smaller pid decides, the same way on
    // both sides.
    EXPECT_EQ(parent < young, me < child);
    EXPECT_EQ(young < parent, child < me);
  } else {
    EXPECT_TRUE(parent < young);
    EXPECT_FALSE(young < parent);
  }
  // A group is as senior as its oldest member.
  EXPECT_FALSE(young < seniority({child, me}));
  ::close(ready[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  // A process that is gone has no start time.
  EXPECT_EQ(start_ticks(child), 0u);
  // Unknown is taken as the oldest.
  EXPECT_TRUE(Seniority{} < parent);
}

}  // namespace
