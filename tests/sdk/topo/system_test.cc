// TopoSystem: <system> XML -> typed graph. Expected values are worked out by
// hand from the fixture: PCIe widths are lanes x per-lane speed / 80
// (gen4 x16 = 16 x 120 / 80 = 24 GB/s, gen3 x16 = 12), NET width is Mbps /
// 8000 (100 Gb/s = 12.5), Skylake SYS links are 9 GB/s.
#include "topo_test_util.h"

namespace nccom::topo::test {
namespace {

TopoSystem hostWithoutPaths() {
  auto doc = parseXmlFile(dataPath("pcie_host.xml"));
  EXPECT_TRUE(doc.ok());
  auto sys = buildSystem(*doc);
  EXPECT_TRUE(sys.ok()) << (sys.ok() ? "" : sys.error().message);
  return sys.ok() ? std::move(*sys) : TopoSystem{};
}

TEST(TopoSystem, HostFileNodeCountsAndAttributes) {
  const TopoSystem sys = hostWithoutPaths();
  EXPECT_EQ(sys.count(NodeType::GPU), 8);
  EXPECT_EQ(sys.count(NodeType::PCI), 6);  // 2 root + 4 leaf switches
  EXPECT_EQ(sys.count(NodeType::CPU), 2);
  EXPECT_EQ(sys.count(NodeType::NIC), 2);
  EXPECT_EQ(sys.count(NodeType::NET), 2);
  EXPECT_EQ(sys.count(NodeType::NVS), 0);
  for (int d = 0; d < 8; ++d) {
    const int g = sys.gpuIndexOfDev(d);
    ASSERT_GE(g, 0);
    const TopoNode& gpu = sys.of(NodeType::GPU)[g];
    EXPECT_EQ(gpu.gpu.rank, d + 8);
    EXPECT_EQ(gpu.gpu.sm, 2);
    EXPECT_EQ(gpu.gpu.gdr, 1);
    EXPECT_EQ(sys.gpuIndexOfRank(d + 8), g);
  }
  EXPECT_EQ(sys.of(NodeType::GPU)[0].id, 0x12000);  // busid 0000:12:00.0
  const TopoNode& net1 =
      sys.of(NodeType::NET)[static_cast<std::size_t>(sys.find(NodeType::NET, 1))];
  EXPECT_FLOAT_EQ(net1.net.width, 12.5F);
  EXPECT_EQ(net1.net.guid, 0x1d0f00000000a090ULL);
  EXPECT_EQ(net1.net.port, 1);
  EXPECT_EQ(net1.net.maxConn, 131072);
  EXPECT_EQ(net1.net.gdr, 1);
  EXPECT_EQ(net1.net.coll, 0);
  EXPECT_EQ(sys.find(NodeType::NIC, 0x97000), 1);
  const CpuInfo& cpu = sys.of(NodeType::CPU)[1].cpu;
  EXPECT_EQ(cpu.arch, CpuArch::X86);
  EXPECT_EQ(cpu.vendor, CpuVendor::Intel);
  EXPECT_EQ(cpu.model, CpuModel::Skylake);  // family 6, model 85 = 0x55
  EXPECT_EQ(cpu.affinity, "ffff0000");
}

TEST(TopoSystem, LinkWidthsAndCanonicalOrder) {
  const TopoSystem sys = hostWithoutPaths();
  const TopoNode& gpu0 = sys.of(NodeType::GPU)[0];
  ASSERT_EQ(gpu0.links.size(), 1u);
  EXPECT_EQ(gpu0.links[0].type, LinkType::PCI);
  EXPECT_FLOAT_EQ(gpu0.links[0].width, 24.0F);
  EXPECT_EQ(sys.at(gpu0.links[0].remote).id, 0x11000);
  // Root switch of NUMA 0: down links (two leaf switches at 24, the NIC at
  // 12) first, the up link to the CPU last.
  const TopoNode& root =
      sys.of(NodeType::PCI)[static_cast<std::size_t>(sys.find(NodeType::PCI, 0x10000))];
  ASSERT_EQ(root.links.size(), 4u);
  EXPECT_EQ(sys.at(root.links[0].remote).id, 0x11000);
  EXPECT_EQ(sys.at(root.links[1].remote).id, 0x14000);
  EXPECT_EQ(root.links[2].remote.type, NodeType::NIC);
  EXPECT_FLOAT_EQ(root.links[2].width, 12.0F);
  EXPECT_EQ(root.links[3].remote.type, NodeType::CPU);
  // CPU 0: its root switch (PCI 24) then CPU 1 (SYS 9).
  const TopoNode& cpu0 = sys.of(NodeType::CPU)[0];
  ASSERT_EQ(cpu0.links.size(), 2u);
  EXPECT_EQ(cpu0.links[0].type, LinkType::PCI);
  EXPECT_EQ(cpu0.links[1].type, LinkType::SYS);
  EXPECT_FLOAT_EQ(cpu0.links[1].width, 9.0F);
  EXPECT_EQ(cpu0.links[1].remote, (NodeRef{NodeType::CPU, 1}));
  // NIC <-> NET at the NET width.
  const TopoNode& nic0 = sys.of(NodeType::NIC)[0];
  EXPECT_EQ(nic0.links[0].type, LinkType::NET);
  EXPECT_FLOAT_EQ(nic0.links[0].width, 12.5F);
}

constexpr const char* kNvlinkSystem = R"(<system version="1">
  <cpu numaid="0" arch="x86_64" vendor="AuthenticAMD">
    <pci busid="0000:01:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">
      <pci busid="0000:02:00.0" class="0x030000" link_width="16" link_speed="16.0 GT/s PCIe">
        <gpu dev="0" rank="0" sm="70"><nvlink target="0000:03:00.0" count="2" tclass="0x030000"/>
          <nvlink target="0000:00:00.0" count="1" tclass="0x068001"/></gpu>
      </pci>
      <pci busid="0000:03:00.0" class="0x030000" link_width="16" link_speed="16.0 GT/s PCIe">
        <gpu dev="1" rank="1" sm="70"><nvlink target="0000:02:00.0" count="2" tclass="0x030000"/>
          <nvlink target="0000:ff:00.0" count="3" tclass="0x068000"/></gpu>
      </pci>
    </pci>
  </cpu>
</system>)";

TEST(TopoSystem, NvlinksToGpuCpuAndSwitch) {
  const TopoSystem sys = mustBuild(kNvlinkSystem);
  ASSERT_EQ(sys.count(NodeType::GPU), 2);
  ASSERT_EQ(sys.count(NodeType::NVS), 1);
  const TopoNode& g0 = sys.of(NodeType::GPU)[0];
  const TopoNode& g1 = sys.of(NodeType::GPU)[1];
  // sm 70: 21 GB/s per link. GPU0: NVL x2 to GPU1 (42), NVL x1 to the CPU
  // (21), then its PCI up link (24) last: the canonical order puts NVLinks
  // before the way up the PCI tree.
  ASSERT_EQ(g0.links.size(), 3u);
  EXPECT_EQ(g0.links[0].type, LinkType::NVL);
  EXPECT_FLOAT_EQ(g0.links[0].width, 42.0F);
  EXPECT_EQ(g0.links[0].remote, (NodeRef{NodeType::GPU, 1}));
  EXPECT_EQ(g0.links[1].type, LinkType::NVL);
  EXPECT_FLOAT_EQ(g0.links[1].width, 21.0F);
  EXPECT_EQ(g0.links[1].remote, (NodeRef{NodeType::CPU, 0}));
  EXPECT_EQ(g0.links[2].type, LinkType::PCI);
  EXPECT_FLOAT_EQ(g0.links[2].width, 24.0F);
  // GPU1: NVS x3 = 63 first.
  EXPECT_EQ(g1.links[0].remote.type, NodeType::NVS);
  EXPECT_FLOAT_EQ(g1.links[0].width, 63.0F);
  // The CPU and the NVS got the reverse links; AMD: no SYS peers, LOC width.
  const auto& cpuLinks = sys.of(NodeType::CPU)[0].links;
  EXPECT_EQ(std::count_if(cpuLinks.begin(), cpuLinks.end(),
                          [](const TopoLink& l) { return l.type == LinkType::NVL; }),
            1);
  ASSERT_EQ(sys.of(NodeType::NVS)[0].links.size(), 1u);
  EXPECT_EQ(sys.of(NodeType::NVS)[0].links[0].remote, (NodeRef{NodeType::GPU, 1}));
}

TEST(TopoSystem, NvlinkWidthOverride) {
  SystemOptions options;
  options.nvlinkWidth = 50.0F;
  const TopoSystem sys = mustBuild(kNvlinkSystem, options);
  EXPECT_FLOAT_EQ(sys.of(NodeType::GPU)[0].links[0].width, 100.0F);
}

TEST(TopoSystem, InterCpuWidthsFollowTheArchitecture) {
  EXPECT_FLOAT_EQ(interCpuWidth({CpuArch::X86, CpuVendor::Intel, CpuModel::Skylake, ""}), 9.0F);
  EXPECT_FLOAT_EQ(interCpuWidth({CpuArch::X86, CpuVendor::Intel, CpuModel::Broadwell, ""}), 6.0F);
  EXPECT_FLOAT_EQ(interCpuWidth({CpuArch::Power, CpuVendor::Unknown, CpuModel::Unknown, ""}),
                  32.0F);
  EXPECT_FLOAT_EQ(interCpuWidth({CpuArch::Arm, CpuVendor::Unknown, CpuModel::Unknown, ""}), 6.0F);
  EXPECT_FLOAT_EQ(interCpuWidth({CpuArch::X86, CpuVendor::Amd, CpuModel::Unknown, ""}), kLocWidth);
}

TEST(TopoSystem, BusIdConversion) {
  EXPECT_EQ(*busIdToInt64("0000:10:1c.0"), 0x101c0);
  EXPECT_EQ(int64ToBusId(0x101c0), "0000:10:1c.0");
  EXPECT_EQ(int64ToBusId(*busIdToInt64("0001:a0:03.7")), "0001:a0:03.7");
  EXPECT_FALSE(busIdToInt64("00:1g.0"));
  EXPECT_FALSE(busIdToInt64(""));
  EXPECT_FALSE(busIdToInt64("1234567890abcdef0"));
}

TEST(TopoSystem, NicsUnderTheCpuShareOneNode) {
  const TopoSystem sys = mustBuild(R"(<system><cpu numaid="0"><nic><net dev="0" speed="-1"/></nic>
    <nic><net dev="1" speed="200000"/></nic></cpu></system>)");
  ASSERT_EQ(sys.count(NodeType::NIC), 1);
  ASSERT_EQ(sys.count(NodeType::NET), 2);
  EXPECT_FLOAT_EQ(sys.of(NodeType::NET)[0].net.width, 1.25F);  // unknown speed: 10 Gb/s
  EXPECT_FLOAT_EQ(sys.of(NodeType::NET)[1].net.width, 25.0F);
  EXPECT_EQ(sys.of(NodeType::NET)[0].net.guid, 0u);  // no guid: the dev
  EXPECT_EQ(sys.of(NodeType::NET)[1].net.guid, 1u);
  EXPECT_EQ(sys.of(NodeType::NET)[0].net.maxConn, kMaxChannels);
}

TEST(TopoSystem, UnknownElementsAndUnusedDevicesAreIgnored) {
  const TopoSystem sys =
      mustBuild(R"(<system><future/><cpu numaid="0"><pci busid="0000:05:00.0" class="0x030000"/>
    <pci busid="0000:06:00.0"><unknown/></pci></cpu></system>)");
  EXPECT_EQ(sys.count(NodeType::GPU), 0);
  EXPECT_EQ(sys.count(NodeType::PCI),
            1);  // the class-less one; the GPU-class pci without <gpu> is skipped
}

struct BadSystem {
  const char* name;
  const char* xml;
  const char* message;
};

class TopoSystemErrors : public ::testing::TestWithParam<BadSystem> {};

TEST_P(TopoSystemErrors, NameTheElementAndTheRule) {
  auto doc = parseXml(GetParam().xml);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  auto sys = buildSystem(*doc);
  ASSERT_FALSE(sys.ok());
  EXPECT_EQ(sys.error().message, GetParam().message);
}

#define GPU_PCI(bus, attrs, inner) "<pci busid='" bus "'><gpu " attrs ">" inner "</gpu></pci>"

INSTANTIATE_TEST_SUITE_P(
    TopoSystem, TopoSystemErrors,
    ::testing::Values(
        BadSystem{"RootNotSystem", "<graphs/>",
                  "topology <graphs> at <string>:1:1: root element is <graphs>, expected <system>"},
        BadSystem{"WrongVersion", "<system version='2'/>",
                  "topology <system> at <string>:1:1: topology XML version 2, 1 supported"},
        BadSystem{"GpuWithoutRank",
                  "<system><cpu numaid='0'>\n" GPU_PCI("01:00.0", "dev='0'", "") "</cpu></system>",
                  "topology <gpu> at <string>:2:22: gpu without rank (every NeuronCore must name "
                  "its rank)"},
        BadSystem{"GpuWithoutDev",
                  "<system><cpu numaid='0'>" GPU_PCI("01:00.0", "rank='0'", "") "</cpu></system>",
                  "topology <string>: XML: attribute 'dev' of <gpu> at line 1:46: missing"},
        BadSystem{"RankNotANumber",
                  "<system><cpu numaid='0'>" GPU_PCI("01:00.0", "dev='0' rank='one'",
                                                     "") "</cpu></system>",
                  "topology <string>: XML: attribute 'rank' of <gpu> at line 1:46: 'one' is not an "
                  "integer"},
        BadSystem{"NegativeRank",
                  "<system><cpu numaid='0'>" GPU_PCI("01:00.0", "dev='0' rank='-1'",
                                                     "") "</cpu></system>",
                  "topology <gpu> at <string>:1:46: attribute 'rank'=-1 outside [0, 1073741824]"},
        BadSystem{"DuplicateRank",
                  "<system><cpu numaid='0'>" GPU_PCI("01:00.0", "dev='0' rank='3'", "")
                      GPU_PCI("02:00.0", "dev='1' rank='3'", "") "</cpu></system>",
                  "topology <gpu> at <string>:1:101: duplicate gpu rank 3"},
        BadSystem{"DuplicateDev",
                  "<system><cpu numaid='0'>" GPU_PCI("01:00.0", "dev='0' rank='0'", "")
                      GPU_PCI("02:00.0", "dev='0' rank='1'", "") "</cpu></system>",
                  "topology <gpu> at <string>:1:101: duplicate gpu dev 0"},
        BadSystem{"DuplicateGpuBusid",
                  "<system><cpu numaid='0'>" GPU_PCI("01:00.0", "dev='0' rank='0'", "")
                      GPU_PCI("01:00.0", "dev='1' rank='1'", "") "</cpu></system>",
                  "topology <pci> at <string>:1:80: duplicate gpu busid 01:00.0"},
        BadSystem{"TwoGpusInOnePci",
                  "<system><cpu numaid='0'><pci busid='01:00.0'><gpu dev='0' rank='0'/><gpu "
                  "dev='1' rank='1'/></pci></cpu></system>",
                  "topology <pci> at <string>:1:25: holds 2 <gpu> elements; one NeuronCore per "
                  "<pci> (give each core its own busid)"},
        BadSystem{"BadBusid", "<system><cpu numaid='0'><pci busid='zz:00.0'/></cpu></system>",
                  "topology <pci> at <string>:1:25: busid 'zz:00.0' is not a PCI bus id (hex "
                  "digits, ':' and '.')"},
        BadSystem{
            "NvlinkToUnknownBusid",
            "<system><cpu numaid='0'>" GPU_PCI(
                "01:00.0", "dev='0' rank='0'",
                "<nvlink target='0000:42:00.0' count='1' tclass='0x030000'/>") "</cpu></system>",
            "topology <nvlink> at <string>:1:68: nvlink to an unknown busid 0000:42:00.0 (no <gpu> "
            "with that busid)"},
        BadSystem{"NvlinkOneWay",
                  "<system><cpu numaid='0'>" GPU_PCI(
                      "01:00.0", "dev='0' rank='0'",
                      "<nvlink target='02:00.0' count='1' tclass='0x030000'/>")
                      GPU_PCI("02:00.0", "dev='1' rank='1'", "") "</cpu></system>",
                  "topology <gpu> at <string>:1:46: nvlink to gpu 0000:02:00.0 has no <nvlink> "
                  "back from that gpu (links must be declared in both directions)"},
        BadSystem{"NvlinkToItself",
                  "<system><cpu numaid='0'>" GPU_PCI(
                      "01:00.0", "dev='0' rank='0'",
                      "<nvlink target='01:00.0' count='1' tclass='0x030000'/>") "</cpu></system>",
                  "topology <nvlink> at <string>:1:68: nvlink from a gpu to itself (01:00.0)"},
        BadSystem{"NvlinkCountZero",
                  "<system><cpu numaid='0'>" GPU_PCI(
                      "01:00.0", "dev='0' rank='0'",
                      "<nvlink target='02:00.0' count='0' tclass='0x030000'/>") "</cpu></system>",
                  "topology <nvlink> at <string>:1:68: attribute 'count'=0 outside [1, 64]"},
        BadSystem{"DuplicateNuma", "<system><cpu numaid='0'/><cpu numaid='0'/></system>",
                  "topology <cpu> at <string>:1:26: duplicate cpu numaid 0"},
        BadSystem{"CpuWithoutNuma", "<system><cpu/></system>",
                  "topology <string>: XML: attribute 'numaid' of <cpu> at line 1:9: missing"},
        BadSystem{"DuplicateNetDev",
                  "<system><cpu numaid='0'><nic><net dev='0'/><net dev='0'/></nic></cpu></system>",
                  "topology <net> at <string>:1:44: duplicate net dev 0"},
        BadSystem{"BadGuid",
                  "<system><cpu numaid='0'><nic><net dev='0' guid='xyz'/></nic></cpu></system>",
                  "topology <string>: XML: attribute 'guid' of <net> at line 1:30: 'xyz' is not a "
                  "64-bit hex number"},
        BadSystem{"GpuAndNic",
                  "<system><cpu numaid='0'><pci busid='01:00.0'><gpu dev='0' "
                  "rank='0'/><nic/></pci></cpu></system>",
                  "topology <pci> at <string>:1:25: holds both a <gpu> and a <nic>"}),
    [](const ::testing::TestParamInfo<BadSystem>& info) { return std::string(info.param.name); });

TEST(TopoSystem, MoreThan256GpusIsAnError) {
  std::string xml = "<system><cpu numaid='0'>";
  int n = 0;
  for (int sw = 0; sw < 2; ++sw) {
    xml += "<pci busid='" + std::to_string(sw + 1) + "0000'>";
    for (int i = 0; i < 129; ++i, ++n) {
      char bus[16];
      std::snprintf(bus, sizeof bus, "%x", 0x100000 + n);
      xml += std::string("<pci busid='") + bus + "'><gpu dev='" + std::to_string(n) + "' rank='" +
             std::to_string(n) + "'/></pci>";
    }
    xml += "</pci>";
  }
  xml += "</cpu></system>";
  auto doc = parseXml(xml);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ(errorOf(buildSystem(*doc)),
            "topology <string>: topology: more than 256 GPU nodes (NCCL_TOPO_MAX_NODES)");
}

}  // namespace
}  // namespace nccom::topo::test
