// NeuronPlugin: libnccom-topo_neuron.so loaded for real (plugin::load_plugin
// + graphbuild::TopoBackend::bind) and driven end to end: probe ->
// get_system_xml -> compute_graph. The graph XML must load with
// topo::graphFromXml against the system, every channel row must be a
// permutation of the node's ranks, and every hop between consecutive ranks
// (closing hop included) must stay on one device or follow a platform link.
#include "build_paths.h"
#include "graphbuild/topo_backend.h"
#include "plugin/plugin_loader.h"
#include "topo_neuron/catalogue.h"
#include "topo_neuron/graph_compute.h"
#include "topo_neuron/machine.h"

#include <nccom/topo/graph_xml.h>
#include <nccom/topo/xml.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace nccom::topo_neuron {
namespace {

// The plugin's [topology] section as the host would answer it.
std::map<std::string, std::string>& config() {
  static std::map<std::string, std::string> c;
  return c;
}

const char* configGet(void*, const char* key) {
  auto it = config().find(key);
  return it == config().end() ? nullptr : it->second.c_str();
}

nccom_host_api_t hostApi() {
  nccom_host_api_t h{};
  h.struct_size = sizeof h;
  h.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  h.config_get = &configGet;
  return h;
}

class NeuronPlugin : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto p = plugin::load_plugin("topo_neuron", NCCOM_PLUGIN_KIND_TOPOLOGY, hostApi(),
                                 {std::string(NCCOM_BUILD_DIR) + "/lib/nccom"});
    ASSERT_TRUE(p.ok()) << p.error().message;
    plugin_ = std::move(*p).release();
    auto b = graphbuild::TopoBackend::bind(*plugin_);
    ASSERT_TRUE(b.ok()) << b.error().message;
    backend_ = new graphbuild::TopoBackend(*b);
  }
  static void TearDownTestSuite() {
    delete backend_;
    delete plugin_;
  }
  void SetUp() override {
    config().clear();
    ASSERT_NE(backend_, nullptr);
  }

  static plugin::LoadedPlugin* plugin_;
  static graphbuild::TopoBackend* backend_;
};
plugin::LoadedPlugin* NeuronPlugin::plugin_ = nullptr;
graphbuild::TopoBackend* NeuronPlugin::backend_ = nullptr;

nccom_topo_machine_t machineFor(Variant v, int devices, int lnc) {
  nccom_topo_machine_t m{};
  m.struct_size = sizeof m;
  const PlatformSpec& s = platformSpec(v);
  if (v == Variant::Emu) {
    std::strcpy(m.arch_name, "emu");
  } else {
    std::strcpy(m.arch_name, "x86_64");
    m.instance_family = static_cast<uint32_t>(s.families.front());
  }
  m.device_count = devices;
  m.vcore_size = lnc;
  m.pod_type = v == Variant::Trn3SwitchV1 ? kPodTypeSwitch : kPodTypeNone;
  m.pod_size = s.podNodes > 0 ? s.podNodes : 1;
  return m;
}

// Owns the arrays a nccom_topo_node_t points at.
struct Node {
  NodeShare share;
  nccom_topo_node_t c{};
  explicit Node(NodeShare s) : share(std::move(s)) {
    c.struct_size = sizeof c;
    c.n_ranks = share.nRanks;
    c.n_nodes = share.nNodes;
    c.node = share.node;
    c.n_local = static_cast<int32_t>(share.ranks.size());
    c.local_ranks = share.ranks.data();
    c.local_devices = share.devices.data();
    c.local_cores = share.cores.data();
  }
};

nccom_topo_graph_request_t ringRequest(int newAlgorithm) {
  nccom_topo_graph_request_t r{};
  r.struct_size = sizeof r;
  r.pattern = 4;
  r.cross_nic = 2;
  r.min_channels = 1;
  r.max_channels = 16;
  r.new_algorithm = newAlgorithm;
  return r;
}

