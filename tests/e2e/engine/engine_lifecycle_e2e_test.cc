// EngineLeave, EngineFault, EngineKnobs, EngineDoorbell: the reference
// device engine's ranks around their collectives. A rank that exits right
// after its last collective is not a rank that died; a rank that dies (or
// is restarted) makes the others fail in time with a message naming it; a
// bad engine knob, or one that differs between ranks, fails init naming it;
// a rank waiting for a stopped peer sleeps. The shapes and the rank
// processes: engine_e2e.h.
#include "build_paths.h"
#include "child_process.h"
#include "engine_e2e.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using engine_e2e::env_for;
using engine_e2e::run_all;
using engine_e2e::RunningChild;
using engine_e2e::Shape;
using engine_e2e::shape_name;
using engine_e2e::start;
using engine_e2e::start_rank;
using Clock = std::chrono::steady_clock;

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
