// Slurm for real: munged, slurmctld and one slurmd per network-namespace
// host (each under its own host name, in a UTS namespace of its own) make a
// two-node cluster; srun and sbatch run nccom-test over it, which reads the
// step's environment. Every daemon is this test's child, stopped by pid at
// the end; the state lives in a temporary directory removed with it.
#include "child_process.h"
#include "hosts_support.h"
#include "netns_hosts.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace nccom_test {
namespace {

using Clock = std::chrono::steady_clock;

class SlurmHosts : public testing::Test {
 protected:
  void SetUp() override {
    skip_unless_namespace_hosts();
    if (IsSkipped()) return;
    for (const char* p :
         {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/bin/srun",
          "/usr/bin/nsenter", "/usr/bin/unshare", "/usr/bin/setpriv"}) {
      if (std::string why = machine::program(p); !why.empty())
        NCCOM_SKIP_MACHINE_LACKS(kProgram) << why << " (bash scripts/deps.sh installs it)";
    }
    if (std::string why = machine::cgroups(); !why.empty())
      NCCOM_SKIP_MACHINE_LACKS(kCgroups) << why;
    std::string why;
    hosts_ = NetnsHosts::create(2, &why);
    ASSERT_TRUE(hosts_) << why;
    char dir[] = "/tmp/nccom-slurm-hosts.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    std::filesystem::create_directories(dir_ + "/ctld");
    conf_ = dir_ + "/slurm.conf";
    std::ofstream c(conf_);
    c << "ClusterName=nccomt\n"
      << "SlurmctldHost=h0(" << NetnsHosts::address(0, 0) << ")\n"
      << "SlurmUser=root\nSlurmdUser=root\nSlurmctldPort=46817\nSlurmdPort=46818\n"
      << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << dir_ << "/munge.sock\n"
      << "StateSaveLocation=" << dir_ << "/ctld\nSlurmdSpoolDir=" << dir_ << "/slurmd.%n\n"
      << "SlurmctldPidFile=" << dir_ << "/ctld.pid\nSlurmdPidFile=" << dir_ << "/slurmd.%n.pid\n"
      << "SlurmctldLogFile=" << dir_ << "/ctld.log\nSlurmdLogFile=" << dir_
      << "/slurmd.%n.log\n"
      // No cgroups: the daemons' hosts are network namespaces of one machine.
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSwitchType=switch/none\n"
      << "MpiDefault=none\nReturnToService=2\nSchedulerType=sched/builtin\n"
      << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nJobCompType=jobcomp/none\n"
      << "AccountingStorageType=accounting_storage/none\n"
      << "JobAcctGatherType=jobacct_gather/none\nSlurmdParameters=config_overrides\n";
    for (int h = 0; h < hosts_->size(); ++h) {
      c << "NodeName=h" << h << " NodeAddr=" << NetnsHosts::address(h, 0)
        << " CPUs=4 State=UNKNOWN\n";
    }
    c << "PartitionName=test Nodes=h0,h1 Default=YES MaxTime=INFINITE State=UP "
         "OverSubscribe=YES\n";
    c.close();

    // Every daemon dies with this test's process even when that is killed
    // (setpriv --pdeathsig); the namespaces go with the next run.
    daemons_.push_back(
        start_child("/usr/bin/setpriv",
                    {"--pdeathsig", "KILL", "/usr/sbin/munged", "--foreground", "--force",
                     "--socket=" + dir_ + "/munge.sock", "--key-file=/etc/munge/munge.key",
                     "--pid-file=" + dir_ + "/munged.pid", "--log-file=" + dir_ + "/munged.log",
                     "--seed-file=" + dir_ + "/munge.seed"},
                    {}));
    daemons_.push_back(in_host(0, "exec /usr/sbin/slurmctld -D -f " + conf_));
    for (int h = 0; h < hosts_->size(); ++h) {
      daemons_.push_back(
          in_host(h, "exec /usr/sbin/slurmd -D -f " + conf_ + " -N h" + std::to_string(h)));
    }
    // The nodes register with the controller on their own: asked until both
    // say idle (bounded; each answer is a fresh sinfo).
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    std::string states;
    while (Clock::now() < deadline) {
      states = in_cluster({"/usr/bin/sinfo", "-h", "-o", "%T %D"}).out;
      if (states == "idle 2\n") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_EQ(states, "idle 2\n") << "the cluster never became idle:\n" << logs();
  }
  void TearDown() override {
    for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) {
      if (it->pid > 0) ::kill(it->pid, SIGTERM);
      (void)finish_child(*it);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // A shell line in host h's network namespace, under host name h<h>, with
  // the host's /sys (cgroups) left as it is.
  RunningChild in_host(int h, const std::string& line) {
    return start_child("/usr/bin/setpriv",
                       {"--pdeathsig", "KILL", "/usr/bin/nsenter",
                        "--net=/run/netns/" + hosts_->name(h), "/usr/bin/unshare", "--uts",
                        "/bin/sh", "-c", "hostname h" + std::to_string(h) + "; " + line},
                       {});
  }
  // A Slurm command from host 0, with nccom-test's settings in its
  // environment (srun and sbatch pass it on to the ranks).
  ChildResult in_cluster(const std::vector<std::string>& command,
                         const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = {
        "--net=/run/netns/" + hosts_->name(0),
        "/usr/bin/env",
        "SLURM_CONF=" + conf_,
        "NEURON_RT_ROOT_COMM_ID=" + NetnsHosts::address(0, 0) + ":45300",
        "CCOM_SOCKET_IFNAME=nic0",
        "NCCOM_CONFIG=" + kShippedConfig,
        "NCCL_DEBUG=WARN"};
    args.insert(args.end(), env.begin(), env.end());
    args.insert(args.end(), command.begin(), command.end());
    return run_child("/usr/bin/nsenter", args, {});
  }
  std::string logs() const {
    std::string out;
    for (const char* f : {"/ctld.log", "/slurmd.h0.log", "/slurmd.h1.log", "/munged.log"}) {
      std::ifstream in(dir_ + f);
      out += std::string("--- ") + f + "\n" +
             std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return out;
  }
  std::unique_ptr<NetnsHosts> hosts_;
  std::string dir_, conf_;
  std::vector<RunningChild> daemons_;
};

TEST_F(SlurmHosts, SrunRunsFourRanksOnTwoNodesAndPrintsOneTable) {
  const ChildResult r =
      in_cluster({"/usr/bin/srun", "-N", "2", "-n", "4", "--ntasks-per-node=2", kNccomTest, "-b",
                  "8", "-e", "1M", "-f", "32", "-n", "3", "--check", "allr"});
  const std::string all = r.out + r.err;
  EXPECT_EQ(r.exit_code, 0) << all << logs();
  EXPECT_EQ(count(r.out, "# nccom-test allr: 4 rank(s) on 2 host(s) (srun)"), 1) << all;
  EXPECT_EQ(count(r.out, "Wrong elements       : 0 OK"), 1) << all;
}

// On one node nccom-test needs no root address: it takes a loopback port
// from the job and step ids.
TEST_F(SlurmHosts, SrunOnOneNodeNeedsNoRootAddress) {
  const ChildResult r = in_cluster({"/usr/bin/env", "-u", "NEURON_RT_ROOT_COMM_ID", "/usr/bin/srun",
                                    "-N", "1", "-n", "2", kNccomTest, "-b", "8", "-e", "64K", "-f",
                                    "32", "-n", "3", "--check", "allr"});
  const std::string all = r.out + r.err;
  EXPECT_EQ(r.exit_code, 0) << all << logs();
  EXPECT_EQ(count(r.out, "# nccom-test allr: 2 rank(s) on 1 host(s) (srun)"), 1) << all;
  EXPECT_EQ(count(r.out, "Wrong elements       : 0 OK"), 1) << all;
}

TEST_F(SlurmHosts, SbatchRunsTheSameLine) {
  const std::string out = dir_ + "/job.out";
  const ChildResult submitted =
      in_cluster({"/usr/bin/sbatch", "--parsable", "-N", "2", "-n", "4", "-o", out, "--wrap",
                  "srun --ntasks-per-node=2 " + kNccomTest + " -b 8 -e 8 -n 3 --check allr"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err << logs();
  const std::string job = submitted.out.substr(0, submitted.out.find_first_of(";\n"));
  // The job ends on its own: asked until the controller says it ended.
  std::string state;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    state = in_cluster({"/usr/bin/scontrol", "show", "job", job}).out;
    if (state.find("JobState=COMPLETED") != std::string::npos ||
        state.find("JobState=FAILED") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_NE(state.find("JobState=COMPLETED"), std::string::npos) << state << logs();
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(count(text, "# nccom-test allr: 4 rank(s) on 2 host(s) (srun)"), 1) << text;
  EXPECT_EQ(count(text, "Wrong elements       : 0 OK"), 1) << text;
}

TEST_F(SlurmHosts, ARankThatDiesFailsTheStepWithNccomsMessage) {
  const ChildResult r = in_cluster({"/usr/bin/srun", "-N", "2", "-n", "4", "--ntasks-per-node=2",
                                    kNccomTest, "-b", "8", "-e", "8", "-n", "3", "allr"},
                                   {"NCCOM_TEST_DEBUG_KILL_RANK=3"});
  // Rank 3 is the second node's (its label: host name and Slurm's node id).
  expect_rank_3_named_dead(r, "h1/vs1");
}

}  // namespace
}  // namespace nccom_test
