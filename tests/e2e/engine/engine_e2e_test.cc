// EngineE2E/*: the reference device engine end to end — ranks as processes
// on 1-2 emulated hosts, brought up through NEURON_RT_ROOT_COMM_ID, running
// every collective over every data type and reduction, checked exactly
// (engine_rank_driver, reference.h), over the socket net and libnccom-net
// (tcp;ofi_rxm). Also: a rank that dies makes the others fail in time with
// a message naming it.
#include "build_paths.h"
#include "child_process.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using nccom_test::RunningChild;
using Clock = std::chrono::steady_clock;

struct Shape {
  int ranks;
  int hosts;
  std::string net;               // "socket" or "ofi"
  std::string platform = "emu";  // NEURON_RT_EMU_PLATFORM (trn2: the sidelink path)
  // NEURON_RT_EMU_PROXY_HELP=0: only the proxy worker calls libnccom's
  // progress, as libnrt's does, beside the device loop that publishes.
  bool worker_only = false;
};

void PrintTo(const Shape& s, std::ostream* os) {
  *os << s.ranks << " ranks on " << s.hosts << " hosts, " << s.net << ", " << s.platform
      << (s.worker_only ? ", proxy worker only" : "");
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& p) {
  return std::to_string(p.param.ranks) + "ranks_" + std::to_string(p.param.hosts) + "hosts_" +
         p.param.net + (p.param.platform == "emu" ? "" : "_" + p.param.platform) +
         (p.param.worker_only ? "_worker_only" : "");
}

std::map<std::string, std::string> env_for(const Shape& s, int port) {
  std::map<std::string, std::string> env = {
      {"CCOM_SOCKET_IFNAME", "lo"},
      {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "30000"},
      {"NEURON_CCOM_SOCK_TIMEOUT", "30000"},
      {"NCCOM_CONFIG", ""},
      {"NCCL_DEBUG", "WARN"},
      {"NCCOM_BOOTSTRAP_SECRET", "engine-e2e-" + std::to_string(port)},
      {"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:" + std::to_string(port)},
      {"NEURON_RT_EMU_PLATFORM", s.platform},
      // Small slices: many slices, rounds and channels on small buffers.
      {"NEURON_RT_EMU_SLICE_BYTES", "4096"},
      {"NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS", "30000"}};
  if (s.worker_only) env["NEURON_RT_EMU_PROXY_HELP"] = "0";
  if (s.net == "socket") {
    env["NCCOM_NET_USE_RUNTIME_PLUGIN"] = "false";
  } else {
    env["NCCOM_NET_USE_RUNTIME_PLUGIN"] = "true";
    env["FI_PROVIDER"] = "tcp;ofi_rxm";
  }
  return env;
}

// Rank r's process of shape `s`.
RunningChild start_rank(const Shape& s, int r, const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env) {
  // Blocks of consecutive ranks, the first ranks % hosts hosts one more
  // (3 on 2: 2 + 1). Each host's device count is its rank count (the
  // engine takes local_n as its process's device count).
  std::vector<int> host_of, local_of, count(static_cast<size_t>(s.hosts), s.ranks / s.hosts);
  for (int h = 0; h < s.ranks % s.hosts; ++h) ++count[static_cast<size_t>(h)];
  for (int h = 0; h < s.hosts; ++h) {
    for (int l = 0; l < count[static_cast<size_t>(h)]; ++l) {
      host_of.push_back(h);
      local_of.push_back(l);
    }
  }
  const int h = host_of[static_cast<size_t>(r)];
  std::vector<std::string> a = {std::to_string(r), std::to_string(s.ranks), std::to_string(h),
                                std::to_string(local_of[static_cast<size_t>(r)]),
                                std::to_string(count[static_cast<size_t>(h)])};
  a.insert(a.end(), args.begin(), args.end());
  return nccom_test::start_child(ENGINE_RANK_DRIVER, a, env);
}

std::vector<RunningChild> start(const Shape& s, const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& env) {
  std::vector<RunningChild> kids;
  for (int r = 0; r < s.ranks; ++r) kids.push_back(start_rank(s, r, args, env));
  return kids;
}

