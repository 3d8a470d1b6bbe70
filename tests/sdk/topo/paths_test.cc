// TopoPaths: BFS paths, P2P/GDR diversions, checkP2p, trimming, search
// widths. Every expected hop list, width and type below was worked out by
// hand from the fixture (tests/sdk/topo/data/pcie_host.xml):
//
//   CPU0 (Skylake, SYS 9 GB/s to CPU1)          CPU1
//    └ PCI 10 (gen4 x16: 24)                     └ PCI 90
//       ├ PCI 11 ─ GPU dev0 (rank 8), dev1 (9)      ├ PCI 91 ─ dev4 (12), dev5 (13)
//       ├ PCI 14 ─ dev2 (10), dev3 (11)             ├ PCI 94 ─ dev6 (14), dev7 (15)
//       └ NIC 17 (gen3 x16: 12) ─ NET 0 (12.5)      └ NIC 97 ─ NET 1
//
// GPU index == dev; PCI indices in creation order: 10, 11, 14, 90, 91, 94.
#include "topo_test_util.h"

namespace nccom::topo::test {
namespace {

NodeRef gpu(int i) { return {NodeType::GPU, i}; }
NodeRef pci(const TopoSystem& s, int64_t bus) {
  return {NodeType::PCI, s.find(NodeType::PCI, bus)};
}
NodeRef cpu(int i) { return {NodeType::CPU, i}; }
NodeRef nic(int i) { return {NodeType::NIC, i}; }
NodeRef net(int i) { return {NodeType::NET, i}; }

const TopoPath& pathOf(const TopoSystem& s, NodeRef from, NodeRef to) {
  return s.at(from).paths[static_cast<int>(to.type)][static_cast<std::size_t>(to.index)];
}

// Hand-built graphs: GPUs with the given ranks and no links yet.
TopoSystem gpusOnly(int n) {
  TopoSystem s;
  for (int i = 0; i < n; ++i) {
    auto r = addNode(s, NodeType::GPU, 0x1000 * (i + 1));
    EXPECT_TRUE(r.ok());
    s.at(*r).gpu = {i, i, 0, 0};
  }
  return s;
}

void link(TopoSystem& s, NodeRef a, NodeRef b, LinkType t, float w) {
  ASSERT_TRUE(connectNodes(s, a, b, t, w));
  ASSERT_TRUE(connectNodes(s, b, a, t, w));
}

TEST(TopoPaths, SelfIsLoc) {
  const TopoSystem s = pcieHost();
  const TopoPath& p = pathOf(s, gpu(3), gpu(3));
  EXPECT_EQ(p.type, PathType::LOC);
  EXPECT_EQ(p.count(), 0);
  EXPECT_FLOAT_EQ(p.width, kLocWidth);
}

TEST(TopoPaths, SameSwitchIsPix) {
  const TopoSystem s = pcieHost();
  const TopoPath& p = pathOf(s, gpu(0), gpu(1));
  EXPECT_EQ(p.type, PathType::PIX);
  EXPECT_EQ(p.hops, (std::vector<NodeRef>{pci(s, 0x11000), gpu(1)}));
  EXPECT_FLOAT_EQ(p.width, 24.0F);
}

TEST(TopoPaths, AcrossSwitchesIsPxb) {
  const TopoSystem s = pcieHost();
  const TopoPath& p = pathOf(s, gpu(0), gpu(2));
  EXPECT_EQ(p.type, PathType::PXB);
  EXPECT_EQ(p.hops,
            (std::vector<NodeRef>{pci(s, 0x11000), pci(s, 0x10000), pci(s, 0x14000), gpu(2)}));
  EXPECT_FLOAT_EQ(p.width, 24.0F);
}

TEST(TopoPaths, AcrossNumaNodesIsSys) {
  const TopoSystem s = pcieHost();
  const TopoPath& p = pathOf(s, gpu(0), gpu(4));
  EXPECT_EQ(p.type, PathType::SYS);
  EXPECT_EQ(p.hops, (std::vector<NodeRef>{pci(s, 0x11000), pci(s, 0x10000), cpu(0), cpu(1),
                                          pci(s, 0x90000), pci(s, 0x91000), gpu(4)}));
  EXPECT_FLOAT_EQ(p.width, 9.0F);
}

TEST(TopoPaths, GpuToCpuIsPhbAndNicIsReachedThroughTheSwitch) {
  const TopoSystem s = pcieHost();
  const TopoPath& toCpu = pathOf(s, gpu(5), cpu(1));
  EXPECT_EQ(toCpu.type, PathType::PHB);
  EXPECT_EQ(toCpu.count(), 3);
  const TopoPath& toNet = pathOf(s, gpu(0), net(0));
  EXPECT_EQ(toNet.type, PathType::PXB);
  EXPECT_EQ(toNet.hops, (std::vector<NodeRef>{pci(s, 0x11000), pci(s, 0x10000), nic(0), net(0)}));
  EXPECT_FLOAT_EQ(toNet.width, 12.0F);  // the NIC's gen3 x16 link
}

TEST(TopoPaths, PathTypesAreSymmetricOnThePcieHost) {
  const TopoSystem s = pcieHost();
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(pathOf(s, gpu(a), gpu(b)).type, pathOf(s, gpu(b), gpu(a)).type) << a << "," << b;
      EXPECT_EQ(pathOf(s, gpu(a), gpu(b)).count(), pathOf(s, gpu(b), gpu(a)).count())
          << a << "," << b;
    }
  }
}

