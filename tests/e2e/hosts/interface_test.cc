// Interface selection across hosts: two network namespace hosts, each with
// nic0 and nic1 on two networks, one nccom-test rank on each started the way
// mpirun starts ranks (its environment), the root on the first host. The
// interface knob decides which network the bootstrap and the socket plugin
// use; a choice that matches nothing fails naming the interfaces it saw.
#include "child_process.h"
#include "hosts_support.h"
#include "netns_hosts.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace nccom_test {
namespace {

struct Ranks {
  std::vector<ChildResult> results;
  std::string all() const {
    std::string out;
    for (std::size_t r = 0; r < results.size(); ++r)
      out += "--- rank " + std::to_string(r) + "\n" + results[r].out + results[r].err;
    return out;
  }
};

// One rank per host, OpenMPI's environment, the root on host 0's address on
// `root_network`, `ifname` for the interface knob.
Ranks run(const NetnsHosts& hosts, const std::string& ifname, int root_network) {
  std::vector<RunningChild> kids;
  for (int h = 0; h < hosts.size(); ++h) {
    std::vector<std::string> argv = hosts.exec_prefix(h);
    // `ip netns exec` passes its environment on; env sets the rank's.
    argv.insert(argv.end(),
                {"/usr/bin/env",
                 "OMPI_COMM_WORLD_RANK=" + std::to_string(h),
                 "OMPI_COMM_WORLD_SIZE=" + std::to_string(hosts.size()),
                 "OMPI_COMM_WORLD_LOCAL_RANK=0",
                 "OMPI_COMM_WORLD_LOCAL_SIZE=1",
                 "NEURON_RT_ROOT_COMM_ID=" + NetnsHosts::address(0, root_network) + ":45123",
                 "NCCL_HOSTID=netns-host-" + std::to_string(h),
                 "NCCOM_CONFIG=" + kShippedConfig,
                 "CCOM_SOCKET_IFNAME=" + ifname,
                 "NCCL_DEBUG=INFO",
                 "NCCL_DEBUG_SUBSYS=INIT,NET",
                 "NCCOM_BOOTSTRAP_TIMEOUT_MS=10000",
                 kNccomTest,
                 "-b",
                 "8",
                 "-e",
                 "64K",
                 "-f",
                 "8",
                 "-n",
                 "3",
                 "--check",
                 "allr"});
    const std::string program = argv.front();
    argv.erase(argv.begin());
    kids.push_back(start_child(program, argv, {}));
  }
  Ranks out;
  for (RunningChild& k : kids) out.results.push_back(finish_child(k));
  return out;
}

class InterfaceSelection : public testing::Test {
 protected:
  void SetUp() override {
    skip_unless_namespace_hosts();
    if (IsSkipped()) return;
    std::string why;
    hosts_ = NetnsHosts::create(2, &why);
    ASSERT_TRUE(hosts_) << why;
  }
  // Every rank ran the check and used `nic` (on its own address) for the
  // bootstrap and the socket plugin.
  void expect_ran_over(const Ranks& r, const std::string& nic, int network) {
    for (int h = 0; h < hosts_->size(); ++h) {
      const ChildResult& res = r.results[static_cast<std::size_t>(h)];
      const std::string mine = NetnsHosts::address(h, network);
      EXPECT_EQ(res.exit_code, 0) << r.all();
      const std::string said = res.out + res.err;
      EXPECT_NE(said.find("Bootstrap : Using " + nic + ":" + mine), std::string::npos)
          << "rank " << h << ":\n"
          << r.all();
      EXPECT_NE(said.find("NET/Socket : device 0: " + nic + " " + mine), std::string::npos)
          << "rank " << h << ":\n"
          << r.all();
    }
    EXPECT_NE(r.results[0].out.find("Wrong elements       : 0 OK"), std::string::npos) << r.all();
  }
  std::unique_ptr<NetnsHosts> hosts_;
};

TEST_F(InterfaceSelection, APrefixPicksTheFirstMatchingInterface) {
  expect_ran_over(run(*hosts_, "nic", 0), "nic0", 0);
}

TEST_F(InterfaceSelection, AnExactNamePicksThatInterface) {
  expect_ran_over(run(*hosts_, "=nic1", 1), "nic1", 1);
}

TEST_F(InterfaceSelection, AnExclusionPicksWhatIsLeft) {
  expect_ran_over(run(*hosts_, "^nic0,lo", 1), "nic1", 1);
}

TEST_F(InterfaceSelection, ANameThatMatchesNothingFailsListingTheInterfaces) {
  const Ranks r = run(*hosts_, "=nic", 0);
  for (const ChildResult& res : r.results) {
    EXPECT_NE(res.exit_code, 0) << r.all();
    const std::string said = res.out + res.err;
    EXPECT_NE(said.find("No usable listening interface found (filter \"=nic\""), std::string::npos)
        << r.all();
    EXPECT_NE(said.find("up: lo, nic0, nic1"), std::string::npos) << r.all();
  }
}

}  // namespace
}  // namespace nccom_test
