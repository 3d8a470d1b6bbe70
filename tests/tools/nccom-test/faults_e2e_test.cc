// Faults from outside, with the shipped configuration (config/nccom.toml, no
// NCCL_DEBUG): ranks are separate nccom-test processes started one by one,
// the way mpirun starts them (OMPI_COMM_WORLD_* in their environment), on
// one or two emulated hosts (NCCL_HOSTID). A missing rank, a missing root, a
// wrong secret and a rank that dies during setup must each end every
// surviving rank with a line that names the cause, within the bounds the
// user guide gives.
#include "build_paths.h"
#include "child_process.h"
#include "machine.h"
#include "nccom_test_table.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";
const std::string kShippedConfig = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";

// A loopback port nobody listens on once this returns (the kernel hands out
// ephemeral ports in turn, so it stays free for the moment a test needs).
int unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

struct Rank {
  int rank;
  int local_rank;
  int local_n;
  std::string host;
  std::map<std::string, std::string> extra;
  std::vector<std::string> args = {"-b", "8", "-e", "8", "-n", "1", "-w", "0", "allr"};
};

struct Outcome {
  int rank;
  nccom_test::ChildResult result;
};

// The environment mpirun gives rank r of nranks, with the shipped config.
std::map<std::string, std::string> rank_env(int nranks, const Rank& r, int port,
                                            const std::map<std::string, std::string>& common) {
  std::map<std::string, std::string> env = {
      {"NCCOM_CONFIG", kShippedConfig},
      {"NCCL_DEBUG", ""},
      {"OMPI_COMM_WORLD_RANK", std::to_string(r.rank)},
      {"OMPI_COMM_WORLD_SIZE", std::to_string(nranks)},
      {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r.local_rank)},
      {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(r.local_n)},
      {"NCCL_HOSTID", r.host},
      {"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:" + std::to_string(port)},
  };
  for (const auto& [k, v] : common) env[k] = v;
  for (const auto& [k, v] : r.extra) env[k] = v;
  return env;
}

// Starts every rank as its own process, as mpirun would, and waits for all.
std::vector<Outcome> run_job(int nranks, const std::vector<Rank>& ranks, int port,
                             const std::map<std::string, std::string>& common = {}) {
  std::vector<nccom_test::RunningChild> children;
  for (const Rank& r : ranks)
    children.push_back(nccom_test::start_child(kTool, r.args, rank_env(nranks, r, port, common)));
  std::vector<Outcome> out;
  for (std::size_t i = 0; i < children.size(); ++i)
    out.push_back({ranks[i].rank, nccom_test::finish_child(children[i])});
  return out;
}

