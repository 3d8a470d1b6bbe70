// neuronBuildGraphComm end to end: ranks as processes on 1 to 4 emulated
// hosts of the reference runtime's platform, each through the real exports,
// the real topology and transport plugins and the selected net (sockets
// over loopback). Every rank must report rings that visit every rank once,
// the same rings as every other rank, and for every channel a network
// connector exactly where the hop leaves the host (P2P within one: no
// connector), or everywhere when NCCL_P2P_DISABLE=1.
#include "graph_launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace {

using graph_comm_test::Launch;
using graph_comm_test::Report;

std::vector<int> parse_ring(const std::string& text) {
  std::vector<int> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) out.push_back(std::stoi(item));
  return out;
}

// The ring as a cycle, rotated to start at rank 0 (ranks see it from themselves).
std::vector<int> canonical(std::vector<int> ring) {
  for (size_t i = 0; i < ring.size(); ++i) {
    if (ring[i] == 0) {
      std::rotate(ring.begin(), ring.begin() + static_cast<long>(i), ring.end());
      break;
    }
  }
  return ring;
}

// The checks every shape shares; `p2p` = same-host hops are direct.
void check_rings(const std::vector<Report>& reports, int hosts, int per_host, bool p2p) {
  const int nranks = hosts * per_host;
  ASSERT_EQ(static_cast<int>(reports.size()), nranks);
  const int channels = std::stoi(reports[0].at("channel_n"));
  ASSERT_GE(channels, 1);
  ASSERT_LE(channels, 32);
  for (int c = 0; c < channels; ++c) {
    const std::string key = "ring" + std::to_string(c);
    const std::vector<int> ring0 = canonical(parse_ring(reports[0].at(key)));
    ASSERT_EQ(static_cast<int>(ring0.size()), nranks);
    EXPECT_EQ(std::set<int>(ring0.begin(), ring0.end()).size(), static_cast<size_t>(nranks))
        << "channel " << c << " visits a rank twice";
    // Each host's ranks form one block of the ring: it crosses between hosts
    // exactly once per host (and never on one host).
    int crossings = 0;
    for (int i = 0; i < nranks; ++i) {
      crossings += ring0[i] / per_host != ring0[(i + 1) % nranks] / per_host ? 1 : 0;
    }
    EXPECT_EQ(crossings, hosts > 1 ? hosts : 0) << "channel " << c;
    for (int r = 0; r < nranks; ++r) {
      const Report& rep = reports[r];
      const std::string ch = std::to_string(c);
      EXPECT_EQ(std::stoi(rep.at("channel_n")), channels) << "rank " << r;
      const std::vector<int> mine = parse_ring(rep.at(key));
      ASSERT_EQ(static_cast<int>(mine.size()), nranks);
      EXPECT_EQ(mine[0], r) << "rank " << r << " channel " << c << ": userRanks starts at self";
      EXPECT_EQ(canonical(mine), ring0) << "rank " << r << " channel " << c;
      if (nranks == 1) continue;
      const int next = std::stoi(rep.at("next" + ch));
      const int prev = std::stoi(rep.at("prev" + ch));
      EXPECT_EQ(next, mine[1]);
      EXPECT_EQ(prev, mine[nranks - 1]);
      const bool next_remote = next / per_host != r / per_host;
      const bool prev_remote = prev / per_host != r / per_host;
      EXPECT_EQ(rep.at("send" + ch), next_remote || !p2p ? "net" : "direct")
          << "rank " << r << " channel " << c << " -> " << next;
      EXPECT_EQ(rep.at("recv" + ch), prev_remote || !p2p ? "net" : "direct")
          << "rank " << r << " channel " << c << " <- " << prev;
    }
  }
}

using Shape = std::tuple<int, int, int>;  // hosts, ranks per host, NCCL_GRAPH_USE_NEW_ALGORITHM
class GraphComm : public ::testing::TestWithParam<Shape> {};