void run_all(const Shape& s, const std::vector<std::string>& args) {
  const nccom_test::LoopbackPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0);
  std::vector<RunningChild> kids = start(s, args, env_for(s, port));
  for (size_t r = 0; r < kids.size(); ++r) {
    nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
    auto rep = nccom_test::parse_report(res.out);
    EXPECT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_EQ(rep["ok"], "1") << "rank " << r << ":\n" << res.out << res.err;
    // On the emu platform a host has as many devices as ranks: the first
    // ranks % hosts hosts one rank more (start_rank).
    const int rank = static_cast<int>(r), base = s.ranks / s.hosts, extra = s.ranks % s.hosts;
    const int host =
        rank < extra * (base + 1) ? rank / (base + 1) : extra + (rank - extra * (base + 1)) / base;
    if (s.platform == "emu") {
      EXPECT_EQ(rep["host_devices"], std::to_string(base + (host < extra ? 1 : 0)))
          << "rank " << r << ":\n"
          << res.out;
    }
    if (r == 0) ::testing::Test::RecordProperty("cases", rep["cases"]);
  }
}

class EngineE2E : public ::testing::TestWithParam<Shape> {};

// Every collective × every type × every reduction, sizes 0, 1, 13 and 5003
// elements (many 4 KiB slices, not a multiple of the rank count), in and out
// of place, twice each (the second execution reuses the cached plan).
TEST_P(EngineE2E, EveryCollectiveTypeAndReductionIsExact) { run_all(GetParam(), {"execs=2"}); }

#ifndef ENGINE_E2E_LONG
const Shape kShapes[] = {
    {1, 1, "socket"}, {2, 1, "socket"}, {3, 1, "socket"}, {4, 1, "socket"},
    {2, 2, "socket"}, {3, 2, "socket"}, {4, 2, "socket"}, {4, 2, "socket", "emu", true},
};
#else
// 8 ranks, and libnccom-net over tcp;ofi_rxm (~3 s of connection setup per
// rank pair on this provider); on trn2 (one device per host) every received
// slice is confirmed by the sidelink's 4-byte RMA read.
const Shape kShapes[] = {
    {8, 1, "socket"}, {8, 2, "socket"}, {2, 2, "ofi"},         {3, 2, "ofi"},
    {4, 2, "ofi"},    {8, 2, "ofi"},    {2, 2, "ofi", "trn2"}, {4, 2, "ofi", "emu", true},
};
#endif
INSTANTIATE_TEST_SUITE_P(Shapes, EngineE2E, ::testing::ValuesIn(kShapes), shape_name);

// Every rank exits right after its last collective, with no closing fence
// and its communicator still open: the first to go leaves while others may
// still be running theirs. A rank that leaves is not a rank that died:
// every rank completes every collective exactly. Several runs each: which
// rank goes first, and how far the others are, differs from run to run.
class EngineLeave : public ::testing::TestWithParam<Shape> {};

#ifndef ENGINE_E2E_LONG
constexpr int kLeaveRuns = 5;
#else
constexpr int kLeaveRuns = 20;
#endif

TEST_P(EngineLeave, EveryRankCompletesWhenTheFirstExitsAfterItsLastCollective) {
  for (int run = 0; run < kLeaveRuns; ++run) {
    SCOPED_TRACE("run " + std::to_string(run + 1) + " of " + std::to_string(kLeaveRuns));
    run_all(GetParam(), {"colls=allr,allg,redsct", "dtypes=fp32", "ops=sum", "counts=1,5003,300000",
                         "inplace=0", "execs=2", "fence=0"});
  }
}

#ifndef ENGINE_E2E_LONG
const Shape kLeaveShapes[] = {{3, 1, "socket"}, {4, 2, "socket"}};
#else
// 1 to 16 ranks over 1 to 4 emulated hosts (the shapes of the lifecycle
// matrix, graph_lifecycle_test.cc), and libnccom-net over tcp;ofi_rxm.
const Shape kLeaveShapes[] = {
    {1, 1, "socket"},  {2, 1, "socket"}, {3, 1, "socket"},  {4, 1, "socket"},  {8, 1, "socket"},
    {16, 1, "socket"}, {2, 2, "socket"}, {6, 2, "socket"},  {16, 2, "socket"}, {12, 3, "socket"},
    {4, 4, "socket"},  {8, 4, "socket"}, {16, 4, "socket"}, {4, 2, "ofi"}};
#endif
INSTANTIATE_TEST_SUITE_P(Shapes, EngineLeave, ::testing::ValuesIn(kLeaveShapes), shape_name);

