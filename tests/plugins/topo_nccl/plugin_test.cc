// TopoNcclPlugin: libnccom-topo_nccl.so loaded for real (plugin::load_plugin
// + graphbuild::TopoBackend::bind) with a host API whose config_get answers
// from a test table, and the host-detection XML writer.
#include "build_paths.h"
#include "child_process.h"
#include "detect_fixture.h"
#include "fake_sysfs.h"
#include "graphbuild/topo_backend.h"
#include "host_xml.h"
#include "machine.h"
#include "plugin/plugin_loader.h"
#include "search_test_util.h"

#include <nccom/topo/graph_xml.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

namespace topo_nccl_test {
namespace {

using nccom::graphbuild::TopoBackend;
using nccom::topo::NodeType;

std::map<std::string, std::string> g_config;
std::vector<std::string> g_log;

const char* configGet(void* ctx, const char* key) {
  auto* table = static_cast<std::map<std::string, std::string>*>(ctx);
  auto it = table->find(key);
  return it == table->end() ? nullptr : it->second.c_str();
}

void hostLog(nccom_log_level_t level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  g_log.push_back(std::string(level == NCCOM_LOG_LEVEL_WARN ? "WARN " : "INFO ") + buf);
}

bool logged(const std::string& prefix) {
  return std::any_of(g_log.begin(), g_log.end(),
                     [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

// The plugin with `config` as its section, and its bound backend.
struct Loaded {
  std::unique_ptr<nccom::plugin::LoadedPlugin> plugin;
  std::unique_ptr<TopoBackend> backend;
};

Loaded load(std::map<std::string, std::string> config) {
  g_config = std::move(config);
  g_log.clear();
  nccom_host_api_t host{};
  host.struct_size = sizeof host;
  host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  host.log = &hostLog;
  host.config_get = &configGet;
  host.host_ctx = &g_config;
  Loaded out;
  auto p =
      nccom::plugin::load_plugin(std::string(NCCOM_BUILD_DIR) + "/lib/nccom/libnccom-topo_nccl.so",
                                 NCCOM_PLUGIN_KIND_TOPOLOGY, host, {});
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  if (!p.ok()) return out;
  out.plugin = std::move(*p);
  auto b = TopoBackend::bind(*out.plugin);
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
  if (b.ok()) out.backend = std::make_unique<TopoBackend>(*b);
  return out;
}

nccom_topo_machine_t machine() {
  nccom_topo_machine_t m{};
  m.struct_size = sizeof m;
  std::strncpy(m.arch_name, "x86_64", sizeof m.arch_name - 1);
  return m;
}

// A node description whose arrays live as long as the object.
struct Node {
  std::vector<int32_t> ranks, devices, cores;
  nccom_topo_node_t node{};
  Node(std::vector<int32_t> r, int nNodes, int nRanks, std::vector<int32_t> d = {})
      : ranks(std::move(r)), devices(std::move(d)) {
    if (devices.empty()) devices.assign(ranks.size(), 0);
    cores.assign(ranks.size(), 0);
    node.struct_size = sizeof node;
    node.n_ranks = nRanks;
    node.n_nodes = nNodes;
    node.n_local = static_cast<int32_t>(ranks.size());
    node.local_ranks = ranks.data();
    node.local_devices = devices.data();
    node.local_cores = cores.data();
  }
};

nccom_topo_graph_request_t ring() {
  nccom_topo_graph_request_t r{};
  r.struct_size = sizeof r;
  r.pattern = 4;
  r.cross_nic = 2;
  r.min_channels = 1;
  r.max_channels = 16;
  r.new_algorithm = -1;
  return r;
}

std::string writeFile(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(TopoNcclPlugin, DescriptorSaysTopologyNccl) {
  auto l = load({});
  ASSERT_NE(l.plugin, nullptr);
  EXPECT_EQ(l.plugin->name(), "nccl");
  EXPECT_EQ(l.plugin->kind(), NCCOM_PLUGIN_KIND_TOPOLOGY);
  EXPECT_EQ(l.plugin->capabilities(), NCCOM_CAP_TOPO_SYSTEM | NCCOM_CAP_TOPO_GRAPH);
}

TEST(TopoNcclPlugin, ExportsOnlyTheDescriptor) {
  if (std::string why = nccom_test::machine::program("nm"); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kProgram) << why << " (binutils)";
  const std::string so = std::string(NCCOM_BUILD_DIR) + "/lib/nccom/libnccom-topo_nccl.so";
  ASSERT_TRUE(std::filesystem::exists(so)) << so << " was not built";
  FILE* nm = ::popen(("nm -D --defined-only '" + so + "' 2>&1").c_str(), "r");
  ASSERT_NE(nm, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, nm) != nullptr) out += buf;
  ASSERT_EQ(::pclose(nm), 0) << "nm -D " << so << ":\n" << out;
  // One line: "<address> D nccom_plugin".
  ASSERT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find(" D nccom_plugin\n"), std::string::npos) << out;
}

TEST(TopoNcclPlugin, TopologyFileEndToEnd) {
  const std::string file = dataFile("pcie_host.xml");
  auto l = load({{"topology.file", file}});
  ASSERT_NE(l.backend, nullptr);
  std::string why;
  EXPECT_TRUE(l.backend->probe(machine(), &why)) << why;
  Node node({8, 9, 10, 11, 12, 13, 14, 15}, 2, 16);
  auto sys = l.backend->system_xml(machine(), node.node);
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  EXPECT_EQ(*sys, readData("pcie_host.xml"));  // the operator's file, as written
  auto graph = l.backend->graph_xml(machine(), node.node, *sys, ring());
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  ASSERT_TRUE(graph->has_value());
  // Read back the way the host does, against the same system.
  const auto system = searchSystem("pcie_host.xml", share({8, 9, 10, 11, 12, 13, 14, 15}, 2, 16));
  auto doc = nccom::topo::parseXml(**graph);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  nccom::topo::TopoGraph g;
  g.crossNic = 2;
  auto n = nccom::topo::graphFromXml(*doc, system, g);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 2);
  expectValidRings(system, g);
  EXPECT_EQ(g.speedIntra, 9.0F);
  EXPECT_TRUE(
      logged("INFO Pattern 4, crossNic 1, nChannels 2, speed 9.000000/9.000000, type SYS/SYS, "
             "sameChannels "));
  EXPECT_TRUE(logged("INFO topo_nccl: topology from " + file));
}

// One file for every node of a homogeneous cluster: pcie_host.xml names
// ranks 8-15; node 0 of the same cluster (ranks 0-7) gets the file's gpus in
// dev order as its ranks, node 1 the file as written.
TEST(TopoNcclPlugin, ATopologyFileServesEveryNodeOfAHomogeneousCluster) {
  auto l = load({{"topology.file", dataFile("pcie_host.xml")}});
  ASSERT_NE(l.backend, nullptr);
  Node first({0, 1, 2, 3, 4, 5, 6, 7}, 2, 16);
  auto sys = l.backend->system_xml(machine(), first.node);
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  auto doc = nccom::topo::parseXml(*sys);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  auto system = nccom::topo::buildSystem(*doc);
  ASSERT_TRUE(system.ok()) << system.error().message;
  for (int dev = 0; dev < 8; ++dev) {
    const int g = system->gpuIndexOfDev(dev);
    ASSERT_GE(g, 0) << "dev " << dev;
    EXPECT_EQ(system->of(nccom::topo::NodeType::GPU)[static_cast<size_t>(g)].gpu.rank, dev);
  }
  auto graph = l.backend->graph_xml(machine(), first.node, *sys, ring());
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  ASSERT_TRUE(graph->has_value());
  // A node whose rank count differs from the file's gpus is still refused.
  Node three({0, 1, 2}, 2, 16);
  EXPECT_FALSE(l.backend->system_xml(machine(), three.node).ok());
}

TEST(TopoNcclPlugin, MalformedTopologyFilesNameFileLineColumnAndRule) {
  nccom_test::TempDir dir;
  struct Case {
    const char* name;
    const char* text;
    const char* expected;  // after "<path>"
  };
  const Case cases[] = {
      {"unquoted.xml", "<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=0000/>\n",
       ":3:16: XML error: "},
      {"graphs.xml", "<graphs version=\"1\"/>\n",
       ":1:1: root element is <graphs>, a topology must be a <system> document"},
      {"norank.xml",
       "<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:01:00.0\">\n      <gpu "
       "dev=\"0\"/>\n"
       "    </pci>\n  </cpu>\n</system>\n",
       ":4:7: gpu without rank (every NeuronCore must name its rank)"},
      {"missing.xml",
       "<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:01:00.0\">\n      <gpu "
       "dev=\"0\" rank=\"0\"/>\n"
       "    </pci>\n  </cpu>\n</system>\n",
       ":1:1: <system> has no <gpu rank> for local rank 1; every local rank of this node (0, 1) "
       "must appear as a "
       "gpu rank"},
  };
  Node node({0, 1}, 1, 2);
  for (const Case& c : cases) {
    const std::string path = writeFile(dir.path(), c.name, c.text);
    auto l = load({{"topology.file", path}});
    ASSERT_NE(l.backend, nullptr);
    auto sys = l.backend->system_xml(machine(), node.node);
    ASSERT_FALSE(sys.ok()) << c.name;
    EXPECT_NE(sys.error().message.find(path + c.expected), std::string::npos)
        << sys.error().message;
  }
  ASSERT_EQ(::mkfifo((dir.path() + "/fifo.xml").c_str(), 0600), 0);
  for (const auto& [name, rule] :
       {std::pair<std::string, std::string>{"fifo.xml", "it is a FIFO, not a regular file"},
        {"absent.xml", "No such file or directory"}}) {
    auto l = load({{"topology.file", dir.path() + "/" + name}});
    auto sys = l.backend->system_xml(machine(), node.node);
    ASSERT_FALSE(sys.ok());
    EXPECT_NE(sys.error().message.find("cannot read topology file '" + dir.path() + "/" + name +
                                       "': " + rule),
              std::string::npos)
        << sys.error().message;
  }
}

TEST(TopoNcclPlugin, HostWithoutNeuronDevicesSaysHowToProceed) {
  nccom_test::TempDir dir;
  FakeSysfs sysfs(dir.path() + "/sys");
  sysfs.addNumaNode(0, "0-3", "0000000f");
  const std::string cpuinfo = sysfs.writeCpuinfo("GenuineIntel", "6", "143");
  auto l = load({{"sysfs_root", sysfs.root()}, {"cpuinfo_path", cpuinfo}});
  ASSERT_NE(l.backend, nullptr);
  std::string why;
  EXPECT_FALSE(l.backend->probe(machine(), &why));
  EXPECT_NE(
      why.find(
          "no topology file configured (NCCL_TOPO_FILE / topology.file) and no Neuron devices"),
      std::string::npos)
      << why;
  Node node({0, 1}, 1, 2);
  auto sys = l.backend->system_xml(machine(), node.node);
  ASSERT_FALSE(sys.ok());
  const std::string& msg = sys.error().message;
  EXPECT_NE(msg.find("no accelerator for local ranks 0, 1 was found on this host"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Set NCCL_TOPO_FILE (or topology.file)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("or run on a Neuron platform"), std::string::npos) << msg;
}

TEST(TopoNcclPlugin, DetectedNeuronHostEndToEnd) {
  nccom_test::TempDir dir;
  FakeSysfs sysfs(dir.path() + "/sys");
  const std::string cpuinfo = buildStandardHost(sysfs);
  auto l = load({{"sysfs_root", sysfs.root()}, {"cpuinfo_path", cpuinfo}});
  ASSERT_NE(l.backend, nullptr);
  std::string why;
  EXPECT_TRUE(l.backend->probe(machine(), &why)) << why;
  Node node({4, 5}, 1, 2 + 4, {0, 1});
  auto sys = l.backend->system_xml(machine(), node.node);
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  auto built = nccom::topo_nccl::checkSystemXml(*sys, "detected", share({4, 5}, 1, 6));
  ASSERT_TRUE(built.ok()) << built.error().message;
  EXPECT_EQ(built->of(NodeType::GPU)[0].id, *nccom::topo::busIdToInt64("0000:03:00.0"));
  auto graph = l.backend->graph_xml(machine(), node.node, *sys, ring());
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  ASSERT_TRUE(graph->has_value());
  EXPECT_NE((*graph)->find("<gpu dev=\"0\"/>"), std::string::npos) << **graph;
}

TEST(TopoNcclPlugin, RequestsItDoesNotSearchAreLeftToOtherBackends) {
  auto l = load({{"topology.file", dataFile("two_gpus_switch.xml")}});
  ASSERT_NE(l.backend, nullptr);
  Node node({6, 7}, 1, 8);
  auto sys = l.backend->system_xml(machine(), node.node);
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  auto tree = ring();
  tree.pattern = 3;
  auto g = l.backend->graph_xml(machine(), node.node, *sys, tree);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->has_value());
  auto newer = ring();
  newer.new_algorithm = 1;
  g = l.backend->graph_xml(machine(), node.node, *sys, newer);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->has_value());
}

TEST(TopoNcclPlugin, BadNodeShareIsAnInvalidArgument) {
  auto l = load({{"topology.file", dataFile("two_gpus_switch.xml")}});
  ASSERT_NE(l.backend, nullptr);
  Node dup({6, 6}, 1, 8);
  auto sys = l.backend->system_xml(machine(), dup.node);
  ASSERT_FALSE(sys.ok());
  EXPECT_NE(sys.error().message.find(
                "returned INVALID_ARGUMENT: topo_nccl: node share: local rank 6 listed twice"),
            std::string::npos)
      << sys.error().message;
  Node outside({6, 9}, 1, 8);
  sys = l.backend->system_xml(machine(), outside.node);
  ASSERT_FALSE(sys.ok());
  EXPECT_NE(sys.error().message.find("local rank 9 outside 0..7"), std::string::npos)
      << sys.error().message;
}

TEST(TopoNcclPlugin, HostXmlPlacesCoresAndNics) {
  using namespace nccom::topo_nccl;
  LocalShare s = share({0, 1, 2}, 2, 6);
  s.devices = {0, 0, 1};  // two cores of device 0000:03:00.0, one of 0000:04:00.0
  s.cores = {0, 1, 0};
  auto doc = hostToXml(expectedStandardHost(), s);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const std::string text = nccom::topo::writeXml(*doc->root);
  auto sys = checkSystemXml(text, "host", s);
  ASSERT_TRUE(sys.ok()) << sys.error().message << "\n" << text;
  ASSERT_EQ(sys->count(NodeType::GPU), 3);
  EXPECT_EQ(sys->of(NodeType::GPU)[static_cast<std::size_t>(sys->gpuIndexOfRank(0))].id,
            *nccom::topo::busIdToInt64(coreBusId("0000:03:00.0", 0)));
  EXPECT_EQ(coreBusId("0000:03:00.0", 1), "20000:03:00.0");
  EXPECT_EQ(sys->of(NodeType::GPU)[0].gpu.sm, 2);  // trn1
  // The EFA port: one NET, 100 Gb/s, GPU Direct (an Amazon NIC), in its PCI slot.
  ASSERT_EQ(sys->count(NodeType::NET), 1);
  const auto& net = sys->of(NodeType::NET)[0].net;
  EXPECT_EQ(net.width, 12.5F);
  EXPECT_EQ(net.gdr, 1);
  EXPECT_EQ(net.guid, 0x0123456789abcdefull);
  EXPECT_NE(text.find("<pci busid=\"0000:81:00.0\" class=\"0x020000\""), std::string::npos) << text;
  // The two cores of one device meet at the device: a PIX path.
  ASSERT_TRUE(nccom::topo::computePaths(*sys).ok());
  const int a = sys->gpuIndexOfRank(0), b = sys->gpuIndexOfRank(1);
  EXPECT_EQ(sys->of(NodeType::GPU)[static_cast<std::size_t>(a)]
                .paths[0][static_cast<std::size_t>(b)]
                .type,
            nccom::topo::PathType::PIX);
}

TEST(TopoNcclPlugin, HostXmlWithoutNeuronDevicesHasNoGpu) {
  using namespace nccom::topo_nccl;
  HostDescription host = expectedStandardHost();
  host.neuronDevices.clear();
  LocalShare s = share({0}, 1, 1);
  s.devices = {0};
  auto doc = hostToXml(host, s);
  ASSERT_TRUE(doc.ok());
  auto sys = checkSystemXml(nccom::topo::writeXml(*doc->root), "host", s);
  ASSERT_FALSE(sys.ok());
  EXPECT_NE(sys.error().message.find("host:1:1: <system> has no <gpu rank> for local rank 0"),
            std::string::npos)
      << sys.error().message;
}

}  // namespace
}  // namespace topo_nccl_test