TEST_P(GraphComm, EveryRankBuildsTheSameRingsOverEveryRank) {
  const auto [hosts, per_host, new_algorithm] = GetParam();
  Launch l;
  l.hosts = hosts;
  l.per_host = per_host;
  l.env = {{"NCCL_GRAPH_USE_NEW_ALGORITHM", std::to_string(new_algorithm)}};
  const std::vector<Report> reports = graph_comm_test::run_ranks(l);
  ASSERT_FALSE(reports.empty());
  check_rings(reports, hosts, per_host, /*p2p=*/true);
  for (int r = 0; r < hosts * per_host; ++r) {
    const Report& rep = reports[r];
    if (hosts * per_host == 1) {
      // No net is selected for a single rank: no NIC is known.
      EXPECT_EQ(rep.at("nic_status"), "2") << "rank " << r;
      continue;
    }
    // The socket net on loopback has one device (lo), without a PCI address:
    // the index answers, the BDF form does not (status 1, not a short-buffer 2).
    EXPECT_EQ(rep.at("nic_status"), "0") << "rank " << r;
    EXPECT_EQ(rep.at("nic"), "0") << "rank " << r;
    EXPECT_EQ(rep.at("nic_unknown_status"), "2") << "rank " << r;
    EXPECT_EQ(rep.at("bdf_short_status"), "1") << "rank " << r;
  }
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(std::get<0>(info.param)) + "hosts_" +
         std::to_string(std::get<1>(info.param)) + "per_host_" +
         (std::get<2>(info.param) == 1 ? "new" : "default") + "_search";
}

INSTANTIATE_TEST_SUITE_P(Shapes, GraphComm,
                         ::testing::Values(Shape{1, 1, -1}, Shape{1, 4, -1}, Shape{2, 1, -1},
                                           Shape{2, 4, -1}, Shape{4, 1, -1}, Shape{3, 4, -1},
                                           Shape{1, 8, 1}, Shape{2, 4, 1}, Shape{3, 4, 1}),
                         shape_name);

// NCCL_P2P_DISABLE=1: every hop, on one host or not, goes over the network.
// A setting every rank must share, set otherwise on one rank (here by its
// environment): every rank fails neuronBuildGraphComm at once, alike,
// naming the setting, the rank, both values and where the odd one came from.
TEST(GraphCommAgreement, ASettingThatDiffersOnOneRankFailsEveryRankNamingIt) {
  graph_comm_test::Launch l;
  l.hosts = 2;
  l.per_host = 2;
  l.rank_env = [](int r) {
    return r == 3 ? std::map<std::string, std::string>{{"NCCL_GRAPH_USE_NEW_ALGORITHM", "1"}}
                  : std::map<std::string, std::string>{};
  };
  const auto begin = std::chrono::steady_clock::now();
  graph_comm_test::Started started = graph_comm_test::start_ranks(l);
  ASSERT_EQ(started.children.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    nccom_test::ChildResult res = nccom_test::finish_child(started.children[r]);
    EXPECT_EQ(res.exit_code, 1) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_NE(res.out.find("error=neuronBuildGraphComm"), std::string::npos) << res.out;
    EXPECT_NE((res.out + res.err)
                  .find("graph.use_new_algorithm differs between the ranks: \"1\" on rank 3 "
                        "(env NCCL_GRAPH_USE_NEW_ALGORITHM); \"-1\" on ranks 0, 1, 2"),
              std::string::npos)
        << "rank " << r << ":\n"
        << res.out << res.err;
  }
  // At once: not after a transport or bootstrap timeout (30 s here).
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(20));
}

TEST(GraphCommP2pDisabled, EveryHopIsANetworkHop) {
  Launch l;
  l.hosts = 2;
  l.per_host = 4;
  l.env = {{"NCCL_P2P_DISABLE", "1"}};
  const std::vector<Report> reports = graph_comm_test::run_ranks(l);
  ASSERT_FALSE(reports.empty());
  check_rings(reports, 2, 4, /*p2p=*/false);
}

}  // namespace
