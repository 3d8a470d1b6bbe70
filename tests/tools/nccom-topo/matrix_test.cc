// The ring properties over every platform x node count x logical-core mode,
// computed through the real topology plugins by simulate_cluster, checked
// against the platform's own table (plugins/topo_neuron platform.h), not
// against a previous run.
//
// Built twice: MATRIX_NEW_NODES / MATRIX_OLD_NODES select the node counts
// of the NEW search (topo_neuron) and the OLD one (topo_nccl): the fast
// cases in the unit target, the rest in the `long` one.
#include "build_paths.h"
#include "topo_neuron/platform.h"
#include "topo_tool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace nccom::topotool {
namespace {

namespace tn = topo_neuron;
using graphbuild::SimulatedCluster;

struct Case {
  tn::Variant variant;
  int nodes;
  int lnc;
  int new_algorithm;  // 1: the NEW search (topo_neuron); 0: the OLD one (topo_nccl)
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const tn::PlatformSpec& s : tn::platformTable())
    for (int lnc : s.lncModes) {
      for (int nodes : {MATRIX_NEW_NODES}) out.push_back({s.variant, nodes, lnc, 1});
      // Switch-V1 always runs the NEW search: no OLD case.
      if (s.variant == tn::Variant::Trn3SwitchV1) continue;
      // The OLD search (the inherited bandwidth-tier DFS) does not place a
      // torus node's 16-64 cores across nodes within its budget: it falls
      // back to the simple order, whose hops skip the links (a known limit,
      // docs/decisions.md "Topology"). Multi-node OLD runs on emu only.
      for (int nodes : {MATRIX_OLD_NODES}) {
        if (nodes > 1 && s.variant != tn::Variant::Emu) continue;
        out.push_back({s.variant, nodes, lnc, 0});
      }
    }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = tn::platformSpec(info.param.variant).name;
  std::replace(n.begin(), n.end(), '-', '_');
  return n + "_nodes" + std::to_string(info.param.nodes) + "_lnc" + std::to_string(info.param.lnc) +
         (info.param.new_algorithm == 1 ? "_new" : "_old");
}

const Backends& backends() {
  static const std::unique_ptr<Backends> b = [] {
    // Built-in defaults, nothing from the environment: each case sets the
    // search itself.
    config::LoadOptions options;
    options.getenv = [](const char*) -> const char* { return nullptr; };
    options.tables = {config::host_knobs()};
    core::CreateOptions setup;
    setup.installed_plugins = std::string(NCCOM_BUILD_DIR) + "/lib/nccom";
    setup.configure_logging = false;
    auto context = core::Context::create(options, setup);
    if (!context) {
      ADD_FAILURE() << context.error().message;
      return std::unique_ptr<Backends>();
    }
    auto loaded = Backends::load(std::move(*context));
    if (!loaded) ADD_FAILURE() << loaded.error().message;
    return loaded ? std::move(*loaded) : nullptr;
  }();
  return *b;
}

// A ring as its successor map (independent of where the walk starts).
std::vector<int> successors(const std::vector<int>& ring, int n_ranks) {
  std::vector<int> next(static_cast<size_t>(n_ranks), -1);
  for (size_t i = 0; i < ring.size(); ++i) next[ring[i]] = ring[(i + 1) % ring.size()];
  return next;
}

std::vector<std::vector<int>> all_successors(const rings::GraphSummary& s, int n_ranks) {
  std::vector<std::vector<int>> out;
  for (const auto& ch : s.rings.channels) out.push_back(successors(ch.userRanks, n_ranks));
  return out;
}

class ToolsTopoMatrix : public ::testing::TestWithParam<Case> {};

