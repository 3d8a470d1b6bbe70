// The network proxy end to end: each rank a process, through the real exports,
// neuronBuildGraphComm's ring connectors, the NET_NEURON transport over the
// socket net and the reference runtime's proxy worker, with a scripted device
// per rank. Each rank checks its own semaphore counts and every byte it
// received (e2e_block.cc); these tests check that every rank did, and the fault
// cases. The 8-rank shapes are in proxy_e2e_long_test.cc.
#include "e2e_launch.h"

#include <signal.h>

#include <set>

namespace proxy_e2e_test {
namespace {

using Clock = std::chrono::steady_clock;

// Every rank ran every execution and its checks passed; the ring each rank
// used is consistent (my next's prev is me).
void expect_ring(const std::vector<Report>& reports, int execs) {
  const int n = static_cast<int>(reports.size());
  for (int r = 0; r < n; ++r) {
    Report rep = reports[r];
    for (int e = 0; e < execs; ++e)
      EXPECT_EQ(rep["exec" + std::to_string(e)], "ok") << "rank " << r;
    const int next = std::stoi(rep["next"]);
    ASSERT_TRUE(next >= 0 && next < n && next != r) << "rank " << r << " next " << next;
    EXPECT_EQ(std::stoi(Report(reports[next])["prev"]), r) << "rank " << r << " -> " << next;
  }
}

void run_case(Shape shape, const std::vector<std::string>& args, int execs) {
  const std::vector<Report> reports = run_ranks(shape, args);
  if (::testing::Test::HasFailure()) return;
  expect_ring(reports, execs);
}

const char* kOddSizes = "sizes=1,7,0,4096,65537,0,3,1000";

class ProxyE2EShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(ProxyE2EShapes, OddAndZeroSizedSlicesArriveIntactTwice) {
  run_case(GetParam(), {kOddSizes, "execs=2"}, 2);
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(info.param.ranks()) + "ranks_" + std::to_string(info.param.hosts) + "hosts";
}

INSTANTIATE_TEST_SUITE_P(Shapes, ProxyE2EShapes,
                         ::testing::Values(Shape{2, 1}, Shape{3, 1}, Shape{1, 4}, Shape{4, 1}),
                         shape_name);

// neuronExpandConnectivity(MESH), then one op per peer whose descriptors are
// routed by dst_rank/src_rank (variable_peer) to the mesh connections: every
// rank sends to and receives from every other rank, bytes and semaphores
// checked by each rank (its enc_channel ids are above every ring channel, so
// a descriptor routed by channel id would find no connection).
class ProxyE2EMesh : public ::testing::TestWithParam<Shape> {};

TEST_P(ProxyE2EMesh, EveryRankExchangesWithEveryPeerOverTheMesh) {
  const std::vector<Report> reports = run_ranks(GetParam(), {"mesh=1", kOddSizes, "execs=2"});
  for (size_t r = 0; r < reports.size(); ++r) {
    Report rep = reports[r];
    EXPECT_EQ(rep["exec0"], "ok") << "rank " << r;
    EXPECT_EQ(rep["exec1"], "ok") << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ProxyE2EMesh,
                         ::testing::Values(Shape{2, 1}, Shape{3, 1}, Shape{1, 4}, Shape{4, 1}),
                         shape_name);

TEST(ProxyE2E, DynamicSizesFromTheRuntimesTable) {
  run_case({2, 1}, {"sizes=4,0,8192,12,65536,0,400", "dynamic=1", "execs=2"}, 2);
}

TEST(ProxyE2E, DynamicSizesOnFourRanks) { run_case({1, 4}, {"sizes=8,0,4096,12", "dynamic=1"}, 1); }

TEST(ProxyE2E, FiveExecutionsOfTheSameBlock) {
  run_case({2, 1}, {"sizes=100,0,3000", "execs=5"}, 5);
}

TEST(ProxyE2E, TwoStreamsOnTheirOwnChannels) {
  run_case({2, 1}, {kOddSizes, "streams=2", "execs=2"}, 2);
}

TEST(ProxyE2E, OneBlockOverSeveralChannels) {
  run_case({2, 1}, {"sizes=5,4096,0,77", "channels=2", "execs=2"}, 2);
}

TEST(ProxyE2E, TwoStreamsOfTwoChannelsOnFourRanks) {
  run_case({1, 4}, {"sizes=5,4096,0,77", "streams=2", "channels=2"}, 1);
}

TEST(ProxyE2E, FourStreamsOfThreeChannelsOnFourRanks) {
  run_case({1, 4}, {"sizes=3,0,70000", "streams=4", "channels=3", "execs=2"}, 2);
}

// fold_n 4: the device publishes each entry on all four fold words; the
// proxy takes the minimum and resets every fold at EXEC_COMPLETE (the second
// execution starts them at 0 again).
TEST(ProxyE2E, FourFoldsPublishEveryEntryTwice) {
  run_case({2, 1}, {kOddSizes, "folds=4", "execs=2"}, 2);
}

TEST(ProxyE2E, SixHundredSlicesWrapTheIndexRing) {
  std::string sizes = "sizes=";
  for (int i = 0; i < 600; ++i)
    sizes += std::to_string(i % 5 == 4 ? 0 : 16 + i % 7) + (i < 599 ? "," : "");
  run_case({2, 1}, {sizes, "execs=2"}, 2);
}

TEST(ProxyE2E, RingSemaphoreIdentityCountsCreditsAndCompletionsOnOneWord) {
  run_case({3, 1}, {kOddSizes, "shared_sems=1", "execs=2"}, 2);
}

TEST(ProxyE2E, EarlySendCompletionAndEarlyReceivePosting) {
  run_case({1, 4}, {kOddSizes, "early_send=1", "early_recv=1", "execs=2"}, 2);
}

TEST(ProxyE2E, DynamicSizesWithEarlyFlags) {
  run_case({2, 1}, {"sizes=4,0,8192,12", "dynamic=1", "early_send=1", "early_recv=1", "execs=2"},
           2);
}

TEST(ProxyE2E, MalformedFifosAreRefusedWithTheReasonInTheLog) {
  std::vector<Report> reports = run_ranks({2, 1}, {"malformed=1"});
  if (::testing::Test::HasFailure()) return;
  for (size_t r = 0; r < reports.size(); ++r) {
    for (const char* c : {"no_exec_complete", "op_out_of_range"}) {
      const std::string k = c;
      EXPECT_NE(reports[r][k + "_status"], "0") << "rank " << r << " " << c;
      EXPECT_EQ(reports[r][k + "_logged"], "1")
          << "rank " << r << " " << c << ": log was " << reports[r][k + "_log"];
    }
  }
}

// SIGKILL of one rank while its peers are mid-transfer (or, with `kill`
// false, the rank stays alive but its device stops publishing and the
// health service's stall bound is short): the rank that receives from it must
// see its task fail with NRT_NETWORK_PROXY_FAILURE (1206) within a bounded
// time, and no survivor may hang.
void kill_case(Shape shape, int victim, bool kill_it = true) {
  std::map<std::string, std::string> env;
  if (!kill_it) env["NCCOM_HEALTH_STALL_FAIL_S"] = "2";
  std::vector<nccom_test::RunningChild> children = start_ranks(
      shape,
      {"sizes=65536,65536,65536,65536,65536,65536,65536,65536", "victim=" + std::to_string(victim)},
      env);
  if (::testing::Test::HasFailure()) return;
  const int n = shape.ranks();
  std::vector<std::string> seen(n);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(wait_for(children[r], "started=", Clock::now() + std::chrono::seconds(60), &seen[r]),
              "1")
        << "rank " << r << " did not start its task:\n"
        << seen[r];
  }
  ASSERT_EQ(wait_for(children[victim], "victim_ready=", Clock::now() + std::chrono::seconds(30),
                     &seen[victim]),
            "1")
      << "victim did not reach mid-transfer:\n"
      << seen[victim];
  if (kill_it) {
    ASSERT_EQ(kill(children[victim].pid, SIGKILL), 0);
  }
  const auto killed = Clock::now();
  const auto bound = std::chrono::seconds(20);
  // The survivors report in ring order from the victim's successor, each
  // released (SIGUSR1: it exits and closes its connections) once it has
  // reported. The successor receives from the victim and reports while every
  // other survivor stays up, so its failure can only come from the victim.
  // A rank further on learns of the failure from its own predecessor leaving:
  // its sends to the victim may all have completed (eager sends of 64 KiB
  // finish in the kernel's buffers), so it cannot be asked to see the victim.
  std::vector<int> succ(static_cast<size_t>(n), -1);  // the rank whose prev is the index
  for (int r = 0; r < n; ++r) {
    const Report rep = nccom_test::parse_report(seen[r]);
    const int prev = rep.count("prev") ? std::stoi(rep.at("prev")) : -1;
    if (prev >= 0 && prev < n) succ[static_cast<size_t>(prev)] = r;
  }
  std::vector<int> order;
  for (int r = succ[static_cast<size_t>(victim)];
       r >= 0 && r != victim && order.size() + 1 < static_cast<size_t>(n);
       r = succ[static_cast<size_t>(r)])
    order.push_back(r);
  // n - 1 steps that lead back to the victim visit every survivor once.
  ASSERT_TRUE(static_cast<int>(order.size()) == n - 1 &&
              succ[static_cast<size_t>(order.back())] == victim)
      << "the ranks' prev do not form one ring";
  for (const int r : order) {
    const std::string result = wait_for(children[r], "result=", killed + bound, &seen[r]);
    const double secs = std::chrono::duration<double>(Clock::now() - killed).count();
    const Report rep = nccom_test::parse_report(seen[r]);
    ASSERT_FALSE(result.empty()) << "rank " << r << " reported no result within " << bound.count()
                                 << " s of the kill:\n"
                                 << seen[r];
    const std::string message =
        wait_for(children[r], "message=", Clock::now() + std::chrono::seconds(5), nullptr);
    const std::string log =
        wait_for(children[r], "log=", Clock::now() + std::chrono::seconds(5), nullptr);
    if (rep.count("prev") && std::stoi(rep.at("prev")) == victim) {
      EXPECT_EQ(result, "1206") << "rank " << r
                                << " receives from the dead rank; message: " << message;
      EXPECT_NE(message.find("1206"), std::string::npos) << message;
      // The plugin's reason names a connection to the dead rank (whichever
      // of the rank's two ops failed first: the failure is sticky).
      const std::string from = "receive from rank " + std::to_string(victim) + ",";
      const std::string to = "send to rank " + std::to_string(victim) + ",";
      if (kill_it) {
        EXPECT_TRUE(log.find(from) != std::string::npos || log.find(to) != std::string::npos)
            << "rank " << r << " log names neither '" << from << "' nor '" << to << "': " << log;
      } else {
        // The health service's verdict: "no progress for N ms (health.stall_fail_s): waiting on
        // rank R ...".
        EXPECT_NE(log.find("(health.stall_fail_s): waiting on rank " + std::to_string(victim)),
                  std::string::npos)
            << "the stall reason is not logged: " << log;
      }
    } else {
      EXPECT_TRUE(result == "0" || result == "1206")
          << "rank " << r << ": " << result << " " << message;
    }
    ::testing::Test::RecordProperty("rank" + std::to_string(r) + "_result", result);
    std::printf("rank %d: task status %s after %.2f s: %s\n  log: %s\n", r, result.c_str(), secs,
                message.c_str(), log.c_str());
    kill(children[r].pid, SIGUSR1);
  }
  if (!kill_it) {
    ASSERT_EQ(kill(children[victim].pid, SIGKILL), 0);  // it waits to be killed
  }
  for (int r = 0; r < n; ++r) {
    nccom_test::ChildResult res = nccom_test::finish_child(children[r]);
    if (r == victim) {
      EXPECT_EQ(res.signal, SIGKILL) << "victim:\n" << res.out << res.err;
    } else {
      EXPECT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    }
  }
}

TEST(ProxyE2EFault, KilledPeerFailsTheSurvivorsProgress) { kill_case({2, 1}, 1); }

TEST(ProxyE2EFault, KilledRankInARingOfFour) { kill_case({4, 1}, 2); }

// A live peer whose device stops publishing is not detected by the net;
// health.stall_fail_s turns the stall into a failure.
TEST(ProxyE2EFault, StalledPeerFailsTheSurvivorWithTheStallWatchdog) {
  kill_case({2, 1}, 1, false);
}

// A stall no transport sees, in a communicator with a dead member. In the
// ring s -> S -> T -> D -> s, s's device stops half-way (its process lives
// and answers) and D is killed: S waits on s and sends to T, so none of its
// connections fails. Only the health service can tell that the stall will
// not end: it fails S at health.stall_warn_s (1 s here), naming D, rather
// than after health.stall_fail_s (30 minutes).
TEST(ProxyE2EFault, AStallInACommunicatorWithADeadMemberFailsAtTheStallWarning) {
  // Graph rings of ranks on one host run in rank order: s = 0, S = 1, T = 2,
  // D = 3 (checked below from the ranks' reports).
  constexpr int kS = 0, kWaits = 1, kDead = 3;
  std::vector<nccom_test::RunningChild> children =
      start_ranks({4, 1},
                  {"sizes=65536,65536,65536,65536,65536,65536,65536,65536",
                   "stalled=" + std::to_string(kS), "victim=" + std::to_string(kDead)},
                  {{"NCCOM_HEALTH_STALL_WARN_S", "1"}, {"NCCOM_HEALTH_QUERY_TIMEOUT_MS", "300"}});
  if (::testing::Test::HasFailure()) return;
  std::vector<std::string> seen(4);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(wait_for(children[r], "started=", Clock::now() + std::chrono::seconds(60), &seen[r]),
              "1")
        << "rank " << r << " did not start its task:\n"
        << seen[r];
  }
  for (int r : {kS, kDead}) {
    ASSERT_EQ(
        wait_for(children[r], "victim_ready=", Clock::now() + std::chrono::seconds(30), &seen[r]),
        "1")
        << "rank " << r << " did not reach mid-transfer:\n"
        << seen[r];
  }
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(nccom_test::parse_report(seen[r])["prev"], std::to_string((r + 3) % 4))
        << "rank " << r << ": the ring is not in rank order, which this case assumes:\n"
        << seen[r];
  }
  ASSERT_EQ(kill(children[kDead].pid, SIGKILL), 0);
  const auto killed = Clock::now();
  const std::string result =
      wait_for(children[kWaits], "result=", killed + std::chrono::seconds(20), &seen[kWaits]);
  const double secs = std::chrono::duration<double>(Clock::now() - killed).count();
  const std::string log =
      wait_for(children[kWaits], "log=", Clock::now() + std::chrono::seconds(5), nullptr);
  std::printf("rank %d: task status %s after %.2f s\n  log: %s\n", kWaits, result.c_str(), secs,
              log.c_str());
  ASSERT_FALSE(result.empty()) << "rank " << kWaits << " waits on a stalled rank while rank "
                               << kDead << " is dead, and reported nothing within 20 s:\n"
                               << seen[kWaits];
  EXPECT_NE(result, "0");
  EXPECT_NE(log.find("(health.stall_warn_s): waiting on rank " + std::to_string(kS) + " (host "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("; failing now, not after health.stall_fail_s: rank " + std::to_string(kDead) +
                     " (host "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(std::to_string(children[kDead].pid) +
                     ") of this communicator is dead, so none of its collectives can complete"),
            std::string::npos)
      << log;
  for (int r = 0; r < 4; ++r) {
    if (r != kDead) kill(children[r].pid, r == kS ? SIGKILL : SIGUSR1);
  }
  for (int r = 0; r < 4; ++r) nccom_test::finish_child(children[r]);
}

// Rank 0 also holds the bootstrap root: its death must not turn into a hang
// of the others' proxy either.
TEST(ProxyE2EFault, KilledRankZeroInARingOfThree) { kill_case({3, 1}, 0); }

}  // namespace
}  // namespace proxy_e2e_test
