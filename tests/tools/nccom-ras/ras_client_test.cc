// Suite NccomRasClient: what the client takes from a health report for a
// failure message — the findings in the report's order, and one line of
// them within a budget that says how many it left to nccom-ras — and how it
// asks a service whose processes stop or exit under it (a real socket on
// loopback, served by a thread).
#include "client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace nccom::ras {
namespace {

const char* const kReport =
    "Job: 4 processes on 2 hosts\n"
    "\n"
    "Processes not answering:\n"
    "  DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed\n"
    "\n"
    "Waiting:\n"
    "  rank 0 waits for rank 3 on channel 0\n"
    "  rank 1 waits for rank 3 on channel 1\n"
    "\n"
    "Behind:\n"
    "  rank 2 is 3 executions behind\n"
    "\n"
    "Links:\n"
    "  a <-> b up\n";

TEST(NccomRasClient, FindingsAreTheThreeSectionsInOrder) {
  const std::vector<std::string> want = {
      "DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed",
      "rank 0 waits for rank 3 on channel 0", "rank 1 waits for rank 3 on channel 1",
      "rank 2 is 3 executions behind"};
  EXPECT_EQ(findings(kReport), want);
  EXPECT_TRUE(findings("Job: 2 processes on 1 host\n\nLinks:\n  a up\n").empty());
}

TEST(NccomRasClient, TheLineKeepsWholeEntriesAndCountsTheRest) {
  const std::vector<std::string> found = findings(kReport);
  EXPECT_EQ(findings_line(found, 1000, "127.0.0.1", "4000"),
            "DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed; rank 0 "
            "waits for rank 3 on channel 0; rank 1 waits for rank 3 on channel 1; rank 2 is 3 "
            "executions behind");
  EXPECT_EQ(findings_line(found, 120, "127.0.0.1", "4000"),
            "DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed; rank 0 "
            "waits for rank 3 on channel 0; 2 more (nccom-ras -h 127.0.0.1 -p 4000)");
  // The first finding is given whole even beyond the budget.
  EXPECT_EQ(findings_line(found, 10, "h", "1"),
            "DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed; 3 more "
            "(nccom-ras -h h -p 1)");
  EXPECT_EQ(findings_line({}, 10, "h", "1"), "");
}

// A listening socket on 127.0.0.1 whose thread takes connections one by
// one and hands each to the next of `serve` (then closes it).
class FakeService {
 public:
  using Serve = std::function<void(int fd)>;
  explicit FakeService(std::vector<Serve> serve) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), len), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port_ = std::to_string(ntohs(a.sin_port));
    thread_ = std::thread([this, serve = std::move(serve)] {
      for (const Serve& one : serve) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        one(c);
        ::close(c);
      }
    });
  }
  ~FakeService() {
    thread_.join();
    ::close(fd_);
  }
  const std::string& port() const { return port_; }

 private:
  int fd_ = -1;
  std::string port_;
  std::thread thread_;
};

// Reads one line from `fd` (the client's requests are short).
std::string line_from(int fd) {
  std::string line;
  char c = 0;
  while (::recv(fd, &c, 1, 0) == 1 && c != '\n') line += c;
  return line;
}

void say(int fd, const std::string& text) {
  ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

// A service that answers the protocol and sends `report`.
FakeService::Serve answering(const std::string& report) {
  return [report](int fd) {
    EXPECT_EQ(line_from(fd), "CLIENT PROTOCOL 2");
    say(fd, "SERVER PROTOCOL 2\n");
    EXPECT_EQ(line_from(fd), "TIMEOUT_MS 700");
    say(fd, "OK\n");
    EXPECT_EQ(line_from(fd), "STATUS");
    say(fd, report);
  };
}

Query to(const FakeService& s) {
  Query q;
  q.port = s.port();
  q.attempts = 3;
  q.handshake_ms = 300;
  q.timeout_ms = 700;
  return q;
}

// A process that is exiting closes the connection its kernel queued for
// it, before or after the handshake: the client takes a new connection.
TEST(NccomRasClient, AConnectionClosedBeforeTheReportIsTriedAgain) {
  FakeService service({[](int) {},
                       [](int fd) {
                         EXPECT_EQ(line_from(fd), "CLIENT PROTOCOL 2");
                         say(fd, "SERVER PROTOCOL 2\n");
                         EXPECT_EQ(line_from(fd), "TIMEOUT_MS 700");
                         say(fd, "OK\n");
                         EXPECT_EQ(line_from(fd), "STATUS");
                       },
                       answering(kReport)});
  const Answer a = ask(to(service));
  ASSERT_TRUE(a.ok) << a.error << "\n" << a.notes;
  EXPECT_EQ(a.report, kReport);
  EXPECT_EQ(a.notes,
            "the process that took the connection closed it (exiting?); trying again (1 of 3)\n"
            "the process that took the connection closed it without a report (exiting?); "
            "trying again (2 of 3)\n");
}

// A stopped process holds the connection unanswered: after the handshake
// bound, the next; past the attempts, an error that says so.
TEST(NccomRasClient, AnUnansweredHandshakeIsTriedAgainUpToTheAttempts) {
  // It answers nothing and holds the connection until the client drops it.
  auto stopped = [](int fd) {
    EXPECT_EQ(line_from(fd), "CLIENT PROTOCOL 2");
    EXPECT_EQ(line_from(fd), "");
  };
  FakeService service({stopped, stopped, stopped});
  const Answer a = ask(to(service));
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.error,
            "no process of the job answered at 127.0.0.1:" + service.port() + " after 3 attempts");
  EXPECT_NE(a.notes.find("does not answer (stopped?); trying again (3 of 3)"), std::string::npos)
      << a.notes;
}

// Something else on the port is not retried: its first line is named.
TEST(NccomRasClient, AServiceThatIsNotOursIsNamedAtOnce) {
  FakeService service({[](int fd) {
    EXPECT_EQ(line_from(fd), "CLIENT PROTOCOL 2");
    say(fd, "HTTP/1.1 400 Bad Request\r\n\r\n");
  }});
  const Answer a = ask(to(service));
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.error, "127.0.0.1:" + service.port() +
                         " did not answer as an nccom health service (\"HTTP/1.1 400 Bad "
                         "Request\r\")");
  EXPECT_EQ(a.notes, "");
}

}  // namespace
}  // namespace nccom::ras