TEST(TopoPaths, GdrOutOfReachDivertsNetTrafficThroughTheLocalCpu) {
  // Default GDR level PXB: GPU0 <-> NET0 (PXB) keeps its direct path, and
  // with the level lowered to PIX both directions go through CPU0.
  PathSettings settings;
  settings.gdrLevel = static_cast<int>(PathType::PIX);
  const TopoSystem s = pcieHost(settings);
  EXPECT_FALSE(checkGdr(s, 0, 0, settings));
  const TopoPath& there = pathOf(s, gpu(0), net(0));
  EXPECT_EQ(there.type, PathType::PHB);
  EXPECT_EQ(there.hops, (std::vector<NodeRef>{pci(s, 0x11000), pci(s, 0x10000), cpu(0),
                                              pci(s, 0x10000), nic(0), net(0)}));
  EXPECT_FLOAT_EQ(there.width, 12.0F);
  const TopoPath& back = pathOf(s, net(0), gpu(0));
  EXPECT_EQ(back.hops, (std::vector<NodeRef>{nic(0), pci(s, 0x10000), cpu(0), pci(s, 0x10000),
                                             pci(s, 0x11000), gpu(0)}));
  EXPECT_EQ(back.type, PathType::PHB);

  const TopoSystem plain = pcieHost();
  EXPECT_TRUE(checkGdr(plain, 0, 0, {}));
  EXPECT_FALSE(checkGdr(plain, 0, 1, {}));  // SYS > PXB
  EXPECT_EQ(pathOf(plain, gpu(0), net(0)).count(), 4);
}

TEST(TopoPaths, CheckP2pDefaultOnSkylakeStopsAtTheHostBridge) {
  const TopoSystem s = pcieHost();
  auto near = checkP2p(s, 8, 9, PathSettings{});
  ASSERT_TRUE(near.ok()) << near.error().message;
  EXPECT_TRUE(near->p2p);
  EXPECT_EQ(near->pathType, PathType::PIX);
  EXPECT_EQ(near->intermediateRank, -1);
  EXPECT_FALSE(near->read);
  EXPECT_TRUE(checkP2p(s, 8, 11, PathSettings{})->p2p);  // PXB
  // Across the sockets: SYS > PHB, so no P2P; computePaths already routed it
  // through the target's CPU, which for this tree is the same hop list.
  auto far = checkP2p(s, 8, 12, PathSettings{});
  ASSERT_TRUE(far.ok());
  EXPECT_FALSE(far->p2p);
  EXPECT_EQ(far->pathType, PathType::SYS);
}

TEST(TopoPaths, DefaultP2pLevelByCpu) {
  // AMD (and unknown CPUs): everything, ARM: up to PXB.
  TopoSystem s = gpusOnly(2);
  ASSERT_TRUE(addNode(s, NodeType::CPU, 0).ok());
  link(s, cpu(0), gpu(0), LinkType::PCI, 24.0F);
  ASSERT_TRUE(addNode(s, NodeType::CPU, 1).ok());
  link(s, cpu(1), gpu(1), LinkType::PCI, 24.0F);
  ASSERT_TRUE(connectCpus(s));
  s.of(NodeType::CPU)[0].cpu = {CpuArch::X86, CpuVendor::Amd, CpuModel::Unknown, ""};
  ASSERT_TRUE(computePaths(s));
  EXPECT_TRUE(checkP2p(s, 0, 1, PathSettings{})->p2p);
  s.of(NodeType::CPU)[0].cpu.arch = CpuArch::Arm;
  ASSERT_TRUE(computePaths(s));
  EXPECT_FALSE(checkP2p(s, 0, 1, PathSettings{})->p2p);
}