class EngineFault : public ::testing::TestWithParam<Shape> {};

// Rank 1 is SIGKILLed before its first collective (driver arguments
// `args`); every survivor fails, naming rank 1.
void expect_the_dead_rank_named(const Shape& s, const std::vector<std::string>& args) {
  const nccom_test::LoopbackPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0);
  std::vector<RunningChild> kids = start(s, args, env_for(s, port));
  for (size_t r = 0; r < kids.size(); ++r) {
    nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
    if (r == 1) {
      EXPECT_EQ(res.signal, SIGKILL) << res.out << res.err;
      continue;
    }
    auto rep = nccom_test::parse_report(res.out);
    EXPECT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_NE(rep["result"], "0") << "rank " << r << " finished a collective with a dead peer";
    EXPECT_NE(rep["message"].find("rank 1"), std::string::npos)
        << "rank " << r << ": " << rep["message"];
  }
}

// ... within the bound.
TEST_P(EngineFault, ADeadRankFailsTheOthersNamingIt) {
  const auto t0 = Clock::now();
  expect_the_dead_rank_named(GetParam(), {"die=1", "timeout_ms=20000"});
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(40));
}

// The same in an all-reduce small enough for recursive doubling, whose
// partners (rank XOR 2^k, and the folded ranks) differ from the ring's.
TEST_P(EngineFault, ADeadRankFailsTheOthersInASmallAllReduce) {
  const auto t0 = Clock::now();
  expect_the_dead_rank_named(GetParam(), {"die=1", "die_count=2", "timeout_ms=20000"});
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(40));
}

// A rank restarted during a run: rank 1 kills itself before its first
// collective and a new process starts as rank 1, with the arguments and
// environment it had. The others fail naming rank 1 within the collective
// bound; the new process cannot join the communicator that formed without
// it and fails within its bootstrap bound (5 s here), saying so.
TEST_P(EngineFault, ARankRestartedDuringARunIsNamedAndCannotRejoin) {
  const Shape s = GetParam();
  const nccom_test::LoopbackPort reserved;
  ASSERT_GT(reserved.port(), 0);
  const auto env = env_for(s, reserved.port());
  const std::vector<std::string> args = {"die=1", "timeout_ms=20000"};
  std::vector<RunningChild> kids = start(s, args, env);
  nccom_test::ChildResult dead = nccom_test::finish_child(kids[1]);
  ASSERT_EQ(dead.signal, SIGKILL) << dead.out << dead.err;
  const auto died = Clock::now();
  // The same rank, host and device again; this time it is no victim.
  auto again_env = env;
  again_env["NCCOM_BOOTSTRAP_TIMEOUT_MS"] = "5000";
  RunningChild again = start_rank(s, 1, {"timeout_ms=20000"}, again_env);
  for (size_t r = 0; r < kids.size(); ++r) {
    if (r == 1) continue;
    nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
    auto rep = nccom_test::parse_report(res.out);
    EXPECT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_NE(rep["result"], "0") << "rank " << r << " finished a collective with a dead peer";
    EXPECT_NE(rep["message"].find("rank 1"), std::string::npos)
        << "rank " << r << ": " << rep["message"];
  }
  EXPECT_LT(Clock::now() - died, std::chrono::seconds(30));
  nccom_test::ChildResult res = nccom_test::finish_child(again);
  EXPECT_EQ(res.exit_code, 1) << res.out << res.err;
  EXPECT_NE(res.out.find("error=init: "), std::string::npos) << res.out << res.err;
  EXPECT_NE(res.out.find("a rank restarted after that cannot rejoin it"), std::string::npos)
      << res.out << res.err;
  EXPECT_LT(Clock::now() - died, std::chrono::seconds(30));
}

#ifndef ENGINE_E2E_LONG
const Shape kFaultShapes[] = {{3, 1, "socket"}, {4, 2, "socket"}};
#else
const Shape kFaultShapes[] = {{4, 2, "ofi"}};
#endif
INSTANTIATE_TEST_SUITE_P(Shapes, EngineFault, ::testing::ValuesIn(kFaultShapes), shape_name);

#ifndef ENGINE_E2E_LONG
// Small all-reduces (up to NEURON_RT_EMU_ALLREDUCE_RD_BYTES, capped to one
// slice: 4064 bytes with these tests' 4 KiB slices) run by recursive
// doubling, larger ones on the rings, and the knob at 0 turns it off; every
// result is checked exactly by the driver either way. The engine's closing
// line counts the executions each way.
class EngineRecursiveDoubling : public ::testing::TestWithParam<Shape> {};