TEST_P(ToolsTopoMatrix, RingsUseThePlatformsLinksAndNics) {
  const Case k = GetParam();
  const tn::PlatformSpec& spec = tn::platformSpec(k.variant);
  auto choice = choose_platform(backends(), spec.name, -1, k.lnc);
  ASSERT_TRUE(choice.ok()) << choice.error().message;
  // The oracle is the plugin's own table, read here directly; the tool saw
  // the platform only through the plugin's answers, which must agree with it.
  tn::DescribeOptions options;
  options.lnc = k.lnc;
  auto described = tn::describePlatform(k.variant, options);
  ASSERT_TRUE(described.ok()) << described.error().message;
  const tn::PlatformDescription& d = *described;
  ASSERT_EQ(choice->node.n_devices, d.nDevices);
  ASSERT_EQ(choice->node.n_vcores(), d.nVcores());
  ASSERT_EQ(choice->node.links.size(), d.links.size());
  ASSERT_EQ(choice->node.nics.size(), d.nics.size());
  const int rpn = d.nVcores();
  graphbuild::GraphSettings settings;
  settings.new_algorithm = k.new_algorithm;
  const graphbuild::ClusterRequest req = cluster_request(*choice, k.nodes, rpn, settings);

  auto cluster = graphbuild::simulate_cluster(backends().list(), req);
  if (k.nodes > 1 && d.nics.empty()) {
    // A platform without NICs (Inf2) cannot leave the node: refused, named.
    ASSERT_FALSE(cluster.ok()) << "a multi-node " << spec.name << " cluster without NICs was built";
    EXPECT_NE(cluster.error().message.find("NIC"), std::string::npos) << cluster.error().message;
    return;
  }
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  const SimulatedCluster& c = *cluster;
  const auto& l = c.layout;
  ASSERT_EQ(l.n_ranks, k.nodes * rpn);
  ASSERT_GT(c.agreed_channels, 0);

  // Which ranks compute their rings: all of a small cluster, a fixed
  // sample of a large one (first, last and a middle rank of some nodes).
  std::vector<int> ranks;
  if (l.n_ranks <= 128) {
    for (int r = 0; r < l.n_ranks; ++r) ranks.push_back(r);
  } else {
    for (int n : {0, 1, k.nodes / 2, k.nodes - 1})
      for (int i : {0, rpn / 2, rpn - 1}) ranks.push_back(n * rpn + i);
  }
  auto first = graphbuild::simulate_rank(c, 0);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const auto rings = all_successors(*first, l.n_ranks);
  const int base = first->rings.baseChannels;
  ASSERT_EQ(base, c.agreed_channels);
  ASSERT_EQ(first->rings.nChannels, std::min(32, 2 * base));

  for (int ch = 0; ch < first->rings.nChannels; ++ch) {
    const std::vector<int>& ring = first->rings.channels[ch].userRanks;
    // Every rank exactly once.
    ASSERT_EQ(static_cast<int>(ring.size()), l.n_ranks) << "channel " << ch;
    std::vector<int> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (int r = 0; r < l.n_ranks; ++r) ASSERT_EQ(sorted[r], r) << "channel " << ch;
    const int gc = ch % base;  // the searched channel a doubled one copies
    for (size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      const int na = l.rank_node[a], nb = l.rank_node[b];
      const int da = l.rank_device[a], db = l.rank_device[b];
      if (na == nb) {
        // An intra-node hop stays on one device or uses a table link (the
        // first offending hop of a channel is reported).
        if (da != db && !d.linked(da, db)) {
          ADD_FAILURE() << spec.name << " channel " << ch << ": hop " << a << " -> " << b
                        << " uses devices " << da << " -> " << db
                        << ", which the platform does not link";
          break;
        }
        continue;
      }
      // An inter-node hop leaves from the end of node na's segment and
      // enters at the start of node nb's segment of the searched channel.
      const topo::TopoGraph& ga = c.nodes[na].graph;
      const topo::TopoGraph& gb = c.nodes[nb].graph;
      EXPECT_EQ(a, ga.channel(gc)[ga.nLocal - 1]) << "channel " << ch;
      EXPECT_EQ(b, gb.channel(gc)[0]) << "channel " << ch;
    }
  }

  // NICs: every inter entry of every node is one of its NICs, and the
  // channels spread over the NICs (use counts differ by at most one).
  if (k.nodes > 1) {
    for (int n = 0; n < k.nodes; ++n) {
      const topo::TopoGraph& g = c.nodes[n].graph;
      for (int side = 0; side < 2; ++side) {
        std::map<int, int> uses;
        for (const auto& nic : d.nics) uses[nic.id] = 0;
        for (int ch = 0; ch < c.agreed_channels; ++ch) {
          const int nic = g.inter[ch][side];
          ASSERT_TRUE(uses.count(nic)) << "node " << n << " channel " << ch << " uses NIC " << nic
                                       << ", not one of the node's " << d.nics.size();
          ++uses[nic];
        }
        int lo = 1 << 30, hi = 0;
        for (const auto& [nic, u] : uses) lo = std::min(lo, u), hi = std::max(hi, u);
        EXPECT_LE(hi - lo, 1) << spec.name << " node " << n << (side ? " exit" : " entry")
                              << " NICs used unevenly over " << c.agreed_channels << " channels";
      }
    }
  }

  // Every rank computes the same rings, and the NIC of each of its ring
  // channels (what the transports are handed): the channel's head on the node
  // enters through inter[c][0], every other rank leaves through inter[c][1] (as
  // ncclTopoGetNetDev picks), doubled channels copying the searched ones.
  for (int r : ranks) {
    auto s = r == 0 ? first : graphbuild::simulate_rank(c, r);
    ASSERT_TRUE(s.ok()) << "rank " << r << ": " << s.error().message;
    if (r != 0) {
      ASSERT_EQ(all_successors(*s, l.n_ranks), rings) << "rank " << r << " computed other rings";
    }
    ASSERT_EQ(static_cast<int>(s->channelNic.size()), s->rings.nChannels) << "rank " << r;
    if (k.nodes == 1) continue;
    const topo::TopoGraph& g = c.nodes[l.rank_node[r]].graph;
    for (int ch = 0; ch < s->rings.nChannels; ++ch) {
      const int gc = ch % base;
      const int want = g.inter[gc][g.channel(gc)[0] == r ? 0 : 1];
      ASSERT_EQ(s->channelNic[ch], want) << "rank " << r << " channel " << ch;
    }
  }

  // Deterministic: a second run gives the same graphs and fragments.
  auto again = graphbuild::simulate_cluster(backends().list(), req);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->fragments, c.fragments);
  EXPECT_EQ(again->node_order, c.node_order);
  for (int n = 0; n < k.nodes; ++n) {
    EXPECT_EQ(again->nodes[n].system_xml, c.nodes[n].system_xml);
    EXPECT_EQ(again->nodes[n].graph.intra, c.nodes[n].graph.intra);
    EXPECT_EQ(again->nodes[n].graph.inter, c.nodes[n].graph.inter);
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, ToolsTopoMatrix, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace nccom::topotool