std::vector<int> splitDevs(const std::string& s) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    out.push_back(std::stoi(s.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  return out;
}

// One end-to-end case; ASSERTs end this case only.
void runCase(const graphbuild::TopoBackend& b, Variant v, int inst, int lnc, int local,
             int nNodes) {
  auto d = describePlatform(v, {inst, lnc, -1});
  ASSERT_TRUE(d) << d.error().message;
  // Without a NIC a node cannot join a multi-node ring (NeuronSynthesize
  // covers that error): such platforms run as one node.
  if (d->nics.empty()) nNodes = 1;
  const int perNode = local * d->vcoresPerDevice;
  const int me = nNodes - 1;  // the last node: global ranks do not start at 0
  Node node(fullShare(*d, local, me * perNode, nNodes * perNode, nNodes, me));
  const auto m = machineFor(v, inst, lnc);
  std::string why;
  ASSERT_TRUE(b.probe(m, &why)) << why;
  auto sysXml = b.system_xml(m, node.c);
  ASSERT_TRUE(sysXml.ok()) << sysXml.error().message;
  auto graphXml = b.graph_xml(m, node.c, *sysXml, ringRequest(1));
  ASSERT_TRUE(graphXml.ok()) << graphXml.error().message;
  ASSERT_TRUE(graphXml->has_value());

  auto sysDoc = topo::parseXml(*sysXml);
  ASSERT_TRUE(sysDoc) << sysDoc.error().message;
  auto sys = topo::buildSystem(*sysDoc, systemOptions(*d));
  ASSERT_TRUE(sys) << sys.error().message;
  auto gDoc = topo::parseXml(**graphXml);
  ASSERT_TRUE(gDoc) << gDoc.error().message;
  topo::TopoGraph g;
  auto loaded = topo::graphFromXml(*gDoc, *sys, g);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_GE(*loaded, 1);
  ASSERT_EQ(g.nLocal, perNode);

  std::map<int, int> deviceOfRank;
  for (size_t i = 0; i < node.share.ranks.size(); ++i)
    deviceOfRank[node.share.ranks[i]] = node.share.devices[i];
  const std::set<int> ranks(node.share.ranks.begin(), node.share.ranks.end());
  for (int c = 0; c < g.nChannels; ++c) {
    const std::vector<int> row(g.channel(c), g.channel(c) + g.nLocal);
    ASSERT_EQ(std::set<int>(row.begin(), row.end()), ranks) << "channel " << c;
    for (int i = 0; i < g.nLocal; ++i) {
      const int a = deviceOfRank.at(row[static_cast<size_t>(i)]);
      const int bDev = deviceOfRank.at(row[static_cast<size_t>((i + 1) % g.nLocal)]);
      ASSERT_TRUE(a == bDev || d->linked(a, bDev))
          << "channel " << c << " hop " << a << "->" << bDev;
    }
    const int nNics = sys->count(topo::NodeType::NET);
    if (nNics > 0) {
      EXPECT_GE(g.inter[static_cast<size_t>(c)][0], 0);
      EXPECT_TRUE(sys->find(topo::NodeType::NET, g.inter[static_cast<size_t>(c)][0]) >= 0);
    }
  }

  const topo::XmlNode& graphEl = *gDoc->root->children().front();
  if (v == Variant::Trn3SwitchV1) {
    ASSERT_TRUE(graphEl.hasAttribute("nkangaring"));
    const int lanes = static_cast<int>(*graphEl.getInt("nkangaring"));
    EXPECT_EQ(lanes, std::min(kSwitchV1KangaLanes, perNode));
    EXPECT_EQ(*graphEl.getInt("crossracktorack"), nNodes > kSwitchV1NodesPerJbog ? 1 : 0);
    std::set<int> devs;
    for (const auto& gpu : sys->of(topo::NodeType::GPU)) devs.insert(gpu.gpu.dev);
    std::vector<int> first;
    for (int k = 0; k < lanes; ++k) {
      auto text = graphEl.getString("kangaring" + std::to_string(k));
      ASSERT_TRUE(text) << text.error().message;
      auto lane = splitDevs(*text);
      ASSERT_EQ(std::set<int>(lane.begin(), lane.end()), devs) << "lane " << k;
      ASSERT_EQ(lane.size(), devs.size());
      if (k == 0) first = lane;
      // Each lane is the first one rotated: same cyclic successor of every entry.
      const auto at = std::find(first.begin(), first.end(), lane.front()) - first.begin();
      std::vector<int> rotated(first.begin() + at, first.end());
      rotated.insert(rotated.end(), first.begin(), first.begin() + at);
      EXPECT_EQ(lane, rotated) << "lane " << k;
    }
  } else {
    EXPECT_FALSE(graphEl.hasAttribute("nkangaring"));
  }
}

TEST_F(NeuronPlugin, DescriptorIsTheNeuronTopologyPlugin) {
  EXPECT_EQ(plugin_->name(), "neuron");
  EXPECT_EQ(plugin_->kind(), NCCOM_PLUGIN_KIND_TOPOLOGY);
}

TEST_F(NeuronPlugin, EndToEndMatrix) {
  int cases = 0;
  for (const auto& s : platformTable()) {
    for (int inst : s.instanceDevices) {
      for (int lnc : s.lncModes) {
        for (int local : s.localDeviceCounts) {
          if (local > inst) continue;
          // A part of a ring of devices has no ring (NeuronSearch covers that error).
          if (s.layout == LinkLayout::Ring && local != 1 && local != inst) continue;
          SCOPED_TRACE(std::string(s.name) + " instance=" + std::to_string(inst) +
                       " lnc=" + std::to_string(lnc) + " local=" + std::to_string(local));
          runCase(*backend_, s.variant, inst, lnc, local, 2);
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 40);
}

TEST_F(NeuronPlugin, SwitchV1AcrossJbogsIsCrossRack) {
  runCase(*backend_, Variant::Trn3SwitchV1, 16, 2, 16, 4);
  runCase(*backend_, Variant::Trn3SwitchV1, 16, 2, 4, 3);
}

class Fixture {
 public:
  Fixture(Variant v, int inst, int lnc, int local)
      : d(*describePlatform(v, {inst, lnc, -1})),
        node(fullShare(d, local)),
        m(machineFor(v, inst, lnc)) {}
  PlatformDescription d;
  Node node;
  nccom_topo_machine_t m;
};

TEST_F(NeuronPlugin, OldSearchIsUnsupportedSoTheHostAsksTheNextBackend) {
  Fixture f(Variant::Trn2, 16, 2, 4);
  auto sys = backend_->system_xml(f.m, f.node.c);
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  for (int knob : {-1, 0}) {
    auto g = backend_->graph_xml(f.m, f.node.c, *sys, ringRequest(knob));
    ASSERT_TRUE(g.ok()) << g.error().message;
    EXPECT_FALSE(g->has_value()) << "knob " << knob;
  }
  auto on = backend_->graph_xml(f.m, f.node.c, *sys, ringRequest(1));
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_TRUE(on->has_value());
  // The configured default turns NEW on when the knob is unset.
  config()["default_new_algorithm"] = "true";
  auto byDefault = backend_->graph_xml(f.m, f.node.c, *sys, ringRequest(-1));
  ASSERT_TRUE(byDefault.ok()) << byDefault.error().message;
  EXPECT_TRUE(byDefault->has_value());
}

TEST_F(NeuronPlugin, SwitchV1AlwaysSearchesNew) {
  Fixture f(Variant::Trn3SwitchV1, 16, 2, 16);
  auto sys = backend_->system_xml(f.m, f.node.c);
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  auto g = backend_->graph_xml(f.m, f.node.c, *sys, ringRequest(0));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_TRUE(g->has_value());
}

TEST_F(NeuronPlugin, ForbiddenDeviceCountFailsInGetSystemXml) {
  auto d = describePlatform(Variant::Trn2, {16, 2, -1});
  ASSERT_TRUE(d);
  NodeShare s = fullShare(*d, 3);  // 3 devices: not 1, 4, 8 or 16
  Node node(s);
  const auto m = machineFor(Variant::Trn2, 16, 2);
  auto r = backend_->system_xml(m, node.c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("expects 1, 4, 8, or 16 local devices but got 3"),
            std::string::npos)
      << r.error().message;
  config()["disable_verify"] = "true";
  EXPECT_TRUE(backend_->system_xml(m, node.c).ok());
  config()["disable_verify"] = "maybe";
  auto bad = backend_->system_xml(m, node.c);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("plugins.neuron.disable_verify = 'maybe'"), std::string::npos)
      << bad.error().message;
}

TEST_F(NeuronPlugin, MoreRanksThanCoresFailsInGetSystemXml) {
  NodeShare s;
  s.ranks = {0, 1, 2};
  s.devices = {0, 0, 0};
  s.cores = {0, 1, 0};
  s.nRanks = 3;
  Node node(s);
  auto r = backend_->system_xml(machineFor(Variant::Trn1, 1, 1), node.c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("3 local ranks but only 2 NeuronCores"), std::string::npos)
      << r.error().message;
}

TEST_F(NeuronPlugin, UnknownFamilyIsUnsupportedWithAReason) {
  auto m = machineFor(Variant::Trn2, 16, 2);
  m.instance_family = 1;  // INF1: not served
  std::string why;
  EXPECT_FALSE(backend_->probe(m, &why));
  EXPECT_NE(why.find("unknown platform: instance family 1"), std::string::npos) << why;
  auto d = describePlatform(Variant::Trn2, {16, 2, -1});
  Node node(fullShare(*d, 4));
  auto r = backend_->system_xml(m, node.c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown platform"), std::string::npos) << r.error().message;
}

TEST_F(NeuronPlugin, ProbeChecksTheMachine) {
  std::string why;
  EXPECT_TRUE(backend_->probe(machineFor(Variant::Emu, 8, 1), &why)) << why;
  EXPECT_TRUE(backend_->probe(machineFor(Variant::Emu, 3, 1), &why)) << why;
  EXPECT_FALSE(backend_->probe(machineFor(Variant::Emu, 5, 1), &why));
  EXPECT_NE(why.find("no instance with 5 devices"), std::string::npos) << why;
  EXPECT_FALSE(backend_->probe(machineFor(Variant::Trn2, 16, 4), &why));
  EXPECT_NE(why.find("logical-core size 4"), std::string::npos) << why;
  auto sw = machineFor(Variant::Trn3SwitchV1, 16, 1);  // Switch-V1 is LNC 2 only
  EXPECT_FALSE(backend_->probe(sw, &why));
}

TEST_F(NeuronPlugin, OrderNodesFollowsTheUltraServerPodRing) {
  const auto us = machineFor(Variant::Trn2UltraServer, 16, 2);
  // Pod node id = pod * 4 + position; positions i and i+-1 mod 4 are neighbours.
  auto one = backend_->order_nodes(us, {0, 2, 1, 3});
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(*one, (std::vector<int>{0, 2, 1, 3}));  // positions 0, 1, 2, 3
  auto two = backend_->order_nodes(us, {4, 0, 5, 1});
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(*two, (std::vector<int>{1, 3, 0, 2}));  // pod 0 first, then pod 1
  auto clash = backend_->order_nodes(us, {1, 1});
  ASSERT_FALSE(clash.ok());
  // No pods on a plain trn2: the host keeps index order.
  auto plain = backend_->order_nodes(machineFor(Variant::Trn2, 16, 2), {3, 2, 1, 0});
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(*plain, (std::vector<int>{0, 1, 2, 3}));
}

TEST_F(NeuronPlugin, SystemXmlThatDoesNotMatchTheNodeIsAnError) {
  Fixture f(Variant::Trn2, 16, 2, 4);
  Fixture other(Variant::Trn2, 16, 2, 8);
  auto sys = backend_->system_xml(other.m, other.node.c);
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  auto g = backend_->graph_xml(f.m, f.node.c, *sys, ringRequest(1));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("32 NeuronCores (<gpu>) but the node has 16 local ranks"),
            std::string::npos)
      << g.error().message;
  auto junk = backend_->graph_xml(f.m, f.node.c, "<system", ringRequest(1));
  ASSERT_FALSE(junk.ok());
}

// list_platforms names every row of the table, in order, with the machine a
// runtime reports for it; that machine is one probe accepts, and
// describe_node models it exactly as the table does, for every instance
// size and logical-core size the row lists.
TEST_F(NeuronPlugin, ListsEveryPlatformWithAMachineItDescribes) {
  auto listed = backend_->platforms_xml();
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_TRUE(listed->has_value());
  auto doc = topo::parseXml(**listed, "list_platforms");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const auto rows = doc->root->childrenNamed("platform");
  ASSERT_EQ(rows.size(), platformTable().size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const PlatformSpec& spec = platformTable()[i];
    EXPECT_EQ(*rows[i]->attribute("name"), spec.name);
    EXPECT_EQ(*rows[i]->attribute("codename"), spec.codename);
    for (int devices : spec.instanceDevices) {
      for (int lnc : spec.lncModes) {
        const nccom_topo_machine_t m = machineOf(spec.variant, devices, lnc);
        auto variant = machineVariant(m);
        ASSERT_TRUE(variant.ok()) << variant.error().message;
        EXPECT_EQ(*variant, spec.variant) << spec.name;
        const std::string where = std::string(spec.name) + " " + std::to_string(devices) +
                                  " devices, LNC " + std::to_string(lnc);
        auto node = backend_->node_xml(m);
        auto table = describePlatform(spec.variant, {devices, lnc, -1});
        if (!table.ok()) {  // a size the search cannot take (over 128 logical cores)
          EXPECT_FALSE(node.ok()) << where;
          continue;
        }
        ASSERT_TRUE(node.ok()) << where << ": " << node.error().message;
        ASSERT_TRUE(node->has_value()) << where;
        auto parsed = topo::parseXml(**node, "describe_node");
        ASSERT_TRUE(parsed.ok()) << parsed.error().message;
        const topo::XmlNode& root = *parsed->root;
        EXPECT_EQ(*root.getInt("devices"), table->nDevices) << where;
        EXPECT_EQ(*root.getInt("vcores_per_device"), table->vcoresPerDevice) << where;
        EXPECT_EQ(root.childrenNamed("device").size(), table->devices.size()) << where;
        EXPECT_EQ(root.childrenNamed("nic").size(), table->nics.size()) << where;
        EXPECT_EQ(root.childrenNamed("link").size(), table->links.size()) << where;
      }
    }
  }
}

TEST_F(NeuronPlugin, DescribeNodeRefusesAMachineThePlatformLacks) {
  auto three = backend_->node_xml(machineOf(Variant::Trn2, 3, 2));
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.error().message.find("describe_node returned INVALID_ARGUMENT: topo_neuron: "
                                       "platform trn2 has no instance with 3 devices (it has 1, "
                                       "16)"),
            std::string::npos)
      << three.error().message;
  auto lnc = backend_->node_xml(machineOf(Variant::Trn1, 16, 2));
  ASSERT_FALSE(lnc.ok());
  EXPECT_NE(lnc.error().message.find("does not support logical-core size 2 (allowed: 1)"),
            std::string::npos)
      << lnc.error().message;
  nccom_topo_machine_t unknown = machineOf(Variant::Trn2, 16, 2);
  unknown.instance_family = 77;
  EXPECT_FALSE(backend_->node_xml(unknown).ok());
}

}  // namespace
}  // namespace nccom::topo_neuron