// A count from the engine's closing line ("..., 7 by recursive doubling,
// ..."): the number before `what`; -1 when the line or the count is absent.
long long closing_count(const std::string& out, const std::string& what) {
  long long n = -1;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find("closing: ");
    const size_t what_at = line.find(what);
    if (line.rfind("engine=", 0) != 0 || at == std::string::npos || what_at == std::string::npos)
      continue;
    const size_t comma = line.rfind(", ", what_at);
    n = std::atoll(line.substr(comma + 2, what_at - comma - 2).c_str());
  }
  return n;
}

// Runs `args` once per (value of `knob`, "" for unset; recursive doubling
// runs expected): every rank must finish exact, run `runs` collectives and
// count the expected number of them by recursive doubling.
void expect_recursive_doubling(const Shape& s, const std::vector<std::string>& args,
                               const char* knob, long long runs,
                               const std::vector<std::pair<std::string, long long>>& cases) {
  for (const auto& [value, by_rd] : cases) {
    const nccom_test::LoopbackPort reserved;
    ASSERT_GT(reserved.port(), 0);
    auto env = env_for(s, reserved.port());
    if (!value.empty()) env[knob] = value;
    std::vector<RunningChild> kids = start(s, args, env);
    for (size_t r = 0; r < kids.size(); ++r) {
      nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
      auto rep = nccom_test::parse_report(res.out);
      ASSERT_EQ(rep["ok"], "1") << "rank " << r << ":\n" << res.out << res.err;
      EXPECT_EQ(rep["runs"], std::to_string(runs)) << res.out;
      EXPECT_EQ(closing_count(res.out, " by recursive doubling"), by_rd)
          << "rank " << r << " (" << knob << "=" << value << "):\n"
          << res.out;
    }
  }
}

TEST_P(EngineRecursiveDoubling, SmallAllReducesRunItAndLargeOnesTheRings) {
  // 2 types x 3 reductions x 2 placements x 2 executions per count; counts
  // 1 and 13 fit one slice in either type, 5003 does not.
  const long long per_count = 2 * 3 * 2 * 2;
  expect_recursive_doubling(GetParam(),
                            {"colls=allr", "dtypes=fp32,int8", "ops=sum,avg,max",
                             "counts=1,13,5003", "inplace=both", "execs=2"},
                            "NEURON_RT_EMU_ALLREDUCE_RD_BYTES", 3 * per_count,
                            {{"", 2 * per_count}, {"0", 0}});
}

// All-gathers whose whole output fits NEURON_RT_EMU_ALLGATHER_RD_BYTES (and
// one slice) run by recursive doubling too, folded ranks included, on one
// host and across hosts alike.
TEST_P(EngineRecursiveDoubling, SmallAllGathersRunItAndLargeOnesTheRings) {
  // 2 types x 2 placements x 2 executions per count; counts 1 and 13 give
  // outputs of at most 7 x 13 x 4 bytes, inside a slice; 5003 do not.
  const long long per_count = 2 * 2 * 2;
  expect_recursive_doubling(
      GetParam(),
      {"colls=allg", "dtypes=fp32,int8", "ops=sum", "counts=1,13,5003", "inplace=both", "execs=2"},
      "NEURON_RT_EMU_ALLGATHER_RD_BYTES", 3 * per_count,
      {{"", 2 * per_count}, {"65536", 2 * per_count}, {"0", 0}});
}

// On a DIRECT link a slice whose data the step leaves final in the output
// passes by reference (the receiver copies it from the sender's memory);
// NEURON_RT_EMU_DIRECT_READ=0 copies every slice through the slot. Exact
// either way; in-place calls follow out-of-place ones on the same memory,
// so a sender that returned before its slices were read would be caught.
class EngineDirectRead : public ::testing::TestWithParam<Shape> {};

