// Open MPI across hosts: mpirun in the first of two network-namespace hosts
// starts nccom-test ranks on both through an rsh launch agent that enters
// the target host's namespace (each host with its own host name, in a UTS
// namespace of its own). nccom-test reads mpirun's environment; the root is
// on the first host's nic0 address.
#include "child_process.h"
#include "hosts_support.h"
#include "netns_hosts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace nccom_test {
namespace {

class MpirunHosts : public testing::Test {
 protected:
  void SetUp() override {
    skip_unless_namespace_hosts();
    if (IsSkipped()) return;
    if (std::string why = machine::program("/usr/bin/mpirun"); !why.empty())
      NCCOM_SKIP_MACHINE_LACKS(kProgram) << why << " (openmpi-bin)";
    std::string why;
    hosts_ = NetnsHosts::create(2, &why);
    ASSERT_TRUE(hosts_) << why;
    char dir[] = "/tmp/nccom-mpirun-hosts.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    agent_ = dir_ + "/agent";
    std::ofstream a(agent_);
    a << "#!/bin/sh\n"
         "# mpirun's rsh agent for the namespace hosts: agent HOST COMMAND...\n"
         "host=$1; shift\n"
         "case \"$host\" in\n";
    for (int h = 0; h < hosts_->size(); ++h) {
      a << "  " << NetnsHosts::address(h, 0) << ") ns=" << hosts_->name(h) << "; name=h" << h
        << " ;;\n";
    }
    a << "  *) echo \"agent: unknown host $host\" >&2; exit 1 ;;\n"
         "esac\n"
         "# The command is a shell line (mpirun may prefix PATH settings).\n"
         "exec /usr/sbin/ip netns exec \"$ns\" /usr/bin/unshare --uts /bin/sh -c "
         "\"hostname $name; $*\"\n";
    a.close();
    ASSERT_EQ(::chmod(agent_.c_str(), 0755), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) {
      ::unlink(agent_.c_str());
      ::rmdir(dir_.c_str());
    }
  }
  // mpirun -np 4 over both hosts (2 slots each), started in host 0;
  // `extra`: more -x NAME=VALUE settings and nccom-test arguments.
  ChildResult mpirun(const std::vector<std::string>& env, const std::vector<std::string>& args) {
    std::string line =
        "hostname h0; exec /usr/bin/mpirun --allow-run-as-root --oversubscribe "
        "--bind-to none --mca plm_rsh_agent " +
        agent_ +
        " --mca oob_tcp_if_include nic0 --mca btl self,tcp "
        "--mca btl_tcp_if_include nic0 --host " +
        NetnsHosts::address(0, 0) + ":2," + NetnsHosts::address(1, 0) +
        ":2 -np 4 -x NEURON_RT_ROOT_COMM_ID=" + NetnsHosts::address(0, 0) +
        ":45200 -x CCOM_SOCKET_IFNAME=nic0 -x FI_TCP_IFACE=nic0 -x NCCOM_CONFIG=" + kShippedConfig +
        " -x NCCL_DEBUG=WARN";
    for (const std::string& e : env) line += " -x " + e;
    line += " " + kNccomTest;
    for (const std::string& a : args) line += " " + a;
    std::vector<std::string> argv = hosts_->exec_prefix(0);
    argv.insert(argv.end(), {"/usr/bin/unshare", "--uts", "/bin/sh", "-c", line});
    const std::string program = argv.front();
    argv.erase(argv.begin());
    return run_child(program, argv, {});
  }
  std::unique_ptr<NetnsHosts> hosts_;
  std::string dir_, agent_;
};

TEST_F(MpirunHosts, FourRanksOnTwoHostsCheckEveryNetPlugin) {
  for (const char* net : {"socket", "ofi"}) {
    const ChildResult r = mpirun(
        {"FI_PROVIDER='tcp;ofi_rxm'"},
        {"--net", net, "-b", "8", "-e", "1M", "-f", "32", "-n", "3", "--check", "allr", "allg"});
    const std::string all = r.out + r.err;
    EXPECT_EQ(r.exit_code, 0) << net << ":\n" << all;
    EXPECT_EQ(count(r.out, ": 4 rank(s) on 2 host(s) (mpirun)"), 2) << net
                                                                    << ": one table per "
                                                                       "operation, printed once:\n"
                                                                    << all;
    EXPECT_EQ(count(r.out, "Wrong elements       : 0 OK"), 2) << net << ":\n" << all;
    // The placement block, gathered from every rank: two ranks on each
    // machine, by its own host name (the emulated host id is 0 under mpirun).
    for (const char* host : {"h0", "h1"}) {
      for (const char* device : {"0", "1"}) {
        const std::string line =
            std::string(" on         ") + host + " emulated host 0 device  " + device + "\n";
        EXPECT_EQ(count(r.out, line), 1) << net << ": " << line << all;
      }
    }
  }
}

TEST_F(MpirunHosts, ARankThatDiesFailsTheJobWithNccomsMessage) {
  const ChildResult r =
      mpirun({"NCCOM_TEST_DEBUG_KILL_RANK=3"}, {"-b", "8", "-e", "8", "-n", "3", "allr"});
  expect_rank_3_named_dead(r, "h1");
}

}  // namespace
}  // namespace nccom_test
