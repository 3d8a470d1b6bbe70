// The health service at 32 ranks on 4 emulated hosts (long suite): a
// stopped rank is named unresponsive after the keep-alive timeout,
// the ranks that wait on it name it, and the job completes after SIGCONT.
// The victim is rank 8, the first rank of the second host: its ring
// predecessor (rank 7) reaches it through the network proxy, which is what
// publishes waits. Ranks on the same host reach each other through the
// device (the reference engine here), which the host does not see.
#include "ras_support.h"

#include <gtest/gtest.h>

namespace {

using namespace ras_test;
using namespace std::chrono_literals;

// How much later than the keep-alive timeout a stopped rank may be named
// unresponsive: its peers' engines and nccom-ras's queries may wait for a
// CPU on a loaded machine. Only a detection that never comes takes longer.
constexpr int kNamedLateMs = 15000;

TEST(NccomRasScale, ThirtyTwoRanksAStoppedRankIsNamedAndTheJobCompletes) {
  Job job({"-r", "32", "-N", "4", "-b", "8", "-e", "8", "-n", "1500", "-w", "1", "--timeout-ms",
           "300000", "--check", "allr"},
          {{"NCCOM_HEALTH_STALL_WARN_S", "2"}, {"NCCOM_HEALTH_STALL_FAIL_S", "0"}});
  const std::string json = running(job, 32, 5, 240s);
  const auto victim = pid_of(json, 8);
  ASSERT_TRUE(victim) << json;

  // The answer time at 32 ranks, for the record.
  const auto a0 = Clock::now();
  const auto asked = job.ras();
  const auto answer_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - a0).count();
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  EXPECT_NE(asked.out.find("nccom health: 32 processes on 4 hosts"), std::string::npos)
      << asked.out;
  ::testing::Test::RecordProperty("ras_answer_ms_32_ranks", std::to_string(answer_ms));
  std::printf("nccom-ras at 32 ranks: %lld ms\n", static_cast<long long>(answer_ms));

  std::string report;
  const long took = stop_until_unresponsive(
      job, *victim, report, std::chrono::milliseconds(kKeepAliveTimeoutMs + kNamedLateMs));
  ASSERT_GE(took, 0) << report;
  EXPECT_LE(took, kKeepAliveTimeoutMs + kNamedLateMs) << report;
  std::printf("SIGSTOP -> unresponsive at 32 ranks: %ld ms\n", took);

  ASSERT_TRUE(eventually(
      [&] {
        report = job.ras({"--timeout-ms", "300"}).out;
        return report.find("waits on rank 8 (host ") != std::string::npos &&
               report.find("(health.stall_warn_s): waiting on rank 8 (host ") != std::string::npos;
      },
      30s))
      << report;
  job.resume(*victim);
  const auto done = job.finish();
  EXPECT_EQ(done.exit_code, 0) << done.out.substr(0, 4000) << done.err.substr(0, 4000);
  const std::string all = done.out + done.err;
  EXPECT_NE(all.find("(health.stall_warn_s): waiting on rank 8 (host "), std::string::npos);
  EXPECT_NE(all.find("pid " + std::to_string(*victim) + "): unresponsive"), std::string::npos);
}

// With a short health.stall_fail_s, at 32 ranks: the job fails, every
// stall failure names the stopped process, and nccom-test's failure line
// carries the health view naming it.
TEST(NccomRasScale, ThirtyTwoRanksAStallPastStallFailNamesTheStoppedRank) {
  Job job({"-r", "32", "-N", "4", "-b", "8", "-e", "8", "-n", "100000", "-w", "1", "allr"},
          {{"NCCOM_HEALTH_STALL_WARN_S", "1"}, {"NCCOM_HEALTH_STALL_FAIL_S", "3"}});
  const std::string json = running(job, 32, 5, 240s);
  const auto victim = pid_of(json, 8);
  ASSERT_TRUE(victim) << json;
  job.stop(*victim);
  expect_stall_failure_naming(job.finish(), *victim);
}

}  // namespace