TEST_P(EngineDirectRead, FinalSlicesPassByReferenceUnlessTurnedOff) {
  const Shape s = GetParam();
  const std::vector<std::string> args = {"colls=allg,bcast,allr", "dtypes=fp32,int8", "ops=sum",
                                         "counts=5003",           "inplace=both",     "execs=2"};
  for (const char* knob : {"", "0"}) {
    const nccom_test::LoopbackPort reserved;
    ASSERT_GT(reserved.port(), 0);
    auto env = env_for(s, reserved.port());
    if (*knob != '\0') env["NEURON_RT_EMU_DIRECT_READ"] = knob;
    std::vector<RunningChild> kids = start(s, args, env);
    long long total = 0;
    for (size_t r = 0; r < kids.size(); ++r) {
      nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
      auto rep = nccom_test::parse_report(res.out);
      ASSERT_EQ(rep["ok"], "1") << "rank " << r << ":\n" << res.out << res.err;
      const long long by_ref = closing_count(res.out, " direct slices passed by reference");
      ASSERT_GE(by_ref, 0) << "rank " << r << ": no closing count\n" << res.out;
      total += by_ref;
      // On one host every rank sends over DIRECT links; across hosts the
      // ranks whose ring successor is on the other host send over the
      // network only.
      if (*knob == '\0' && s.hosts == 1) {
        EXPECT_GT(by_ref, 0) << "rank " << r << ":\n" << res.out;
      }
    }
    if (*knob == '\0') {
      EXPECT_GT(total, 0);
    } else {
      EXPECT_EQ(total, 0);
    }
  }
}

const Shape kDirectShapes[] = {{2, 1, "socket"}, {3, 1, "socket"}, {4, 2, "socket"}};
INSTANTIATE_TEST_SUITE_P(Shapes, EngineDirectRead, ::testing::ValuesIn(kDirectShapes), shape_name);

// 3 ranks fold one, 6 fold two, 7 three (a partner's folded range covers
// only part of its group); 2 hosts put exchanges on the network.
const Shape kRdShapes[] = {{2, 1, "socket"}, {3, 1, "socket"}, {6, 2, "socket"},
                           {3, 2, "socket"}, {4, 2, "socket"}, {7, 2, "socket"}};
INSTANTIATE_TEST_SUITE_P(Shapes, EngineRecursiveDoubling, ::testing::ValuesIn(kRdShapes),
                         shape_name);
#endif

}  // namespace

namespace {

// Ranks as threads of one process, 2 emulated hosts × 2 ranks: with
// NEURON_RT_RANKS_PER_NETWORK_PROXY=2 both local ranks of every host (and
// the two hosts' comms, whose local ranks coincide) share one proxy worker;
// with 1, each local rank has its own.
class EngineThreads : public ::testing::TestWithParam<int> {};

TEST_P(EngineThreads, RanksShareProxyWorkersByGroup) {
  const int per_proxy = GetParam();
  const nccom_test::LoopbackPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0);
  auto env = env_for(Shape{4, 2, "socket"}, port);
  env["NEURON_RT_RANKS_PER_NETWORK_PROXY"] = std::to_string(per_proxy);
  nccom_test::ChildResult res = nccom_test::run_child(ENGINE_THREAD_DRIVER, {"4", "2"}, env);
  auto rep = nccom_test::parse_report(res.out);
  ASSERT_EQ(res.exit_code, 0) << res.out << res.err;
  EXPECT_EQ(rep["ok"], "1") << res.out << res.err;
  EXPECT_EQ(rep["workers"], per_proxy == 1 ? "2" : "1") << res.out;
}

INSTANTIATE_TEST_SUITE_P(PerProxy, EngineThreads, ::testing::Values(1, 2));

}  // namespace

