// Lifecycles a runtime may choose, end to end: every rank runs init, build,
// neuronGetCommInfo and frees its communicator at once, with no collective
// and no fence in between. The first rank to finish leaves while others are
// still building; a member that leaves cleanly after its part of setup must
// not fail the others' setup. Each shape runs several times: the order in
// which ranks finish differs from run to run.
#include "graph_launch.h"

#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <tuple>

namespace {

using graph_comm_test::Launch;
using graph_comm_test::Report;

using Shape = std::tuple<int, int>;  // hosts, ranks per host

#ifndef GRAPH_LIFECYCLE_LONG
constexpr int kRepetitions = 3;
#else
constexpr int kRepetitions = 20;
#endif

// NCCOM_LIFECYCLE_REPETITIONS overrides the count (to chase a rare failure).
int repetitions() {
  const char* env = std::getenv("NCCOM_LIFECYCLE_REPETITIONS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : kRepetitions;
}

class FreeRightAfterBuild : public ::testing::TestWithParam<Shape> {};

TEST_P(FreeRightAfterBuild, EveryRankSucceeds) {
  const auto [hosts, per_host] = GetParam();
  const int reps = repetitions();
  for (int i = 0; i < reps; ++i) {
    Launch l;
    l.hosts = hosts;
    l.per_host = per_host;
    l.args = [](int) { return std::vector<std::string>{"--free-first"}; };
    const std::vector<Report> reports = graph_comm_test::run_ranks(l);
    ASSERT_EQ(static_cast<int>(reports.size()), hosts * per_host)
        << "run " << i + 1 << " of " << reps;
    for (const Report& r : reports) EXPECT_EQ(r.at("channel_n"), reports[0].at("channel_n"));
  }
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(std::get<0>(info.param)) + "hosts_" +
         std::to_string(std::get<1>(info.param)) + "per_host";
}

#ifndef GRAPH_LIFECYCLE_LONG
INSTANTIATE_TEST_SUITE_P(Shapes, FreeRightAfterBuild,
                         ::testing::Values(Shape{1, 2}, Shape{1, 4}, Shape{2, 2}, Shape{2, 4}),
                         shape_name);
#else
// 1 to 16 ranks over 1 to 4 emulated hosts.
INSTANTIATE_TEST_SUITE_P(Shapes, FreeRightAfterBuild,
                         ::testing::Values(Shape{1, 1}, Shape{1, 2}, Shape{1, 3}, Shape{1, 4},
                                           Shape{1, 8}, Shape{1, 16}, Shape{2, 1}, Shape{2, 3},
                                           Shape{2, 8}, Shape{3, 4}, Shape{4, 1}, Shape{4, 2},
                                           Shape{4, 4}),
                         shape_name);
#endif

// A rank restarted during setup: rank 2's process dies right after
// neuronInitComm, while the others build the graph and wait for its
// transport connections, and a new process starts as rank 2. Every other
// rank fails, naming rank 2, well before its own transport bound (30 s
// here); the new process cannot join a communicator that has formed without
// it and fails within its bootstrap bound.
class RestartDuringSetup : public ::testing::TestWithParam<Shape> {};

TEST_P(RestartDuringSetup, EveryRankFailsNamingTheRestartedRank) {
  using Clock = std::chrono::steady_clock;
  const auto [hosts, per_host] = GetParam();
  const int nranks = hosts * per_host;
  constexpr int kVictim = 2;
  Launch l;
  l.hosts = hosts;
  l.per_host = per_host;
  l.args = [](int r) {
    return r == kVictim ? std::vector<std::string>{"--die-after-init"} : std::vector<std::string>{};
  };
  graph_comm_test::Started started = graph_comm_test::start_ranks(l);
  ASSERT_EQ(static_cast<int>(started.children.size()), nranks);
  nccom_test::ChildResult dead = nccom_test::finish_child(started.children[kVictim]);
  ASSERT_EQ(dead.signal, SIGKILL) << dead.out << dead.err;
  const auto died = Clock::now();
  nccom_test::RunningChild again = graph_comm_test::start_rank(
      l, started, kVictim, {}, {{"NCCOM_BOOTSTRAP_TIMEOUT_MS", "5000"}});
  for (int r = 0; r < nranks; ++r) {
    if (r == kVictim) continue;
    nccom_test::ChildResult res = nccom_test::finish_child(started.children[r]);
    const auto took = Clock::now() - died;
    EXPECT_EQ(res.exit_code, 1) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_TRUE(std::regex_search(res.out + res.err, std::regex("rank 2 (\\(|at )")))
        << "rank " << r << " does not name rank 2:\n"
        << res.out << res.err;
    EXPECT_LT(took, std::chrono::seconds(20)) << "rank " << r << " waited for its own bound";
  }
  nccom_test::ChildResult res = nccom_test::finish_child(again);
  EXPECT_EQ(res.exit_code, 1) << res.out << res.err;
  EXPECT_NE(res.out.find("error=neuronInitComm"), std::string::npos) << res.out << res.err;
  EXPECT_NE((res.out + res.err).find("a rank restarted after that cannot rejoin it"),
            std::string::npos)
      << res.out << res.err;
  EXPECT_LT(Clock::now() - died, std::chrono::seconds(25));
}

INSTANTIATE_TEST_SUITE_P(Shapes, RestartDuringSetup, ::testing::Values(Shape{1, 4}, Shape{2, 2}),
                         shape_name);

}  // namespace