TEST(TopoPaths, CheckP2pHonoursTheLevelPassedIn) {
  const TopoSystem s = pcieHost();
  EXPECT_TRUE(checkP2p(s, 8, 12, std::string_view("SYS"), std::nullopt)->p2p);
  EXPECT_TRUE(checkP2p(s, 8, 10, std::string_view("PXB"), std::nullopt)->p2p);
  EXPECT_FALSE(checkP2p(s, 8, 12, std::string_view("PXB"), std::nullopt)->p2p);
  EXPECT_FALSE(checkP2p(s, 8, 9, std::string_view("LOC"), std::nullopt)->p2p);
  EXPECT_TRUE(
      checkP2p(s, 8, 9, std::string_view("1"), std::nullopt)->p2p);  // old numbering: 1 = PIX
  EXPECT_FALSE(checkP2p(s, 8, 9, std::nullopt, std::string_view("1"))->p2p);  // disabled
  EXPECT_TRUE(checkP2p(s, 8, 12, std::string_view("SYS"), std::string_view("0"))->p2p);
  EXPECT_EQ(errorOf(checkP2p(s, 8, 9, std::string_view("FAST"), std::nullopt)),
            "NCCL_P2P_LEVEL='FAST' is not a level (LOC, NVL, NVB, PIX, PXB, PHB, SYS or 0..4)");
}

TEST(TopoPaths, P2pDisabledDivertsGpuTrafficThroughTheCpu) {
  PathSettings settings;
  settings.p2pLevel = *resolveP2pLevel(std::string_view("1"), std::nullopt);
  ASSERT_EQ(settings.p2pLevel, static_cast<int>(PathType::LOC));
  const TopoSystem s = pcieHost(settings);
  const TopoPath& p = pathOf(s, gpu(0), gpu(1));
  EXPECT_EQ(p.type, PathType::PHB);
  EXPECT_EQ(p.hops, (std::vector<NodeRef>{pci(s, 0x11000), pci(s, 0x10000), cpu(0), pci(s, 0x10000),
                                          pci(s, 0x11000), gpu(1)}));
  auto check = checkP2p(s, 8, 9, settings);
  ASSERT_TRUE(check.ok());
  EXPECT_FALSE(check->p2p);
  EXPECT_EQ(check->pathType, PathType::PHB);
}

TEST(TopoPaths, BroadwellDefaultsToPxb) {
  auto doc = parseXmlFile(dataPath("pcie_host.xml"));
  ASSERT_TRUE(doc.ok());
  for (XmlNode* c : doc->root->childrenNamed("cpu")) ASSERT_TRUE(c->setInt("modelid", 0x4f));
  auto sys = buildSystem(*doc);
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  ASSERT_TRUE(computePaths(*sys));
  EXPECT_EQ(sys->of(NodeType::CPU)[0].cpu.model, CpuModel::Broadwell);
  EXPECT_TRUE(checkP2p(*sys, 8, 10, PathSettings{})->p2p);
  EXPECT_FALSE(checkP2p(*sys, 8, 12, PathSettings{})->p2p);
  EXPECT_FLOAT_EQ(pathOf(*sys, gpu(0), gpu(4)).width, 6.0F);  // QPI
}

TEST(TopoPaths, ResolveLevelNamesNumbersAndErrors) {
  const auto level = [](const char* v) {
    return *resolveP2pLevel(std::nullopt, std::string_view(v));
  };
  EXPECT_EQ(level("NVL"), 1);
  EXPECT_EQ(level("PHB"), 5);
  EXPECT_EQ(level("0"), 0);
  EXPECT_EQ(level("2"), 4);  // PXB
  EXPECT_EQ(level("3"), 5);  // PHB
  EXPECT_EQ(level("9"), 6);  // capped at 4 = SYS
  EXPECT_EQ(*resolveP2pLevel(std::nullopt, std::nullopt), PathSettings::kUnset);
  EXPECT_EQ(*resolveP2pLevel(std::string_view("0"), std::nullopt), PathSettings::kUnset);
  EXPECT_EQ(errorOf(resolveP2pLevel(std::string_view("yes"), std::nullopt)),
            "NCCL_P2P_DISABLE='yes' is not an integer (1 disables, 0 does not)");
}

