// neuronExpandConnectivity end to end (ranks as processes, real exports,
// plugins and socket net): after MESH every other rank, after RDH the
// recursive doubling/halving partners, has a send and a receive end —
// a network connector (distinct from every other) for a rank on another
// host, none (direct, P2P) for a rank on the same host — found by
// neuronGetNetConnector(MESH, channel = peer rank); memory registers on the
// network ones only; anything else is refused. The calls are idempotent, and
// ranks that disagree on the argument all fail instead of hanging.
#include "graph_launch.h"

#include <gtest/gtest.h>

#include <set>

namespace {

using graph_comm_test::Launch;
using graph_comm_test::Report;

constexpr const char* kInvalid = "err2";  // NRT_INVALID

// partners[r]: the ranks rank r must reach; same_host(a, b) decides direct.
void check_mesh(const std::vector<Report>& reports, const std::vector<std::set<int>>& partners,
                int per_host, bool p2p) {
  const int n = static_cast<int>(partners.size());
  ASSERT_EQ(static_cast<int>(reports.size()), n);
  for (int r = 0; r < n; ++r) {
    const Report& rep = reports[r];
    for (int p = 0; p < n; ++p) {
      const std::string at = "rank " + std::to_string(r) + ", peer " + std::to_string(p);
      const std::string ps = std::to_string(p);
      if (p == r || partners[r].count(p) == 0) {
        EXPECT_EQ(rep.at("mesh_send" + ps), kInvalid) << at;
        EXPECT_EQ(rep.at("mesh_recv" + ps), kInvalid) << at;
        EXPECT_EQ(rep.at("mesh_reg" + ps), kInvalid) << at;
        continue;
      }
      const bool net = !p2p || p / per_host != r / per_host;
      EXPECT_EQ(rep.at("mesh_send" + ps), net ? "net" : "direct") << at;
      EXPECT_EQ(rep.at("mesh_recv" + ps), net ? "net" : "direct") << at;
      EXPECT_EQ(rep.at("mesh_reg" + ps), net ? "ok" : kInvalid) << at;
    }
  }
}

std::vector<std::set<int>> everyone(int n) {
  std::vector<std::set<int>> out(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p != r) out[r].insert(p);
    }
  }
  return out;
}

Launch launch(int hosts, int per_host, std::vector<std::string> args) {
  Launch l;
  l.hosts = hosts;
  l.per_host = per_host;
  l.args = [args](int) { return args; };
  return l;
}

void expect_expands(const std::vector<Report>& reports, int count, const std::string& status) {
  for (size_t r = 0; r < reports.size(); ++r) {
    for (int k = 0; k < count; ++k) {
      EXPECT_EQ(reports[r].at("expand" + std::to_string(k)), status)
          << "rank " << r << " call " << k;
    }
  }
}

TEST(GraphMesh, MeshReachesEveryRankNetworkAcrossHostsDirectWithin) {
  const auto reports = graph_comm_test::run_ranks(launch(2, 4, {"--expand", "mesh"}));
  ASSERT_FALSE(reports.empty());
  expect_expands(reports, 1, "0");
  check_mesh(reports, everyone(8), 4, true);
}

TEST(GraphMesh, MeshWithP2pDisabledIsNetworkEverywhere) {
  Launch l = launch(1, 4, {"--expand", "mesh"});
  l.env = {{"NCCL_P2P_DISABLE", "1"}};
  const auto reports = graph_comm_test::run_ranks(l);
  ASSERT_FALSE(reports.empty());
  expect_expands(reports, 1, "0");
  check_mesh(reports, everyone(4), 4, false);
}

TEST(GraphMesh, RdhOnFourHostsConnectsTheXorPartners) {
  const auto reports = graph_comm_test::run_ranks(launch(4, 1, {"--expand", "rdh"}));
  ASSERT_FALSE(reports.empty());
  expect_expands(reports, 1, "0");
  // Hand-checked: r ^ 1 and r ^ 2.
  check_mesh(reports, {{1, 2}, {0, 3}, {0, 3}, {1, 2}}, 1, true);
}

TEST(GraphMesh, RdhOnSixRanksFoldsTheExtraTwo) {
  const auto reports = graph_comm_test::run_ranks(launch(6, 1, {"--expand", "rdh"}));
  ASSERT_FALSE(reports.empty());
  expect_expands(reports, 1, "0");
  // p2 = 4: ranks 0..3 pair by r ^ 1, r ^ 2; 4 and 5 fold into 0 and 1.
  check_mesh(reports, {{1, 2, 4}, {0, 3, 5}, {0, 3}, {1, 2}, {0}, {1}}, 1, true);
}

TEST(GraphMesh, RdhOnTwoHostsOfFourMixesDirectAndNetworkPartners) {
  const auto reports = graph_comm_test::run_ranks(launch(2, 4, {"--expand", "rdh"}));
  ASSERT_FALSE(reports.empty());
  expect_expands(reports, 1, "0");
  // r ^ 1 and r ^ 2 share the host (direct), r ^ 4 is on the other one.
  check_mesh(
      reports,
      {{1, 2, 4}, {0, 3, 5}, {0, 3, 6}, {1, 2, 7}, {0, 5, 6}, {1, 4, 7}, {2, 4, 7}, {3, 5, 6}}, 4,
      true);
}

TEST(GraphMesh, RepeatedAndWideningCallsAreIdempotent) {
  const auto reports = graph_comm_test::run_ranks(launch(
      2, 4, {"--expand", "rdh", "--expand", "mesh", "--expand", "mesh", "--expand", "default"}));
  ASSERT_FALSE(reports.empty());
  expect_expands(reports, 4, "0");
  check_mesh(reports, everyone(8), 4, true);
}

TEST(GraphMesh, RanksThatDisagreeAllFailWithoutHanging) {
  Launch l = launch(2, 1, {});
  l.args = [](int r) {
    return std::vector<std::string>{"--expand", r == 0 ? "mesh" : "rdh", "--expand", "7"};
  };
  const auto reports = graph_comm_test::run_ranks(l);
  ASSERT_FALSE(reports.empty());
  expect_expands(reports, 1, "2");  // NRT_INVALID
  for (size_t r = 0; r < reports.size(); ++r) {
    EXPECT_EQ(reports[r].at("expand1"), "2") << "connectivity 7, rank " << r;
    EXPECT_EQ(reports[r].count("mesh_send0"), 0u) << "nothing was connected";
  }
}

}  // namespace
