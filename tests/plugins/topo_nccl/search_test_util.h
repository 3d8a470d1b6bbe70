// Shared by the TopoNcclOldSearch and TopoNcclPlugin suites: loading the
// fixtures of tests/plugins/topo_nccl/data (and tests/sdk/topo/data/pcie_host.xml),
// recording log lines, and the ring properties every result must have.
#pragma once

#include "build_paths.h"
#include "graph_driver.h"
#include "local_share.h"
#include "old_search.h"
#include "system_source.h"

#include <nccom/topo/paths.h>
#include <nccom/util/bounded_file.h>
#include <nccom/util/log.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace topo_nccl_test {

inline std::string dataFile(const std::string& name) {
  if (name == "pcie_host.xml")
    return std::string(NCCOM_SOURCE_DIR) + "/tests/sdk/topo/data/pcie_host.xml";
  return std::string(NCCOM_SOURCE_DIR) + "/tests/plugins/topo_nccl/data/" + name;
}

inline std::string readData(const std::string& name) {
  auto text = nccom::read_bounded_file(dataFile(name), 1u << 20, dataFile(name));
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message);
  return text.ok() ? *text : std::string();
}

inline nccom::topo_nccl::LocalShare share(std::vector<int> ranks, int nNodes, int nRanks) {
  nccom::topo_nccl::LocalShare s;
  s.ranks = std::move(ranks);
  s.nNodes = nNodes;
  s.nRanks = nRanks;
  return s;
}

// The system compute_graph would search for this fixture and share.
inline nccom::topo::TopoSystem searchSystem(const std::string& name,
                                            const nccom::topo_nccl::LocalShare& s) {
  auto sys = nccom::topo_nccl::prepareSearchSystem(readData(name), s);
  EXPECT_TRUE(sys.ok()) << (sys.ok() ? "" : sys.error().message);
  return sys.ok() ? std::move(*sys) : nccom::topo::TopoSystem{};
}

// Records what the backend logs through the SDK logger (nccom/util/log.h)
// while it lives: the logger of this test binary, as a plugin's init
// installs the host's. One at a time (the logger is process-wide).
class LogLines {
 public:
  LogLines() {
    current() = this;
    nccom::util::set_logger(&record);
  }
  ~LogLines() {
    nccom::util::clear_logger();
    current() = nullptr;
  }
  LogLines(const LogLines&) = delete;
  LogLines& operator=(const LogLines&) = delete;

  bool has(const std::string& line) const {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  }
  std::vector<std::string> lines;

 private:
  static LogLines*& current() {
    static LogLines* capture = nullptr;
    return capture;
  }
  static void record(nccom_log_level_t level, unsigned long, const char*, int, const char* fmt,
                     ...) {
    char text[1024];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    if (current() != nullptr)
      current()->lines.push_back(std::string(level == NCCOM_LOG_LEVEL_WARN ? "WARN " : "INFO ") +
                                 text);
  }
};

inline bool isTier(float v) {
  return std::find(nccom::topo_nccl::kSpeedTiers.begin(), nccom::topo_nccl::kSpeedTiers.end(), v) !=
         nccom::topo_nccl::kSpeedTiers.end();
}

// Every channel row is a permutation of the system's GPU ranks; every hop
// (NET -> first GPU, GPU -> GPU, last GPU -> NET or back to the first) has
// a path of a type the graph allows; NET entries are NET ids of the system
// and without crossNic a channel leaves by the port it came in.
inline void expectValidRings(const nccom::topo::TopoSystem& sys, const nccom::topo::TopoGraph& g) {
  using nccom::topo::NodeType;
  const int n = sys.count(NodeType::GPU);
  ASSERT_EQ(g.nLocal, n);
  ASSERT_GE(g.nChannels, 1);
  ASSERT_EQ(g.intra.size(), static_cast<std::size_t>(g.nChannels * n));
  ASSERT_EQ(g.inter.size(), static_cast<std::size_t>(g.nChannels));
  std::vector<int> ranks;
  for (const auto& gpu : sys.of(NodeType::GPU)) ranks.push_back(gpu.gpu.rank);
  std::sort(ranks.begin(), ranks.end());
  auto path = [&](NodeType ta, int a, NodeType tb, int b) -> const nccom::topo::TopoPath& {
    return sys.of(ta)[static_cast<std::size_t>(a)]
        .paths[static_cast<std::size_t>(tb)][static_cast<std::size_t>(b)];
  };
  const bool nets = sys.count(NodeType::NET) > 0;
  for (int c = 0; c < g.nChannels; ++c) {
    std::vector<int> row(g.channel(c), g.channel(c) + n);
    std::vector<int> sorted = row;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, ranks) << "channel " << c << " is not a permutation of the local ranks";
    const int hops = nets ? n - 1 : (n > 1 ? n : 0);  // without NETs the ring closes on itself
    for (int i = 0; i < hops; ++i) {
      const int a = sys.gpuIndexOfRank(row[static_cast<std::size_t>(i)]);
      const int b = sys.gpuIndexOfRank(row[static_cast<std::size_t>((i + 1) % n)]);
      const auto& p = path(NodeType::GPU, a, NodeType::GPU, b);
      EXPECT_TRUE(p.reachable()) << "channel " << c << " hop " << i;
      EXPECT_LE(static_cast<int>(p.type), static_cast<int>(g.typeIntra))
          << "channel " << c << " hop " << i;
    }
    if (!nets) continue;
    const int in = sys.find(NodeType::NET, g.inter[static_cast<std::size_t>(c)][0]);
    const int out = sys.find(NodeType::NET, g.inter[static_cast<std::size_t>(c)][1]);
    ASSERT_GE(in, 0) << "channel " << c << " enters by NET "
                     << g.inter[static_cast<std::size_t>(c)][0];
    ASSERT_GE(out, 0) << "channel " << c << " leaves by NET "
                      << g.inter[static_cast<std::size_t>(c)][1];
    const auto& pin = path(NodeType::NET, in, NodeType::GPU, sys.gpuIndexOfRank(row.front()));
    const auto& pout = path(NodeType::GPU, sys.gpuIndexOfRank(row.back()), NodeType::NET, out);
    EXPECT_TRUE(pin.reachable() && pout.reachable()) << "channel " << c;
    EXPECT_LE(static_cast<int>(pin.type), static_cast<int>(g.typeInter)) << "channel " << c;
    EXPECT_LE(static_cast<int>(pout.type), static_cast<int>(g.typeInter)) << "channel " << c;
    if (g.crossNic == 0) {
      const auto& a = sys.of(NodeType::NET)[static_cast<std::size_t>(in)].net;
      const auto& b = sys.of(NodeType::NET)[static_cast<std::size_t>(out)].net;
      EXPECT_TRUE(a.guid == b.guid && a.port == b.port)
          << "channel " << c << " crosses NICs without crossNic";
    }
  }
}

}  // namespace topo_nccl_test