constexpr const char* kNvlinkChain = R"(<system version="1"><cpu numaid="0">
  <pci busid="0000:01:00.0">
    <pci busid="0000:02:00.0"><gpu dev="0" rank="0" sm="70"><nvlink target="0000:03:00.0" count="2" tclass="0x030200"/></gpu></pci>
    <pci busid="0000:03:00.0"><gpu dev="1" rank="1" sm="70"><nvlink target="0000:02:00.0" count="2" tclass="0x030200"/>
      <nvlink target="0000:04:00.0" count="2" tclass="0x030200"/></gpu></pci>
    <pci busid="0000:04:00.0"><gpu dev="2" rank="2" sm="70"><nvlink target="0000:03:00.0" count="2" tclass="0x030200"/></gpu></pci>
  </pci></cpu></system>)";

TEST(TopoPaths, NvlinkThroughOneGpuIsNvbWithAnIntermediateRank) {
  TopoSystem s = mustBuild(kNvlinkChain);
  ASSERT_TRUE(computePaths(s));
  const TopoPath& direct = pathOf(s, gpu(0), gpu(1));
  EXPECT_EQ(direct.type, PathType::NVL);
  EXPECT_EQ(direct.count(), 1);
  EXPECT_FLOAT_EQ(direct.width, 42.0F);
  // 0 -> 2: via GPU1 over two NVLinks (42) beats the 2-hop PCI path (24).
  const TopoPath& relay = pathOf(s, gpu(0), gpu(2));
  EXPECT_EQ(relay.type, PathType::NVB);
  EXPECT_EQ(relay.hops, (std::vector<NodeRef>{gpu(1), gpu(2)}));
  EXPECT_FLOAT_EQ(relay.width, 42.0F);
  auto check = checkP2p(s, 0, 2, PathSettings{});
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->p2p);
  EXPECT_EQ(check->intermediateRank, 1);
  // A level below NVB refuses it.
  EXPECT_FALSE(checkP2p(s, 0, 2, std::string_view("NVL"), std::nullopt)->p2p);
}

TEST(TopoPaths, NvswitchPathIsNvl) {
  TopoSystem s = mustBuild(R"(<system><cpu numaid="0">
    <pci busid="01:00.0"><gpu dev="0" rank="0" sm="80"><nvlink target="ff:00.0" count="4" tclass="0x068000"/></gpu></pci>
    <pci busid="02:00.0"><gpu dev="1" rank="1" sm="80"><nvlink target="ff:00.0" count="4" tclass="0x068000"/></gpu></pci>
    </cpu></system>)");
  ASSERT_TRUE(computePaths(s));
  const TopoPath& p = pathOf(s, gpu(0), gpu(1));
  EXPECT_EQ(p.type, PathType::NVL);
  EXPECT_EQ(p.hops, (std::vector<NodeRef>{NodeRef{NodeType::NVS, 0}, gpu(1)}));
  EXPECT_FLOAT_EQ(p.width, 80.0F);                       // 4 x 20 (sm 80)
  EXPECT_TRUE(checkP2p(s, 0, 1, PathSettings{})->read);  // NVL between two sm 80
}

TEST(TopoPaths, UnconnectedGpusHaveNoPath) {
  TopoSystem s = gpusOnly(2);
  ASSERT_TRUE(computePaths(s));
  EXPECT_FALSE(pathOf(s, gpu(0), gpu(1)).reachable());
  EXPECT_EQ(errorOf(checkP2p(s, 0, 1, PathSettings{})), "no path between rank 0 and rank 1");
  EXPECT_EQ(errorOf(checkP2p(s, 0, 99, PathSettings{})),
            "checkP2p: rank 99 is not a GPU of this topology");
}