#ifndef ENGINE_E2E_LONG
namespace {

// The fields of /proc/<pid>/stat after the command name (field 3, the
// state, first); empty if it cannot be read.
std::vector<std::string> stat_fields(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  std::vector<std::string> fields;
  if (paren == std::string::npos) return fields;
  std::istringstream in(stat.substr(paren + 1));
  for (std::string field; in >> field;) fields.push_back(field);
  return fields;
}

// The CPU time (user + system, in seconds: fields 14 and 15) process `pid`
// has used so far; < 0 if it cannot be read.
double cpu_seconds(int pid) {
  const std::vector<std::string> f = stat_fields(pid);
  if (f.size() < 13) return -1;
  const unsigned long long ticks = std::stoull(f[11]) + std::stoull(f[12]);
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// How long the threads of process `pid` have run and waited for a CPU
// while runnable, in seconds (/proc/<pid>/task/*/schedstat: the first two
// fields, in ns); < 0 if it cannot be read. A loop that never sleeps is
// runnable all the time, however many other processes share the CPUs: run
// plus wait grows as fast as the clock, while its CPU time alone may not.
double runnable_seconds(int pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return -1;
  unsigned long long ns = 0;
  bool read_one = false;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream f(tasks + "/" + entry->d_name + "/schedstat");
    unsigned long long ran = 0, waited = 0;
    if (f >> ran >> waited) {
      ns += ran + waited;
      read_one = true;
    }
  }
  ::closedir(dir);
  return read_one ? static_cast<double>(ns) / 1e9 : -1;
}

char process_state(int pid) {
  const std::vector<std::string> f = stat_fields(pid);
  return f.empty() || f[0].empty() ? '?' : f[0][0];
}

// Rank 0's share of one CPU over a second of waiting: the CPU time it used,
// and the time it was runnable (ran or waited for a CPU).
struct Waiting {
  double cpu = -1;
  double runnable = -1;
};

// Two ranks on one host; rank 1 stops itself (SIGSTOP) before an all-reduce
// rank 0 has started. Measures rank 0 over a second of waiting for it, then
// continues rank 1 and checks that both complete the collective.
Waiting waiting_share(const std::string& spin_us, const std::string& poll_ns) {
  const nccom_test::LoopbackPort reserved;
  const int port = reserved.port();
  EXPECT_GT(port, 0);
  const Shape s{2, 1, "socket"};
  auto env = env_for(s, port);
  env["NEURON_RT_EMU_SPIN_US"] = spin_us;
  env["NEURON_RT_EMU_POLL_NS"] = poll_ns;
  std::vector<RunningChild> kids = start(s, {"stop=1", "die_count=65536"}, env);
  Waiting share;
  bool stopped = false;
  const auto bound = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < bound && !(stopped = process_state(kids[1].pid) == 'T')) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a state, bounded
  }
  EXPECT_TRUE(stopped) << "rank 1 never stopped";
  if (stopped) {
    std::string line;
    while (line != "started=1" && Clock::now() < bound)
      line = nccom_test::read_line(kids[0], std::chrono::seconds(30));
    EXPECT_EQ(line, "started=1") << kids[0].out;
    // The window of the measurement, not a synchronisation: rank 0 is in
    // its all-reduce, which cannot finish while rank 1 is stopped.
    const double cpu_before = cpu_seconds(kids[0].pid);
    const double runnable_before = runnable_seconds(kids[0].pid);
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double cpu_used = cpu_seconds(kids[0].pid) - cpu_before;
    const double runnable = runnable_seconds(kids[0].pid) - runnable_before;
    const double window = std::chrono::duration<double>(Clock::now() - t0).count();
    share.cpu = cpu_before < 0 ? -1 : cpu_used / window;
    share.runnable = runnable_before < 0 ? -1 : runnable / window;
    ::kill(kids[1].pid, SIGCONT);
  }
  for (size_t r = 0; r < kids.size(); ++r) {
    if (!stopped) ::kill(kids[r].pid, SIGKILL);
    nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
    if (!stopped) continue;
    auto rep = nccom_test::parse_report(res.out);
    EXPECT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_EQ(rep["result"], "0") << "rank " << r << ": " << rep["message"];
  }
  return share;
}

// A bad engine knob is an init error naming the knob, its value and the
// range, never silently the default.
TEST(EngineKnobs, ABadValueFailsInitNamingIt) {
  const struct {
    const char* knob;
    const char* value;
    const char* says;
  } cases[] = {
      {"NEURON_RT_EMU_SPIN_US", "fast",
       "NEURON_RT_EMU_SPIN_US=fast is not an integer in 0..10000000"},
      {"NEURON_RT_EMU_PROXY_HELP", "2", "NEURON_RT_EMU_PROXY_HELP=2 is not an integer in 0..1"},
      {"NEURON_RT_EMU_POLL_NS", "1e3", "NEURON_RT_EMU_POLL_NS=1e3 is not an integer in 0..1000000"},
      {"NEURON_RT_EMU_ALLGATHER_RD_BYTES", "-1",
       "NEURON_RT_EMU_ALLGATHER_RD_BYTES=-1 is not an integer in 0..16777216"},
      {"NEURON_RT_EMU_ALLREDUCE_RD_BYTES", "99999999999",
       "NEURON_RT_EMU_ALLREDUCE_RD_BYTES=99999999999 is not an integer in 0..16777216"},
  };
  for (const auto& c : cases) {
    const nccom_test::LoopbackPort reserved;
    ASSERT_GT(reserved.port(), 0);
    const Shape s{1, 1, "socket"};
    auto env = env_for(s, reserved.port());
    env[c.knob] = c.value;
    std::vector<RunningChild> kids = start(s, {"colls=allr", "counts=1"}, env);
    nccom_test::ChildResult res = nccom_test::finish_child(kids[0]);
    EXPECT_EQ(res.exit_code, 1) << res.out << res.err;
    EXPECT_NE(nccom_test::parse_report(res.out)["error"].find(c.says), std::string::npos)
        << c.knob << ": " << res.out;
  }
}

