// nccom-ras without a port: the host's job registry names where each running
// job answers. One job is asked without being named; several are listed and
// none is chosen; a job that ended is not listed.
#include "json_check.h"
#include "ras_support.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ras_test::Job;
using ras_test::kRas;
using ras_test::pids_of;
using ras_test::running;

const std::vector<std::string> kEndless = {"-r", "2",  "-N",      "2",  "-b", "8",   "-e",
                                           "8",  "-n", "1000000", "-w", "1",  "allr"};

class NccomRasRegistry : public testing::Test {
 protected:
  // nccom-ras with this test's registry and no address from the environment.
  nccom_test::ChildResult ras(const std::vector<std::string>& args = {}) {
    return nccom_test::run_child(
        kRas, args,
        {{"NCCOM_RAS_REGISTRY", registry()}, {"NCCOM_RAS_ADDR", ""}, {"NCCL_RAS_ADDR", ""}});
  }
  std::map<std::string, std::string> job_env() { return {{"NCCOM_RAS_REGISTRY", registry()}}; }
  std::string registry() const { return dir_.path() + "/registry"; }

  nccom_test::TempDir dir_;
};

TEST_F(NccomRasRegistry, WithoutAPortTheOnlyJobOfTheHostIsAsked) {
  Job job(kEndless, job_env());
  const std::set<int> pids = pids_of(running(job, 2, 10, 60s), 2);
  ASSERT_EQ(pids.size(), 2u);
  const auto r = ras({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(pids_of(r.out, 2), pids) << r.out;
  // --list names it: its address and both pids.
  const auto l = ras({"--list"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_NE(l.out.find("1 nccom job on this host (registry " + registry() + "):"),
            std::string::npos)
      << l.out;
  EXPECT_NE(l.out.find("127.0.0.1:" + std::to_string(job.port())), std::string::npos) << l.out;
  for (int pid : pids) EXPECT_NE(l.out.find(std::to_string(pid)), std::string::npos) << l.out;
}

TEST_F(NccomRasRegistry, SeveralJobsAreListedAndNoneIsChosen) {
  Job first(kEndless, job_env());
  Job second(kEndless, job_env());
  ASSERT_EQ(pids_of(running(first, 2, 10, 60s), 2).size(), 2u);
  ASSERT_EQ(pids_of(running(second, 2, 10, 60s), 2).size(), 2u);
  const auto r = ras();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("nccom-ras: 2 jobs run on this host; ask one with -p PORT"),
            std::string::npos)
      << r.err;
  for (const Job* job : {&first, &second}) {
    EXPECT_NE(r.out.find("127.0.0.1:" + std::to_string(job->port())), std::string::npos) << r.out;
  }
  const auto j = ras({"--list", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  std::string why;
  EXPECT_TRUE(json_check::valid(j.out, &why)) << why << "\n" << j.out;
  EXPECT_NE(j.out.find("\"address\":\"127.0.0.1:" + std::to_string(second.port()) + "\""),
            std::string::npos)
      << j.out;
}

TEST_F(NccomRasRegistry, JobsThatEndedAreNotListed) {
  {
    Job ended(kEndless, job_env());
    ASSERT_EQ(pids_of(running(ended, 2, 10, 60s), 2).size(), 2u);
    ended.end();  // SIGTERM to the launcher: its ranks are stopped, not asked to clean up
  }
  ASSERT_EQ(nccom_test::run_child(ras_test::kTool,
                                  {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "allr"}, job_env())
                .exit_code,
            0);
  const auto l = ras({"--list"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_NE(l.out.find("0 nccom jobs on this host"), std::string::npos) << l.out;
  // (A bare nccom-ras now asks 127.0.0.1:28028, which another test's job
  // may be serving: not asserted here.)
}

}  // namespace
