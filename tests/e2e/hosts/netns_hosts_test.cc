// The namespace hosts of the launcher and interface tests: each host reaches
// the others on both networks through its own interfaces, sees only its own
// addresses, and nothing is left behind.
#include "netns_hosts.h"

#include "build_paths.h"
#include "child_process.h"
#include "hosts_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace nccom_test {
namespace {

const std::string kProbe = std::string(NCCOM_BUILD_DIR) + "/bin/tcp_probe";

std::unique_ptr<NetnsHosts> make_hosts(int n) {
  std::string why;
  auto hosts = NetnsHosts::create(n, &why);
  if (!hosts) ADD_FAILURE() << "namespace hosts: " << why;
  return hosts;
}

// Runs `args` in host h; its result.
ChildResult run_in(const NetnsHosts& hosts, int h, std::vector<std::string> args) {
  std::vector<std::string> argv = hosts.exec_prefix(h);
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string program = argv.front();
  argv.erase(argv.begin());
  return run_child(program, argv, {});
}

bool listed(const std::string& ns) {
  const auto all = list_netns();
  return std::find(all.begin(), all.end(), ns) != all.end();
}

TEST(NetnsHosts, EveryHostReachesTheOthersOnBothNetworks) {
  skip_unless_namespace_hosts();
  if (IsSkipped()) return;
  auto hosts = make_hosts(3);
  ASSERT_TRUE(hosts);
  for (int net = 0; net < NetnsHosts::kNetworks; ++net) {
    for (int to = 0; to < hosts->size(); ++to) {
      const int from = (to + 1) % hosts->size();
      const std::string addr = NetnsHosts::address(to, net);
      std::vector<std::string> serve = hosts->exec_prefix(to);
      serve.insert(serve.end(), {kProbe, "serve", addr, "47123"});
      const std::string program = serve.front();
      serve.erase(serve.begin());
      RunningChild server = start_child(program, serve, {});
      ASSERT_EQ(read_line(server, std::chrono::seconds(10)), "ready")
          << "host " << to << " cannot listen on " << addr;
      const ChildResult asked = run_in(*hosts, from, {kProbe, "ask", addr, "47123", "hi"});
      EXPECT_EQ(asked.exit_code, 0) << "host " << from << " -> " << addr << ": " << asked.err;
      EXPECT_EQ(asked.out, "echo hi\n");
      const ChildResult served = finish_child(server);
      EXPECT_EQ(served.exit_code, 0) << served.err;
    }
  }
}

TEST(NetnsHosts, AHostHasLoAndItsTwoInterfacesOnly) {
  skip_unless_namespace_hosts();
  if (IsSkipped()) return;
  auto hosts = make_hosts(2);
  ASSERT_TRUE(hosts);
  const ChildResult r = run_in(*hosts, 1, {"/usr/sbin/ip", "-o", "-4", "addr", "show"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("lo    inet 127.0.0.1/8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nic0    inet 10.90.0.2/24"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nic1    inet 10.91.0.2/24"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
}

TEST(NetnsHosts, NothingIsLeftBehindNotEvenAfterAFailingTest) {
  skip_unless_namespace_hosts();
  if (IsSkipped()) return;
  std::vector<std::string> made;
  {
    auto hosts = make_hosts(2);
    ASSERT_TRUE(hosts);
    made = hosts->namespaces();
    ASSERT_EQ(made.size(), 3u);
    for (const std::string& ns : made) EXPECT_TRUE(listed(ns)) << ns;
    // A failing test leaves its scope the same way: the object goes.
  }
  for (const std::string& ns : made) EXPECT_FALSE(listed(ns)) << ns << " is still there";
}

// A test killed before its destructors ran leaves its namespaces: the next
// create() deletes those whose owner process is gone.
TEST(NetnsHosts, AKilledTestsNamespacesGoWithTheNextHosts) {
  skip_unless_namespace_hosts();
  if (IsSkipped()) return;
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const std::string stale = "nccomt" + std::to_string(dead) + "x0h0";
  const ChildResult added = run_child("/usr/sbin/ip", {"netns", "add", stale}, {});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  ASSERT_TRUE(listed(stale));
  auto hosts = make_hosts(1);
  ASSERT_TRUE(hosts);
  EXPECT_FALSE(listed(stale)) << stale << " outlived its owner";
  if (listed(stale)) (void)run_child("/usr/sbin/ip", {"netns", "del", stale}, {});
}

}  // namespace
}  // namespace nccom_test