// The rank's own closing line: "nccom-test: rank R: <cause> (<what it was doing>)".
std::string last_line(const nccom_test::ChildResult& r) {
  const std::string text = r.err;
  const std::size_t at = text.rfind("nccom-test: rank ");
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

void expect_every_rank_says(const std::vector<Outcome>& outcomes,
                            const std::vector<std::string>& parts) {
  for (const Outcome& o : outcomes) {
    EXPECT_EQ(o.result.exit_code, 1) << "rank " << o.rank << ":\n" << o.result.out << o.result.err;
    const std::string line = last_line(o.result);
    EXPECT_NE(line.find("nccom-test: rank " + std::to_string(o.rank) + ":"), std::string::npos)
        << "rank " << o.rank << " printed no closing line:\n"
        << o.result.err;
    for (const std::string& part : parts) {
      EXPECT_NE(line.find(part), std::string::npos)
          << "rank " << o.rank << ": \"" << part << "\" missing in\n"
          << line;
    }
  }
}

// netns_run runs a command in a private network namespace: the machine is
// asked first (machine::skip_unless_network_namespaces); after that, a
// namespace netns_run cannot make (its exit 77) fails the test.
constexpr const char* kNoNamespace =
    "netns_run made no private network namespace, though the machine probe said it could: ";

// Reads the child's output until its first table row (within 60 s): "" then,
// else why not (the child is reaped).
std::string wait_for_first_row(nccom_test::RunningChild& child) {
  for (const auto until = Clock::now() + std::chrono::seconds(60); Clock::now() < until;) {
    (void)nccom_test::read_line(child, std::chrono::seconds(1));
    if (!nccom_test::table_rows(child.out).empty()) return "";
  }
  const auto r = nccom_test::finish_child(child);
  if (r.exit_code == 77) return kNoNamespace + r.err;
  return "no table row within 60 s:\n" + r.out + r.err;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Rank 3 of 4 (two hosts, two ranks each) never starts: the host leaders
// hear it from the root, the other ranks from their leader.
TEST(NccomTestFaults, AMissingRankIsNamedOnEveryRankOfEveryHost) {
  const int port = unused_port();
  ASSERT_GT(port, 0);
  const auto t0 = Clock::now();
  const auto outcomes =
      run_job(4, {{0, 0, 2, "host-a", {}}, {1, 1, 2, "host-a", {}}, {2, 0, 2, "host-b", {}}}, port,
              {{"NCCOM_BOOTSTRAP_TIMEOUT_MS", "2000"}});
  expect_every_rank_says(outcomes, {"1 of 4 ranks (3) did not check in", "within 2000 ms"});
  EXPECT_LT(seconds_since(t0), 2.0 + 10.0);
}

// Nobody runs rank 0: every rank says there is no root, and where.
TEST(NccomTestFaults, NoRootEveryRankSaysSoAndNamesTheAddress) {
  const int port = unused_port();
  ASSERT_GT(port, 0);
  const auto outcomes =
      run_job(4, {{1, 1, 2, "host-a", {}}, {2, 0, 2, "host-b", {}}, {3, 1, 2, "host-b", {}}}, port,
              {{"NCCOM_BOOTSTRAP_TIMEOUT_MS", "1500"}});
  expect_every_rank_says(outcomes,
                         {"no root at 127.0.0.1:" + std::to_string(port), "is rank 0 running"});
}

// Rank 1 was given another secret: the root tells it so, and rank 0's
// missing-rank verdict names the refusal.
TEST(NccomTestFaults, ARankWithTheWrongSecretIsToldWhy) {
  const int port = unused_port();
  ASSERT_GT(port, 0);
  const auto outcomes = run_job(
      2,
      {{0, 0, 2, "host-a", {}}, {1, 1, 2, "host-a", {{"NCCOM_BOOTSTRAP_SECRET", "not-the-job's"}}}},
      port, {{"NCCOM_BOOTSTRAP_TIMEOUT_MS", "2000"}});
  ASSERT_EQ(outcomes.size(), 2u);
  expect_every_rank_says(
      {outcomes[0]}, {"1 of 2 ranks (1) did not check in", "refused 1 connection", "wrong secret"});
  expect_every_rank_says({outcomes[1]},
                         {"refused this rank: wrong secret", "NCCOM_BOOTSTRAP_SECRET"});
}

// Rank 3's process dies between libnccom's two init calls, while the others
// connect their rings. The bootstrap socket timeout (120 s shipped) and the
// handshake timeout (120 s) are far away: the survivors must notice that a
// member is gone and stop at once, each naming a rank that left.
TEST(NccomTestFaults, ARankDyingDuringSetupEndsTheOthersAtOnce) {
  const int port = unused_port();
  ASSERT_GT(port, 0);
  const std::map<std::string, std::string> kill3 = {{"NEURON_RT_EMU_DEBUG_KILL_AFTER_INIT", "3"}};
  const auto t0 = Clock::now();
  const auto outcomes = run_job(4,
                                {{0, 0, 2, "host-a", {}},
                                 {1, 1, 2, "host-a", {}},
                                 {2, 0, 2, "host-b", {}},
                                 {3, 1, 2, "host-b", {}}},
                                port, kill3);
  const double took = seconds_since(t0);
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(outcomes[3].result.signal, SIGKILL) << outcomes[3].result.err;
  std::vector<Outcome> survivors(outcomes.begin(), outcomes.begin() + 3);
  expect_every_rank_says(survivors, {"neuronBuildGraphComm", "rank "});
  for (const Outcome& o : survivors) {
    const std::string line = last_line(o.result);
    const bool names_a_departure =
        line.find("closed its connection") != std::string::npos ||
        line.find("nothing listens there any more") != std::string::npos ||
        line.find("connection closed by") != std::string::npos;
    EXPECT_TRUE(names_a_departure) << "rank " << o.rank << ": " << line;
  }
  // Half the shipped timeouts (120 s): a survivor that waited one out cannot
  // come in under it, however loaded the machine.
  EXPECT_LT(took, 60.0) << "the survivors waited for a timeout instead of noticing the departure";
}

// The network goes away mid-run: 4 ranks on 2 emulated hosts in a private
// network namespace, over the socket plugin and over libnccom-net (libfabric
// tcp;ofi_rxm), its loopback switched off once the first rows are printed. Every rank must end with
// a timeout naming the peer it waited for — none by a signal — within the engine's bound (or the
// bootstrap socket timeout, when the cut hits a barrier between sizes). It crashed a rank before
// the runtime and the plugin host kept the process's signal dispositions across the load of
// libfabric (libinfinipath's handlers).
TEST(NccomTestFaults, APartitionMidRunEndsEveryRankWithATimeoutAndNoCrash) {
  nccom_test::machine::skip_unless_network_namespaces();
  if (IsSkipped()) return;
  const std::string netns_run = NETNS_RUN;
  // Also bounds each setup wait: under a sanitizer and a loaded machine,
  // libnccom-net's setup in one rank took more than 4 s.
  constexpr int kSocketTimeoutMs = 8000;
  for (const char* net : {"socket", "ofi"}) {
    SCOPED_TRACE(std::string("--net ") + net);
    int partitioned = 0;
    for (int round = 0; round < 2; ++round) {
      auto child = nccom_test::start_child(
          netns_run,
          {"--", kTool, "--net", net,  "-r", "4",       "-N",           "2",    "-b",  "8", "-e",
           "1M", "-n",  "200",   "-w", "1",  "--check", "--timeout-ms", "3000", "allr"},
          // The partition may also hit a bootstrap barrier between sizes: its
          // bound is the socket timeout (120 s shipped), shortened here.
          {{"NCCOM_CONFIG", kShippedConfig},
           {"NCCL_DEBUG", ""},
           {"NEURON_CCOM_SOCK_TIMEOUT", std::to_string(kSocketTimeoutMs)}});
      // Rows appear as the sizes complete; the partition comes after the first.
      if (const std::string why = wait_for_first_row(child); !why.empty()) FAIL() << why;
      const auto t0 = Clock::now();
      const auto down =
          nccom_test::run_child(netns_run, {"--lo", "down", std::to_string(child.pid)}, {});
      ASSERT_EQ(down.exit_code, 0) << down.err;
      const auto r = nccom_test::finish_child(child);
      const double took = seconds_since(t0);
      EXPECT_EQ(r.signal, 0) << r.err;
      EXPECT_EQ(r.err.find("signal 11"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("terminated with signal"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos)
          << r.err;  // the asan/tsan presets run this too
      EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
      if (r.exit_code == 0) continue;  // the last sizes finished before the partition took effect
      ++partitioned;
      EXPECT_EQ(r.exit_code, 1) << r.err;
      const bool engine_timeout = r.err.find("timed out after 3000 ms") != std::string::npos;
      const bool bootstrap_timeout =
          r.err.find("timed out after " + std::to_string(kSocketTimeoutMs) + " ms") !=
          std::string::npos;
      EXPECT_TRUE(engine_timeout || bootstrap_timeout) << r.err;
      EXPECT_NE(r.err.find("rank "), std::string::npos) << r.err;
      EXPECT_LT(took, 2.0 * kSocketTimeoutMs / 1000 + 10.0) << r.err;
    }
    EXPECT_GE(partitioned, 1) << "no round was cut by the partition";
  }
}

// Ranks that call different collectives are named instead of computing
// wrong results. Every slice carries its collective's stamp: on one host
// (direct links) rank 1's fp64 against rank 0's fp32 (the same bytes) is a
// "collective mismatch" naming both calls on both ranks; across hosts a
// different reduction (same sizes) is too (by the rank that looks first).
// Across hosts a different type changes the ring's slice sizes, which the
// net plugin or the transport refuses before the stamp can be read: then
// every rank names the peer and the failed receive, and its own call, so
// the two ranks' lines side by side show the calls that differ.
std::vector<Outcome> mismatched_pair(bool two_hosts, const std::vector<std::string>& rank1_flags,
                                     const std::string& op = "allr", const std::string& bytes = "8",
                                     std::map<std::string, std::string> env = {}) {
  const int port = unused_port();
  std::vector<std::string> a0 = {"-b", bytes, "-e", bytes, "-n", "1", "-w", "0", op};
  std::vector<std::string> a1 = rank1_flags;
  a1.insert(a1.end(), a0.begin(), a0.end());
  Rank r0{0, 0, two_hosts ? 1 : 2, "host-a", {}, a0};
  Rank r1{1, two_hosts ? 0 : 1, two_hosts ? 1 : 2, two_hosts ? "host-b" : "host-a", {}, a1};
  env["NCCOM_BOOTSTRAP_TIMEOUT_MS"] = "5000";
  return run_job(2, {r0, r1}, port, env);
}

// At least one rank's line names the mismatch and both calls.
void expect_a_rank_names_the_mismatch(const std::vector<Outcome>& outcomes,
                                      const std::string& call0, const std::string& call1) {
  int named = 0;
  std::string lines;
  for (const Outcome& o : outcomes) {
    const std::string line = last_line(o.result);
    lines += line + "\n";
    named += line.find("collective mismatch") != std::string::npos &&
             line.find(call0) != std::string::npos && line.find(call1) != std::string::npos;
  }
  EXPECT_GE(named, 1) << "no rank named the mismatch:\n" << lines;
}

TEST(NccomTestFaults, MismatchedCollectivesAreNamedInsteadOfComputedWrong) {
  {
    SCOPED_TRACE("one host, fp32 against fp64");
    expect_every_rank_says(
        mismatched_pair(false, {"-d", "fp64"}),
        {"collective mismatch", "all-reduce of 2 x fp32", "all-reduce of 1 x fp64",
         "every rank must make the same collective calls"});
  }
  {
    SCOPED_TRACE("two hosts, sum against max");
    // The first rank to look at a stamp fails and leaves; its peer may see
    // that departure on the network before it looks at its own slice.
    const auto outcomes = mismatched_pair(true, {"-o", "max"});
    expect_every_rank_says(outcomes, {"rank "});
    expect_a_rank_names_the_mismatch(outcomes, "all-reduce of 2 x fp32, sum",
                                     "all-reduce of 2 x fp32, max");
  }
  {
    SCOPED_TRACE("two hosts, fp32 against fp64, recursive doubling");
    // The whole message travels in one slice of the same size either way:
    // the stamp names both calls.
    const auto outcomes = mismatched_pair(true, {"-d", "fp64"});
    expect_every_rank_says(outcomes, {"rank "});
    expect_a_rank_names_the_mismatch(outcomes, "all-reduce of 2 x fp32", "all-reduce of 1 x fp64");
  }
  {
    SCOPED_TRACE("two hosts, fp32 against fp64, rings");
    const auto outcomes = mismatched_pair(true, {"-d", "fp64"}, "allr", "8",
                                          {{"NEURON_RT_EMU_ALLREDUCE_RD_BYTES", "0"}});
    ASSERT_EQ(outcomes.size(), 2u);
    // On the rings each rank's share differs in size (1 fp32, or 1 and 0
    // fp64), so the slices do: each rank names the peer and its own call;
    // the first to fail names the refused receive, its peer may see that
    // departure first ("process gone: rank R").
    expect_every_rank_says({outcomes[0]},
                           {"rank 1", "this rank runs collective #0: all-reduce of 2 x fp32"});
    expect_every_rank_says({outcomes[1]},
                           {"rank 0", "this rank runs collective #0: all-reduce of 1 x fp64"});
    int refused = 0;
    for (const Outcome& o : outcomes) {
      const std::string line = last_line(o.result);
      refused +=
          line.find("receive from rank ") != std::string::npos &&
          line.find("in the net plugin Socket (Neuron ncclNet_v6) from ") != std::string::npos;
    }
    EXPECT_GE(refused, 1) << "no rank named the refused receive";
  }
}

// The peer collectives (all-to-all, permute) are stamped too: across hosts
// the same bytes in another type reach the stamp, which names both calls.
TEST(NccomTestFaults, MismatchedPeerCollectivesAreNamed) {
  for (const bool two_hosts : {false, true}) {
    SCOPED_TRACE(two_hosts ? "two hosts" : "one host");
    {
      SCOPED_TRACE("alltoall, fp32 against fp64");
      const auto outcomes = mismatched_pair(two_hosts, {"-d", "fp64"}, "alltoall", "64");
      expect_every_rank_says(outcomes, {"rank "});
      expect_a_rank_names_the_mismatch(outcomes, "all-to-all of 8 x fp32",
                                       "all-to-all of 4 x fp64");
    }
    {
      SCOPED_TRACE("permute, fp32 against fp64");
      const auto outcomes = mismatched_pair(two_hosts, {"-d", "fp64"}, "sendrecv", "64");
      expect_every_rank_says(outcomes, {"rank "});
      expect_a_rank_names_the_mismatch(outcomes, "permute of 16 x fp32", "permute of 8 x fp64");
    }
  }
}

// No network at all when the job starts (a private namespace with its
// loopback down): every rank fails at once naming the interface problem.
TEST(NccomTestFaults, NoNetworkAtInitIsNamedAtOnce) {
  nccom_test::machine::skip_unless_network_namespaces();
  if (IsSkipped()) return;
  const auto t0 = Clock::now();
  const auto r = nccom_test::run_child(
      NETNS_RUN, {"--lo-down", "--", kTool, "-r", "4", "-N", "2", "-b", "8", "-e", "8", "allr"},
      {{"NCCOM_CONFIG", kShippedConfig}, {"NCCL_DEBUG", ""}});
  ASSERT_NE(r.exit_code, 77) << kNoNamespace << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.signal, 0) << r.err;
  EXPECT_NE(r.err.find("No usable listening interface found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("set NCCL_SOCKET_IFNAME or CCOM_SOCKET_IFNAME"), std::string::npos) << r.err;
  EXPECT_LT(seconds_since(t0), 10.0);
}

// A one-second outage mid-run, healed well within the engine's bound: TCP
// retransmits, the run completes and every result is right.
TEST(NccomTestFaults, AShortOutageHealedMidRunLosesNothing) {
  nccom_test::machine::skip_unless_network_namespaces();
  if (IsSkipped()) return;
  auto child =
      nccom_test::start_child(NETNS_RUN,
                              {"--", kTool, "-r", "4", "-N", "2", "-b", "8", "-e", "1K", "-n", "50",
                               "-w", "1", "--check", "--timeout-ms", "20000", "allr"},
                              {{"NCCOM_CONFIG", kShippedConfig}, {"NCCL_DEBUG", ""}});
  if (const std::string why = wait_for_first_row(child); !why.empty()) FAIL() << why;
  const std::string pid = std::to_string(child.pid);
  ASSERT_EQ(nccom_test::run_child(NETNS_RUN, {"--lo", "down", pid}, {}).exit_code, 0);
  // The outage itself: one second without a network (the fault, not a wait
  // for anything).
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(nccom_test::run_child(NETNS_RUN, {"--lo", "up", pid}, {}).exit_code, 0);
  const auto r = nccom_test::finish_child(child);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# Wrong elements       : 0 OK"), std::string::npos) << r.out;
  EXPECT_EQ(nccom_test::table_rows(r.out).size(), 8u) << r.out;
}

// Reads the child's stderr, where nccom-test sends libnccom's log lines,
// until a line holding `text` (within 60 s): "" then, else why not (the
// child is reaped).
std::string wait_for_line(nccom_test::RunningChild& child, const std::string& text) {
  for (const auto until = Clock::now() + std::chrono::seconds(60); Clock::now() < until;) {
    if (nccom_test::read_err_line(child, std::chrono::seconds(1)).find(text) != std::string::npos)
      return "";
  }
  const auto r = nccom_test::finish_child(child);
  if (r.exit_code == 77) return kNoNamespace + r.err;
  return "no line with \"" + text + "\" within 60 s:\n" + r.out + r.err;
}

// A partition during setup: ranks 1..3 (two emulated hosts, one private
// network) are started first and wait for a root and a host leader that are
// not there yet; they are stopped while rank 0 starts its root, the network
// goes down, and they resume into it (their connects now fail with "network
// unreachable", which is retried too). The bootstrap's INFO lines are the
// only observation points (when a rank is retrying, when the root listens);
// the closing lines the tests read are the same at every log level (the
// cause crosses the ABI with the status). Returns every rank's result in
// rank order, or why not.
struct SetupPartition {
  std::string failed;
  std::vector<nccom_test::ChildResult> results;
  double took = 0;  // from the network going down to the last rank's end
};
SetupPartition partition_during_setup(bool heals, int bootstrap_timeout_ms,
                                      const std::string& net = "socket") {
  SetupPartition out;
  // Every rank runs in the namespace rank 1 creates, and ranks 1-3 bind
  // their own listeners there before rank 0 exists: a root port taken from
  // the ephemeral range (as unused_port() does) can be one of theirs, and
  // rank 1 then checks in with itself. A fresh namespace's ephemeral range
  // is always the kernel default (32768-60999) and nothing else listens in
  // it, so a port below that range is the root's alone.
  const int port = 29517;
  const std::map<std::string, std::string> common = {
      {"NCCL_DEBUG", "INFO"},
      {"NCCL_DEBUG_SUBSYS", "BOOTSTRAP"},
      {"NCCOM_BOOTSTRAP_TIMEOUT_MS", std::to_string(bootstrap_timeout_ms)}};
  const std::vector<std::string> args = {"--net", net, "-b", "8", "-e",      "64K",
                                         "-n",    "5", "-w", "1", "--check", "allr"};
  const std::vector<Rank> ranks = {{0, 0, 2, "host-a", {}, args},
                                   {1, 1, 2, "host-a", {}, args},
                                   {2, 0, 2, "host-b", {}, args},
                                   {3, 1, 2, "host-b", {}, args}};
  std::vector<nccom_test::RunningChild> children(4);
  auto in_network = [&](int r) {
    std::vector<std::string> a = {"--"};
    if (r != 1) a = {"--in", std::to_string(children[1].pid), "--"};
    a.push_back(kTool);
    a.insert(a.end(), args.begin(), args.end());
    return nccom_test::start_child(NETNS_RUN, a,
                                   rank_env(4, ranks[static_cast<size_t>(r)], port, common));
  };
  auto end_all = [&] {
    for (auto& c : children) {
      if (c.pid <= 0) continue;
      ::kill(c.pid, SIGKILL);
      (void)nccom_test::finish_child(c);
    }
  };
  for (int r : {1, 2, 3}) {
    children[static_cast<size_t>(r)] = in_network(r);
    // Rank 1 retries its host leader (rank 0), rank 2 the root; rank 3
    // reaches its leader (rank 2) and waits: for it, being past the
    // interface choice is enough.
    const char* past_setup_start = r == 3 ? "Bootstrap : Using " : "retrying for up to";
    if (const std::string why = wait_for_line(children[static_cast<size_t>(r)], past_setup_start);
        !why.empty()) {
      children[static_cast<size_t>(r)].pid = -1;  // reaped by wait_for_line
      end_all();
      out.failed = "rank " + std::to_string(r) + ": " + why;
      return out;
    }
  }
  for (int r : {1, 2, 3}) ::kill(children[static_cast<size_t>(r)].pid, SIGSTOP);
  children[0] = in_network(0);
  const std::string root_up = wait_for_line(children[0], "bootstrap root for 4 ranks listening on");
  if (!root_up.empty()) children[0].pid = -1;
  const std::string pid = std::to_string(children[1].pid);
  const auto down = nccom_test::run_child(NETNS_RUN, {"--lo", "down", pid}, {});
  const auto t0 = Clock::now();
  for (int r : {1, 2, 3}) ::kill(children[static_cast<size_t>(r)].pid, SIGCONT);
  nccom_test::ChildResult up;
  if (heals) {
    // The outage itself: one second without a network (the fault, not a
    // wait for anything).
    std::this_thread::sleep_for(std::chrono::seconds(1));
    up = nccom_test::run_child(NETNS_RUN, {"--lo", "up", pid}, {});
  }
  if (!root_up.empty() || down.exit_code != 0 || (heals && up.exit_code != 0)) {
    end_all();
    out.failed = root_up + down.err + up.err;
    return out;
  }
  for (auto& c : children) out.results.push_back(nccom_test::finish_child(c));
  out.took = seconds_since(t0);
  return out;
}

// Healed within the bootstrap timeout: setup completes, every result right,
// over either net plugin (their connections are made after the heal).
TEST(NccomTestFaults, APartitionDuringSetupThatHealsLosesNothing) {
  nccom_test::machine::skip_unless_network_namespaces();
  if (IsSkipped()) return;
  for (const char* net : {"socket", "ofi"}) {
    SCOPED_TRACE(net);
    const SetupPartition p = partition_during_setup(true, 30000, net);
    ASSERT_EQ(p.failed, "");
    for (size_t r = 0; r < p.results.size(); ++r) {
      EXPECT_EQ(p.results[r].exit_code, 0) << "rank " << r << ":\n"
                                           << p.results[r].out << p.results[r].err;
      EXPECT_EQ(p.results[r].signal, 0) << "rank " << r;
    }
    EXPECT_NE(p.results[0].out.find("# Wrong elements       : 0 OK"), std::string::npos)
        << p.results[0].out;
    EXPECT_EQ(nccom_test::table_rows(p.results[0].out).size(), 14u) << p.results[0].out;
  }
}

// Not healed: every rank ends at the bootstrap timeout, and the ones that
// could not reach the root say the network did not answer (not that rank 0
// is not running).
TEST(NccomTestFaults, APartitionDuringSetupThatLastsEndsEveryRankAtTheTimeout) {
  nccom_test::machine::skip_unless_network_namespaces();
  if (IsSkipped()) return;
  const SetupPartition p = partition_during_setup(false, 3000);
  ASSERT_EQ(p.failed, "");
  int unanswered = 0;
  for (size_t r = 0; r < p.results.size(); ++r) {
    const std::string line = last_line(p.results[r]);
    EXPECT_EQ(p.results[r].exit_code, 1) << "rank " << r << ":\n" << p.results[r].err;
    EXPECT_EQ(p.results[r].signal, 0) << "rank " << r;
    // Cause first: the bootstrap's reason, then what the rank was doing.
    EXPECT_EQ(line.rfind("nccom-test: rank " + std::to_string(r) + ": ", 0), 0u)
        << p.results[r].err;
    const size_t cause = line.find("no root at 127.0.0.1:");
    const size_t doing = line.find(" (joining the communicator at 127.0.0.1:");
    EXPECT_NE(cause, std::string::npos) << line;
    EXPECT_NE(doing, std::string::npos) << line;
    EXPECT_LT(cause, doing) << line;
    unanswered += line.find("the network to it did not answer") != std::string::npos;
  }
  EXPECT_EQ(unanswered, 4);
  EXPECT_LT(p.took, 3.0 + 10.0);
}

}  // namespace
