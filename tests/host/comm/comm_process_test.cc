// Communicators whose ranks are separate processes, each driving the real
// libnccom exports through the reference runtime: flat and hierarchical, on
// 1 to 4 emulated hosts, from a unique id or from a host:port root address.
#include "build_paths.h"
#include "child_process.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

namespace {

using nccom_test::ChildResult;
using nccom_test::finish_child;
using nccom_test::RunningChild;
using nccom_test::start_child;

const std::string kDriver = COMM_RANK_DRIVER;

std::map<std::string, std::string> env_for(const std::string& protocol) {
  return {{"CCOM_SOCKET_IFNAME", "lo"},
          {"NCCOM_BOOTSTRAP_PROTOCOL", protocol},
          {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "30000"},
          {"NEURON_CCOM_SOCK_TIMEOUT", "30000"},
          {"NCCOM_CONFIG", ""},
          {"NCCL_DEBUG", "WARN"}};
}

int host_of(int rank, int nranks, int hosts) { return rank / ((nranks + hosts - 1) / hosts); }

// Every rank exited 0 and reported the same cluster id and epoch.
void expect_consistent(std::vector<ChildResult>& results, int hosts) {
  std::set<std::string> cluster_ids, epochs;
  for (std::size_t r = 0; r < results.size(); ++r) {
    auto report = nccom_test::parse_report(results[r].out);
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << ":\n" << results[r].out << results[r].err;
    EXPECT_EQ(report["ok"], "1") << "rank " << r;
    EXPECT_EQ(report["node_n"], std::to_string(hosts)) << "rank " << r;
    cluster_ids.insert(report["cluster_id"]);
    epochs.insert(report["epoch"]);
  }
  EXPECT_EQ(cluster_ids.size(), 1u);
  EXPECT_EQ(epochs.size(), 1u);
}

using Shape = std::tuple<std::string, int, int>;  // protocol, ranks, hosts
class CommProcesses : public ::testing::TestWithParam<Shape> {};

TEST_P(CommProcesses, RanksAsProcessesFromAUniqueId) {
  const auto& [protocol, nranks, hosts] = GetParam();
  const auto env = env_for(protocol);
  std::vector<RunningChild> children;
  children.push_back(start_child(kDriver, {std::to_string(nranks), "0", "0", "--make-id"}, env));
  const std::string first = nccom_test::read_line(children[0], std::chrono::seconds(30));
  ASSERT_EQ(first.rfind("id=", 0), 0u) << "rank 0 said: " << first;
  const std::string id = first.substr(3);
  for (int r = 1; r < nranks; ++r) {
    children.push_back(start_child(kDriver,
                                   {std::to_string(nranks), std::to_string(r),
                                    std::to_string(host_of(r, nranks, hosts)), "--id", id},
                                   env));
  }
  std::vector<ChildResult> results;
  for (auto& child : children) results.push_back(finish_child(child));
  expect_consistent(results, std::min(hosts, nranks));
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks_" +
         std::to_string(std::get<2>(info.param)) + "hosts";
}

INSTANTIATE_TEST_SUITE_P(Shapes, CommProcesses,
                         ::testing::Values(Shape{"flat", 1, 1}, Shape{"flat", 2, 1},
                                           Shape{"flat", 3, 1}, Shape{"flat", 4, 2},
                                           Shape{"flat", 8, 2}, Shape{"flat", 16, 4},
                                           Shape{"flat", 64, 4}, Shape{"hierarchical", 2, 2},
                                           Shape{"hierarchical", 3, 1}, Shape{"hierarchical", 4, 4},
                                           Shape{"hierarchical", 8, 2},
                                           Shape{"hierarchical", 16, 4},
                                           Shape{"hierarchical", 64, 4}),
                         shape_name);

TEST(CommProcessesGlobal, GlobalCommFromARootAddress) {
  for (const std::string protocol : {"flat", "hierarchical", "auto"}) {
    const int nranks = 8;
    const int hosts = 2;
    const nccom_test::LoopbackPort reserved;
    const std::string root = "127.0.0.1:" + std::to_string(reserved.port());
    std::vector<RunningChild> children;
    for (int r = 0; r < nranks; ++r) {
      children.push_back(start_child(kDriver,
                                     {std::to_string(nranks), std::to_string(r),
                                      std::to_string(host_of(r, nranks, hosts)), "--root", root},
                                     env_for(protocol)));
    }
    std::vector<ChildResult> results;
    for (auto& child : children) results.push_back(finish_child(child));
    SCOPED_TRACE(protocol);
    expect_consistent(results, hosts);
  }
}

}  // namespace
