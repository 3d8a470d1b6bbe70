// The health service end to end, 4 ranks on 2 emulated hosts: a rank stopped
// (SIGSTOP: a process that keeps its sockets and does nothing), killed or
// slowed from outside, as an operator would see it — through nccom-ras and
// through the ranks' own messages.
#include "json_check.h"
#include "ras_support.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>

namespace {

using namespace ras_test;
using namespace std::chrono_literals;

// How much later than the keep-alive timeout a stopped rank may be named
// unresponsive: its peers' engines and nccom-ras's queries may wait for a
// CPU on a loaded machine. Only a detection that never comes takes longer.
constexpr int kNamedLateMs = 15000;

const std::vector<std::string> kLongAllReduce = {
    "-r", "4", "-N", "2", "-b", "8", "-e", "8", "-n", "10000", "-w", "1", "--check", "allr"};

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// One line from `fd` (without the newline).
std::string read_line(int fd) {
  std::string line;
  char c = 0;
  while (::recv(fd, &c, 1, 0) == 1 && c != '\n') line += c;
  return line;
}

// The job as nccom-ras describes it while nothing is wrong: one report
// naming all four processes on both hosts, as text and as valid JSON.
TEST(NccomRas, DescribesARunningJobAsTextAndJson) {
  Gate gate;
  Job job(kHeldAllReduce, gate.env());
  const std::string json = running(job, 4, 10, 60s);
  ASSERT_TRUE(pid_of(json, 3)) << json;
  std::string why;
  EXPECT_TRUE(json_check::valid(json, &why)) << why << "\n" << json;
  EXPECT_EQ(count(json, "\"state\":\"running\""), 4) << json;
  // Its stdout is the JSON object whatever the log settings.
  for (const char* level : {"VERSION", "WARN", "INFO", "TRACE"}) {
    const auto at_level = job.ras(
        {"--json"},
        {{"NCCL_DEBUG", level}, {"NCCL_DEBUG_SUBSYS", "ALL"}, {"NCCOM_DEBUG_STREAM", "stdout"}});
    ASSERT_EQ(at_level.exit_code, 0) << level << ": " << at_level.err;
    EXPECT_TRUE(json_check::valid(at_level.out, &why)) << level << ": " << why << "\n"
                                                       << at_level.out;
  }
  const auto text = job.ras({"-v"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("4 processes on 2 hosts"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Processes not answering: none"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("4 ranks: 4 running"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Errors: none"), std::string::npos) << text.out;

  // The exchange NVIDIA's ncclras makes, byte for byte.
  const int fd = connect_to(job.port());
  ASSERT_GE(fd, 0);
  auto say = [fd](const std::string& line) {
    return ::send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size());
  };
  ASSERT_TRUE(say("CLIENT PROTOCOL 2\n"));
  EXPECT_EQ(read_line(fd), "SERVER PROTOCOL 2");
  ASSERT_TRUE(say("TIMEOUT 5\n"));
  EXPECT_EQ(read_line(fd), "OK");
  ASSERT_TRUE(say("SET FORMAT json\n"));
  EXPECT_EQ(read_line(fd), "OK");
  ASSERT_TRUE(say("VERBOSE STATUS\n"));
  const std::string report = read_all(fd);
  ::close(fd);
  EXPECT_TRUE(json_check::valid(report, &why)) << why << "\n" << report;
  EXPECT_EQ(count(report, "\"state\":\"running\""), 4) << report;

  gate.open();
  auto done = job.finish();
  EXPECT_EQ(done.exit_code, 0) << done.out << done.err;
}

// SIGSTOP rank 1 mid-run: nccom-ras names it unresponsive once the
// keep-alive timeout has passed (bounded only against a hang), the rank
// that receives from it over the network names it in its stall WARN, and
// after SIGCONT the job completes with correct results.
TEST(NccomRas, AStoppedRankIsUnresponsiveAndTheJobCompletesAfterSigcont) {
  Gate gate;
  Job job(kHeldAllReduce,
          gate.env({{"NCCOM_HEALTH_STALL_WARN_S", "1"}, {"NCCOM_HEALTH_STALL_FAIL_S", "0"}}));
  const std::string json = running(job, 4, 20, 60s);
  const auto victim = pid_of(json, 1);
  ASSERT_TRUE(victim) << json;
  std::string report;
  const long to_unresponsive = stop_until_unresponsive(
      job, *victim, report, std::chrono::milliseconds(kKeepAliveTimeoutMs + kNamedLateMs));
  ASSERT_GE(to_unresponsive, 0) << report;
  EXPECT_LE(to_unresponsive, kKeepAliveTimeoutMs + kNamedLateMs) << report;
  ::testing::Test::RecordProperty("sigstop_to_unresponsive_ms", std::to_string(to_unresponsive));
  std::printf("SIGSTOP -> nccom-ras says unresponsive: %ld ms\n", to_unresponsive);

  // Someone waits on it, and the report says so.
  const std::string waits = "waits on rank 1 (host ";
  ASSERT_TRUE(eventually(
      [&] {
        report = job.ras({"--timeout-ms", "300"}).out;
        return report.find(waits) != std::string::npos &&
               report.find("pid " + std::to_string(*victim) + ") [unresponsive]") !=
                   std::string::npos &&
               report.find("(health.stall_warn_s): waiting on rank 1 (host ") != std::string::npos;
      },
      20s))
      << report;

  job.resume(*victim);
  gate.open();
  const auto done = job.finish();
  EXPECT_EQ(done.exit_code, 0) << done.out << done.err;
  const std::string all = done.out + done.err;
  // The stall WARN of a rank that receives from it names it and its state.
  EXPECT_NE(all.find("(health.stall_warn_s): waiting on rank 1 (host "), std::string::npos) << all;
  EXPECT_NE(all.find("pid " + std::to_string(*victim) + "): unresponsive"), std::string::npos)
      << all;
  // The stopped process itself, once resumed, knows it was away. That it
  // then times its peers' silences and its stall clocks afresh is checked
  // where the absence can be controlled (HealthLink.ATimeNotScheduled…):
  // here, on a loaded machine, a resumed process may truly find a starved
  // peer silent or a stream waiting, and would rightly say so.
  const std::string mine = ":" + std::to_string(*victim) + ":";
  bool knew = false;
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(mine) == std::string::npos) continue;
    knew = knew || line.find("health: this process was not scheduled for ") != std::string::npos;
  }
  EXPECT_TRUE(knew) << all;
  // The ranks leave together at the end with goodbyes: no one is called dead.
  EXPECT_EQ(all.find(" is dead: "), std::string::npos) << all;
  // The table was printed, and --check found every element right (a wrong
  // one exits 3).
  EXPECT_NE(all.find("#wrong"), std::string::npos) << all;
}