TEST(TopoPaths, AGpuIsNeverAPciTransit) {
  // GPU0 -PCI- GPU1 -PCI- GPU2: GPU1 may only relay NVLink to NVLink.
  TopoSystem s = gpusOnly(3);
  link(s, gpu(0), gpu(1), LinkType::PCI, 12.0F);
  link(s, gpu(1), gpu(2), LinkType::PCI, 12.0F);
  ASSERT_TRUE(computePaths(s));
  EXPECT_EQ(pathOf(s, gpu(0), gpu(1)).type, PathType::PIX);
  EXPECT_EQ(errorOf(checkP2p(s, 0, 2, PathSettings{})), "no path between rank 0 and rank 2");
}

TEST(TopoPaths, OneWayLinkIsAnError) {
  TopoSystem s = gpusOnly(2);
  ASSERT_TRUE(connectNodes(s, gpu(0), gpu(1), LinkType::NVL, 20.0F));
  EXPECT_EQ(
      errorOf(computePaths(s)),
      "topology: link from GPU 4096 to GPU 8192 has no reverse link (paths need both directions)");
}

TEST(TopoPaths, CheckP2pBeforeComputePathsIsAnError) {
  TopoSystem s = gpusOnly(2);
  EXPECT_EQ(errorOf(checkP2p(s, 0, 1, PathSettings{})),
            "checkP2p: paths are not computed (call computePaths first)");
}

TEST(TopoPaths, TrimDropsGpusOutsideMyDomain) {
  TopoSystem s = gpusOnly(3);
  ASSERT_TRUE(addNode(s, NodeType::CPU, 0).ok());
  link(s, cpu(0), gpu(0), LinkType::PCI, 24.0F);
  link(s, cpu(0), gpu(1), LinkType::PCI, 24.0F);
  TopoSystem other = s;
  ASSERT_TRUE(computePaths(s));
  ASSERT_TRUE(trimSystem(s, 0, 3));
  ASSERT_EQ(s.count(NodeType::GPU), 2);
  EXPECT_EQ(s.gpuIndexOfRank(2), -1);
  ASSERT_TRUE(computePaths(s));
  EXPECT_EQ(pathOf(s, gpu(0), gpu(1)).type, PathType::PHB);
  // From the isolated GPU's point of view the other two go.
  ASSERT_TRUE(computePaths(other));
  ASSERT_TRUE(trimSystem(other, 2, 3));
  ASSERT_EQ(other.count(NodeType::GPU), 1);
  EXPECT_EQ(other.of(NodeType::GPU)[0].gpu.rank, 2);
  EXPECT_TRUE(other.of(NodeType::CPU)[0].links.empty());  // links to removed nodes are gone
  EXPECT_EQ(errorOf(trimSystem(other, 0, 3)), "trimSystem: rank 0 is not a GPU of this topology");
}

TEST(TopoPaths, TrimDropsNetsWhenEveryRankIsLocal) {
  TopoSystem single = pcieHost();
  ASSERT_TRUE(trimSystem(single, 8, 8));
  EXPECT_EQ(single.count(NodeType::NET), 0);
  EXPECT_EQ(single.count(NodeType::GPU), 8);
  EXPECT_TRUE(single.of(NodeType::NIC)[0].links.size() == 1u);  // only its PCI up link
  TopoSystem two = pcieHost();
  ASSERT_TRUE(trimSystem(two, 8, 16));
  EXPECT_EQ(two.count(NodeType::NET), 2);
}

TEST(TopoPaths, SearchWidths) {
  TopoSystem s = pcieHost();
  computeSearchWidths(s);
  EXPECT_FLOAT_EQ(s.maxWidth, 12.0F);    // best GPU -> NET path: through the gen3 NIC
  EXPECT_FLOAT_EQ(s.totalWidth, 24.0F);  // a GPU's PCI link
  // initTransportsRank's sequence: compute, trim (all 8 ranks local: the NETs
  // go), recompute, then the widths come from GPU-GPU paths (PIX/PXB at 24).
  TopoSystem local = pcieHost();
  ASSERT_TRUE(trimSystem(local, 8, 8));
  ASSERT_TRUE(computePaths(local));
  computeSearchWidths(local);
  EXPECT_FLOAT_EQ(local.maxWidth, 24.0F);
  EXPECT_FLOAT_EQ(local.totalWidth, 24.0F);
  TopoSystem one = gpusOnly(1);
  ASSERT_TRUE(computePaths(one));
  computeSearchWidths(one);
  EXPECT_FLOAT_EQ(one.maxWidth, kLocWidth);
}

}  // namespace
}  // namespace nccom::topo::test