// A setting that decides how a collective runs, different on one rank:
// init fails on every rank, naming the setting, the rank and both values
// (instead of a timeout in the first collective that takes another path).
TEST(EngineKnobs, ASettingThatMustAgreeButDiffersFailsInitOnEveryRank) {
  const struct {
    const char* knob;
    const char* value;  // rank 1's; the others keep the default
  } cases[] = {{"NEURON_RT_EMU_ALLREDUCE_RD_BYTES", "0"},
               {"NEURON_RT_EMU_ALLGATHER_RD_BYTES", "0"},
               {"NEURON_RT_EMU_DIRECT_READ", "0"}};
  for (const auto& c : cases) {
    const nccom_test::LoopbackPort reserved;
    ASSERT_GT(reserved.port(), 0);
    const Shape s{3, 1, "socket"};
    std::vector<RunningChild> kids;
    for (int r = 0; r < 3; ++r) {
      auto env = env_for(s, reserved.port());
      if (r == 1) env[c.knob] = c.value;
      kids.push_back(nccom_test::start_child(
          ENGINE_RANK_DRIVER,
          {std::to_string(r), "3", "0", std::to_string(r), "3", "colls=allr", "counts=1"}, env));
    }
    for (int r = 0; r < 3; ++r) {
      nccom_test::ChildResult res = nccom_test::finish_child(kids[static_cast<size_t>(r)]);
      const std::string error = nccom_test::parse_report(res.out)["error"];
      EXPECT_EQ(res.exit_code, 1) << c.knob << ", rank " << r << ": " << res.out << res.err;
      EXPECT_NE(error.find(std::string(c.knob) + "="), std::string::npos)
          << c.knob << ", rank " << r << ": " << error;
      EXPECT_NE(error.find("must be the same on every rank"), std::string::npos)
          << c.knob << ", rank " << r << ": " << error;
      EXPECT_NE(error.find("rank " + std::string(r == 1 ? "0" : "1")), std::string::npos)
          << c.knob << ", rank " << r << ": " << error;
    }
  }
}

// A device loop with nothing to do sleeps on its doorbell after a short
// spin: it uses next to no CPU (other work on the machine can only lower
// that). With the spin stretched past the window (the control) it never
// sleeps, which is what the measurement must be able to see: it is runnable
// for the whole window, whether it gets a CPU or waits for one behind other
// work. The control watches its doorbell for 1 ms per pass instead of
// yielding every microsecond.
TEST(EngineDoorbell, ARankWaitingForAStoppedPeerSleeps) {
  const Waiting sleeping = waiting_share("20", "1000");
  const Waiting spinning = waiting_share("10000000", "1000000");
  RecordProperty("sleeping_cpu_share", std::to_string(sleeping.cpu));
  RecordProperty("sleeping_runnable_share", std::to_string(sleeping.runnable));
  RecordProperty("spinning_cpu_share", std::to_string(spinning.cpu));
  RecordProperty("spinning_runnable_share", std::to_string(spinning.runnable));
  ASSERT_GE(sleeping.cpu, 0);
  ASSERT_GE(spinning.runnable, 0) << "no /proc/<pid>/task/*/schedstat";
  EXPECT_LT(sleeping.cpu, 0.10) << "rank 0 used " << sleeping.cpu * 100
                                << " % of a CPU while waiting";
  EXPECT_GT(spinning.runnable, 0.5)
      << "the spinning control was runnable only " << spinning.runnable * 100 << " % of the window";
  EXPECT_GT(spinning.runnable, 3 * sleeping.cpu) << sleeping.cpu << " vs " << spinning.runnable;
}

}  // namespace
#endif