// With a short health.stall_fail_s the ranks that wait on a stopped rank
// fail, naming it; nccom-test's failure line carries the health view.
TEST(NccomRas, AStallPastStallFailFailsTheWaitingRanksNamingTheStoppedOne) {
  Job job(kLongAllReduce, {{"NCCOM_HEALTH_STALL_WARN_S", "1"}, {"NCCOM_HEALTH_STALL_FAIL_S", "2"}});
  const std::string json = running(job, 4, 20, 60s);
  const auto victim = pid_of(json, 1);
  ASSERT_TRUE(victim) << json;
  job.stop(*victim);
  expect_stall_failure_naming(job.finish(), *victim);
}

// SIGKILL rank 2 mid-run: its neighbours on the health mesh say it is dead
// at once, and the failure line carries the health view naming it dead.
TEST(NccomRas, AKilledRankIsDead) {
  Job job(kLongAllReduce);
  const std::string json = running(job, 4, 20, 60s);
  const auto victim = pid_of(json, 2);
  ASSERT_TRUE(victim) << json;
  ::kill(*victim, SIGKILL);
  const auto done = job.finish();
  const std::string all = done.out + done.err;
  EXPECT_EQ(done.exit_code, 1) << all;
  EXPECT_NE(all.find("pid " + std::to_string(*victim) + ") is dead: "), std::string::npos) << all;
  // Some rank's failure line carries the health view naming it dead. A rank
  // that failed first may have exited meanwhile, and is then listed too, in
  // any order.
  bool named = false;
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t view = line.find("the health service says: ");
    named = named ||
            (view != std::string::npos &&
             line.find("DEAD: pid " + std::to_string(*victim) + " ", view) != std::string::npos);
  }
  EXPECT_TRUE(named) << all;
}

