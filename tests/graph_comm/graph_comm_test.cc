// neuronBuildGraphComm end to end: ranks as processes on 1 to 4 emulated
// hosts of the reference runtime's platform, each through the real exports,
// the real topology and transport plugins and the selected net (sockets
// over loopback). Every rank must report rings that visit every rank once,
// the same rings as every other rank, and connectors for every channel.
#include "child_process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using nccom_test::ChildResult;
using nccom_test::RunningChild;

const std::string kDriver = GRAPH_RANK_DRIVER;

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

using Shape = std::tuple<int, int, int>;  // hosts, ranks per host, NCCL_GRAPH_USE_NEW_ALGORITHM
class GraphComm : public ::testing::TestWithParam<Shape> {};

TEST_P(GraphComm, EveryRankBuildsTheSameRingsOverEveryRank) {
  const auto [hosts, per_host, new_algorithm] = GetParam();
  const int nranks = hosts * per_host;
  const std::map<std::string, std::string> env = {
      {"CCOM_SOCKET_IFNAME", "lo"},         {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "30000"},
      {"NEURON_CCOM_SOCK_TIMEOUT", "30000"}, {"NCCOM_CONFIG", ""},
      {"NCCL_DEBUG", "WARN"},               {"NEURON_RT_EMU_DEVICES", std::to_string(per_host)},
      {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"},
      {"NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS", "30000"},
      {"NCCL_GRAPH_USE_NEW_ALGORITHM", std::to_string(new_algorithm)}};
  std::vector<RunningChild> children;
  children.push_back(nccom_test::start_child(kDriver, {std::to_string(nranks), "0", "0", "0", "--make-id"}, env));
  const std::string first = nccom_test::read_line(children[0], std::chrono::seconds(30));
  ASSERT_EQ(first.rfind("id=", 0), 0u) << "rank 0 said: " << first;
  for (int r = 1; r < nranks; ++r) {
    children.push_back(nccom_test::start_child(
        kDriver,
        {std::to_string(nranks), std::to_string(r), std::to_string(r / per_host),
         std::to_string(r % per_host), "--id", first.substr(3)},
        env));
  }
  std::vector<std::map<std::string, std::string>> reports;
  for (int r = 0; r < nranks; ++r) {
    ChildResult res = nccom_test::finish_child(children[r]);
    auto report = nccom_test::parse_report(res.out);
    ASSERT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    ASSERT_EQ(report["ok"], "1") << "rank " << r;
    reports.push_back(report);
  }
  const int channels = std::stoi(reports[0]["channel_n"]);
  ASSERT_GE(channels, 1);
  ASSERT_LE(channels, 32);
  for (int c = 0; c < channels; ++c) {
    const std::string key = "ring" + std::to_string(c);
    const std::vector<int> ring0 = canonical(parse_ring(reports[0][key]));
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
      EXPECT_EQ(std::stoi(reports[r]["channel_n"]), channels) << "rank " << r;
      const std::vector<int> mine = parse_ring(reports[r][key]);
      ASSERT_EQ(static_cast<int>(mine.size()), nranks);
      EXPECT_EQ(mine[0], r) << "rank " << r << " channel " << c << ": userRanks starts at self";
      EXPECT_EQ(canonical(mine), ring0) << "rank " << r << " channel " << c;
      if (nranks > 1) {
        EXPECT_EQ(std::stoi(reports[r]["next" + std::to_string(c)]), mine[1]);
        EXPECT_EQ(std::stoi(reports[r]["prev" + std::to_string(c)]), mine[nranks - 1]);
      }
    }
  }
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(std::get<0>(info.param)) + "hosts_" + std::to_string(std::get<1>(info.param)) +
         "per_host_" + (std::get<2>(info.param) == 1 ? "new" : "default") + "_search";
}

INSTANTIATE_TEST_SUITE_P(Shapes, GraphComm,
                         ::testing::Values(Shape{1, 1, -1}, Shape{1, 4, -1}, Shape{2, 1, -1},
                                           Shape{2, 4, -1}, Shape{4, 1, -1}, Shape{3, 4, -1},
                                           Shape{1, 8, 1}, Shape{2, 4, 1}, Shape{3, 4, 1}),
                         shape_name);

}  // namespace