// At a clean end of a job larger than a process's ring neighbours (each
// links to 2), processes leave in any order: one whose ring reshapes links to
// a process that already left without telling it. The goodbyes are passed
// on, so no one is called dead or unresponsive. Three jobs: the order of
// exits differs from run to run.
TEST(NccomRas, ACleanEndOfALargerJobCallsNoOneDead) {
  for (int run = 0; run < 3; ++run) {
    Job job({"-r", "8", "-N", "2", "-b", "8", "-e", "8", "-n", "5", "-w", "1", "allr"});
    const auto done = job.finish();
    const std::string all = done.out + done.err;
    ASSERT_EQ(done.exit_code, 0) << all;
    EXPECT_EQ(count(all, " is dead: "), 0) << "run " << run << ":\n" << all;
    EXPECT_EQ(count(all, " is unresponsive: "), 0) << "run " << run << ":\n" << all;
  }
}

// A rank delayed before each call (a test seam in nccom-test, not a sleep
// in this test) is the one nccom-ras calls behind, report after report; the
// others, which only look behind when the slow rank is read after them and
// has moved on meanwhile, are not (the report orders the answers by time).
TEST(NccomRas, ASlowRankIsBehind) {
  Job job({"-r", "4", "-N", "2", "-b", "8", "-e", "8", "-n", "30", "-w", "1", "allr"},
          {{"NCCOM_TEST_DEBUG_SLOW_RANK", "3:250"}});
  const std::string json = running(job, 4, 3, 60s);
  const auto slow = pid_of(json, 3);
  ASSERT_TRUE(slow) << json;
  int reports = 0;
  int slow_behind = 0;
  int others_behind = 0;
  std::string last;
  for (int i = 0; i < 8; ++i) {
    const auto r = job.ras();
    if (r.exit_code != 0) break;  // the job ended
    ++reports;
    last = r.out;
    if (r.out.find("rank 3 (host ") != std::string::npos &&
        r.out.find("pid " + std::to_string(*slow) + ") of comm") != std::string::npos &&
        r.out.find("began ") != std::string::npos)
      ++slow_behind;
    for (int other = 0; other < 3; ++other) {
      const std::string who = "\n  rank " + std::to_string(other) + " (host ";
      const std::size_t behind = r.out.find("\nBehind:");
      const std::size_t waiting = r.out.find("\nWaiting:");
      const std::size_t at = r.out.find(who, behind);
      if (at != std::string::npos && at < waiting) ++others_behind;
    }
  }
  ASSERT_GE(reports, 4) << last;
  EXPECT_GE(slow_behind * 4, reports * 3)
      << "rank 3 behind in " << slow_behind << " of " << reports << " reports; last:\n"
      << last;
  EXPECT_LE(others_behind, reports / 4) << last;
  const auto done = job.finish();
  EXPECT_EQ(done.exit_code, 0) << done.out << done.err;
}

// Two jobs on one host told the same nccom-ras port (SO_REUSEPORT would hand
// each connection to either job at random): the job that started first keeps
// the port, the other moves to the next port no other job holds and says
// where; each port then answers for its own job, every time.
TEST(NccomRas, TwoJobsToldOnePortEachAnswerOnTheirOwn) {
  const std::vector<std::string> endless = {"-r", "4",  "-N",      "2",  "-b", "8",   "-e",
                                            "8",  "-n", "1000000", "-w", "1",  "allr"};
  Job first(endless);
  const std::set<int> first_pids = pids_of(running(first, 4, 10, 60s), 4);
  ASSERT_EQ(first_pids.size(), 4u);
  const int shared = first.port();
  Job second(endless, {{"NCCOM_RAS_ADDR", "127.0.0.1:" + std::to_string(shared)}});

  int moved = 0;
  std::string json;
  ASSERT_TRUE(eventually(
      [&] {
        for (int port = shared + 1; port < shared + 16; ++port) {
          const auto r = ras_at(port, {"--json"});
          const auto rank0 = pid_of(r.out, 0);
          if (r.exit_code == 0 && rank0 && first_pids.count(*rank0) == 0 && pid_of(r.out, 3) &&
              completed_max(r.out) >= 50) {
            moved = port;
            json = r.out;
            return true;
          }
        }
        return false;
      },
      90s))
      << "the second job answers on none of ports " << shared + 1 << "-" << shared + 15;
  const std::set<int> second_pids = pids_of(json, 4);
  ASSERT_EQ(second_pids.size(), 4u) << json;

  for (int i = 0; i < 12; ++i) {
    const auto a = ras_at(shared, {"--json"});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(pids_of(a.out, 4), first_pids) << "ask " << i << " on the shared port:\n" << a.out;
    const auto b = ras_at(moved, {"--json"});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(pids_of(b.out, 4), second_pids) << "ask " << i << " on the moved port:\n" << b.out;
  }

  const auto said = second.end();
  const std::string all = said.out + said.err;
  // Its table header advertises where it answers, not where it was told to.
  EXPECT_NE(said.out.find("# health: nccom-ras -h 127.0.0.1 -p " + std::to_string(moved) + "\n"),
            std::string::npos)
      << said.out;
  EXPECT_EQ(count(all, "is served by another job (pids "), 1) << all;
  EXPECT_NE(all.find("(nccom-ras -p " + std::to_string(moved) + ")"), std::string::npos) << all;
  EXPECT_NE(all.find(std::to_string(*first_pids.begin())), std::string::npos) << all;
  EXPECT_EQ(first.end().out.find("is served by another job"), std::string::npos);
}

// A job whose nccom-ras port another program holds (listening, not sharing
// it) answers on the next port it can take, says so once per process, and
// its table header advertises that port, not the held one.
TEST(NccomRas, APortAnotherProgramHoldsMovesTheJobAndItsHeaderSaysWhere) {
  const nccom_test::LoopbackPort reserved;
  const int held = reserved.port();
  ASSERT_GT(held, 0);
  const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(holder, 0);
  const int one = 1;
  setsockopt(holder, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(held));
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  ASSERT_EQ(::listen(holder, 4), 0) << std::strerror(errno);

  Job job({"-r", "4", "-N", "2", "-b", "8", "-e", "8", "-n", "1000000", "-w", "1", "allr"},
          {{"NCCOM_RAS_ADDR", "127.0.0.1:" + std::to_string(held)}});
  int moved = 0;
  ASSERT_TRUE(eventually(
      [&] {
        for (int port = held + 1; port < held + 16; ++port) {
          const auto r = ras_at(port, {"--json"});
          if (r.exit_code == 0 && pid_of(r.out, 0) && pid_of(r.out, 3) &&
              completed_max(r.out) >= 5) {
            moved = port;
            return true;
          }
        }
        return false;
      },
      60s))
      << "the job answers on none of ports " << held + 1 << "-" << held + 15;
  const auto said = job.end();
  ::close(holder);
  const std::string all = said.out + said.err;
  EXPECT_NE(said.out.find("# health: nccom-ras -h 127.0.0.1 -p " + std::to_string(moved) + "\n"),
            std::string::npos)
      << said.out;
  EXPECT_EQ(said.out.find("-p " + std::to_string(held) + "\n"), std::string::npos) << said.out;
  EXPECT_NE(all.find("health: nccom-ras port 127.0.0.1:" + std::to_string(held) + ": "),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("this process's nccom-ras port is 127.0.0.1:" + std::to_string(moved) +
                     " (nccom-ras -p " + std::to_string(moved) + ")"),
            std::string::npos)
      << all;
}

// Garbage, a wrong secret and silent clients on the health ports, and 100
// clients at once: each is answered or refused cleanly, and the job, its
// results and the health view are untouched.
TEST(NccomRas, HostileClientsChangeNothing) {
  // Rank 0 is slow (10 ms a call) while `gate` exists, so the job is still
  // running when the last report is asked for, however long the hostile
  // clients take; the test then removes the gate and the job ends at speed.
  nccom_test::TempDir dir;
  const std::string gate = dir.path() + "/slow";
  ASSERT_TRUE(std::ofstream(gate).good()) << gate;
  Job job({"-r", "4", "-N", "2", "-b", "8", "-e", "8", "-n", "6000", "-w", "1", "--check", "allr"},
          {{"NCCOM_TEST_DEBUG_SLOW_RANK", "0:10"}, {"NCCOM_TEST_DEBUG_SLOW_WHILE", gate}});
  const std::string json = running(job, 4, 3, 60s);
  ASSERT_TRUE(pid_of(json, 3)) << json;
  const std::regex endpoint_re("\"endpoint\":\"127\\.0\\.0\\.1:([0-9]+)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json, m, endpoint_re)) << json;
  const int peer_port = std::stoi(m[1]);

  // Silent clients on both ports, held open throughout.
  std::vector<int> silent;
  for (int i = 0; i < 4; ++i) {
    silent.push_back(connect_to(job.port()));
    silent.push_back(connect_to(peer_port));
  }
  // Garbage on the client port: one ERROR line, then the connection closes.
  {
    const int fd = connect_to(job.port());
    ASSERT_GE(fd, 0);
    const char junk[] = "\x01\x02\xff garbage that is no command\n";
    ASSERT_GT(::send(fd, junk, sizeof junk - 1, MSG_NOSIGNAL), 0);
    const std::string answer = read_all(fd);
    EXPECT_EQ(answer.rfind("ERROR unknown command", 0), 0u) << answer;
    ::close(fd);
  }
  // STATUS, then a half-close (as `nc -N` sends it): the report still comes.
  {
    const int fd = connect_to(job.port());
    ASSERT_GE(fd, 0);
    const char status[] = "STATUS\n";
    ASSERT_GT(::send(fd, status, sizeof status - 1, MSG_NOSIGNAL), 0);
    ASSERT_EQ(::shutdown(fd, SHUT_WR), 0);
    const std::string answer = read_all(fd);
    EXPECT_NE(answer.find("nccom health: 4 processes"), std::string::npos) << answer;
    ::close(fd);
  }
  // Garbage and a wrong secret on a peer port: closed, nothing answered.
  {
    int fd = connect_to(peer_port);
    ASSERT_GE(fd, 0);
    std::string junk(64, '\xee');
    ASSERT_GT(::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL), 0);
    EXPECT_EQ(read_all(fd), "");
    ::close(fd);
    fd = connect_to(peer_port);
    ASSERT_GE(fd, 0);
    // A well-formed hello: magic "NCHF", type 1, length 17, a made-up secret.
    uint8_t hello[12 + 17] = {'N', 'C', 'H', 'F', 1, 0, 0, 0, 17, 0, 0, 0};
    std::memset(hello + 12, 0x5a, 16);
    hello[12 + 16] = 1;
    ASSERT_GT(::send(fd, hello, sizeof hello, MSG_NOSIGNAL), 0);
    EXPECT_EQ(read_all(fd), "");
    ::close(fd);
  }
  // 100 clients at once: each gets a report or a clean "busy" refusal.
  std::vector<std::future<nccom_test::ChildResult>> clients;
  for (int i = 0; i < 100; ++i) {
    clients.push_back(std::async(std::launch::async, [&job] { return job.ras(); }));
  }
  int served = 0;
  int refused = 0;
  for (auto& c : clients) {
    const auto r = c.get();
    if (r.exit_code == 0 && r.out.find("nccom health: 4 processes") != std::string::npos) {
      ++served;
    } else {
      EXPECT_NE(r.err.find("busy"), std::string::npos) << r.out << r.err;
      ++refused;
    }
  }
  EXPECT_EQ(served + refused, 100);
  EXPECT_GE(served, 64);
  for (int fd : silent) ::close(fd);

  const auto after = job.ras();
  EXPECT_NE(after.out.find("Processes not answering: none"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("Errors: none"), std::string::npos) << after.out;
  ASSERT_EQ(std::remove(gate.c_str()), 0) << gate;
  const auto done = job.finish();
  EXPECT_EQ(done.exit_code, 0) << done.out << done.err;
}

TEST(NccomRas, NoJobIsAClearErrorAndBadArgumentsAreUsageErrors) {
  nccom_test::LoopbackPort nobody;
  auto r = nccom_test::run_child(kRas, {"-p", std::to_string(nobody.port())}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no nccom job answers at 127.0.0.1:" + std::to_string(nobody.port())),
            std::string::npos)
      << r.err;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-p", "0"}, {"-p", "x"}, {"-t", "0"}, {"--timeout-ms", "-5"}, {"--bogus"}, {"-h"}}) {
    r = nccom_test::run_child(kRas, args, {});
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
  }
  r = nccom_test::run_child(kRas, {}, {{"NCCOM_RAS_ADDR", "no-port"}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not host:port"), std::string::npos) << r.err;
}

}  // namespace
