// TopoNcclDetect: detection over the standard fake host and its variants,
// and on the real machine.
#include "detect_internal.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace topo_nccl_test {
namespace {
using namespace nccom::topo_nccl;
using nccom::Result;
namespace fs = std::filesystem;

HostDescription detectOk(const DetectOptions& options) {
  Result<HostDescription> host = detectHost(options);
  EXPECT_TRUE(host.ok()) << (host.ok() ? "" : host.error().message);
  return host.ok() ? *host : HostDescription{};
}

TEST(TopoNcclDetect, StandardHostExactly) {
  StandardHost fake;
  const HostDescription host = detectOk(fake.options());
  const HostDescription expected = expectedStandardHost();
  EXPECT_EQ(render(host), render(expected));
  EXPECT_EQ(host.cpu, expected.cpu);
  EXPECT_EQ(host.numaNodes, expected.numaNodes);
  EXPECT_EQ(host.neuronDevices, expected.neuronDevices);
  EXPECT_EQ(host.nics, expected.nics);
  EXPECT_EQ(host.notes, expected.notes);
  EXPECT_EQ(host.nicReason, "");
  EXPECT_EQ(host.neuronReason, "");
}

TEST(TopoNcclDetect, RootWithUnknownNumaHangsFromLowestNode) {
  StandardHost fake;
  fake.sysfs().write(FakeSysfs::devicePath("pci0000:80/0000:80:01.0") + "/numa_node", "-1");
  const HostDescription host = detectOk(fake.options());
  ASSERT_EQ(host.numaNodes.size(), 2u);
  ASSERT_EQ(host.numaNodes[0].pci.size(), 2u);
  EXPECT_EQ(host.numaNodes[0].pci[1].busId, "0000:80:01.0");
  EXPECT_EQ(host.numaNodes[0].pci[1].numaNode, -1);
  EXPECT_TRUE(host.numaNodes[1].pci.empty());
  EXPECT_TRUE(hasNote(host, "PCI 0000:80:01.0: numa_node -1 (unknown); attached to NUMA node 0"));
}

TEST(TopoNcclDetect, RootOnUndetectedNumaHangsFromLowestNode) {
  StandardHost fake;
  fake.sysfs().write(FakeSysfs::devicePath("pci0000:80/0000:80:01.0") + "/numa_node", "7");
  const HostDescription host = detectOk(fake.options());
  ASSERT_EQ(host.numaNodes[0].pci.size(), 2u);
  EXPECT_TRUE(hasNote(host,
                      "PCI 0000:80:01.0: numa_node 7 names no detected NUMA node; attached to "
                      "NUMA node 0"));
}

TEST(TopoNcclDetect, DisplayAndAcceleratorKeptNonNeuronAmazonIsNot) {
  StandardHost fake;
  PciAttrs display;
  display.classCode = "0x030200";  // 3D controller
  display.vendor = "0x10de";
  display.device = "0x20b0";
  display.numaNode = "0";
  fake.sysfs().addPci("pci0000:00/0000:00:05.0", display);
  PciAttrs accel = display;
  accel.classCode = "0x120000";
  accel.vendor = "0x1234";
  fake.sysfs().addPci("pci0000:00/0000:00:06.0", accel);
  PciAttrs ena = display;  // Amazon ENA: vendor 0x1d0f, network, not Neuron
  ena.classCode = "0x020000";
  ena.vendor = "0x1d0f";
  ena.device = "0xec20";
  fake.sysfs().addPci("pci0000:00/0000:00:07.0", ena);
  const HostDescription host = detectOk(fake.options());
  const auto& roots = host.numaNodes[0].pci;
  ASSERT_EQ(roots.size(), 4u);
  EXPECT_EQ(roots[1].busId, "0000:00:05.0");
  EXPECT_EQ(roots[1].kind, PciKind::Display);
  EXPECT_EQ(roots[2].busId, "0000:00:06.0");
  EXPECT_EQ(roots[2].kind, PciKind::Accelerator);
  EXPECT_EQ(roots[3].busId, "0000:00:07.0");
  EXPECT_EQ(roots[3].kind, PciKind::Network);
  EXPECT_EQ(host.neuronDevices.size(), 2u);
  EXPECT_TRUE(hasNoteContaining(host, "PCI: kept 11 of 14 functions"));
}

TEST(TopoNcclDetect, NoNeuronDevicesIsSaid) {
  StandardHost fake;
  fake.sysfs().remove("bus/pci/devices/0000:03:00.0");
  fake.sysfs().remove("bus/pci/devices/0000:04:00.0");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(host.neuronDevices.empty());
  EXPECT_EQ(host.neuronReason,
            "no Neuron devices: no PCI function with vendor 0x1d0f and a Neuron device id");
  // The switch had only the Neuron devices below it: it goes too.
  EXPECT_TRUE(host.numaNodes[0].pci.empty());
  EXPECT_EQ(host.numaNodes[1].pci.size(), 1u);
}

TEST(TopoNcclDetect, NeuronDeviceIds) {
  EXPECT_EQ(neuronGeneration("0x1d0f", "0x7064"), "inf1");
  EXPECT_EQ(neuronGeneration("0x1d0f", "0x7067"), "inf1");
  EXPECT_EQ(neuronGeneration("0x1d0f", "0x7164"), "trn1");
  EXPECT_EQ(neuronGeneration("0x1d0f", "0x7264"), "inf2");
  EXPECT_EQ(neuronGeneration("0x1d0f", "0x7364"), "trn2");
  EXPECT_EQ(neuronGeneration("0x1d0f", "0x7564"), "trn3");
  EXPECT_EQ(neuronGeneration("0x1d0f", "0x7565"), "trn3");
  EXPECT_EQ(neuronGeneration("0x1d0f", "0xefa1"), "");  // EFA
  EXPECT_EQ(neuronGeneration("0x1d0f", "0xec20"), "");  // ENA
  EXPECT_EQ(neuronGeneration("0x8086", "0x7164"), "");  // right id, wrong vendor
}

TEST(TopoNcclDetect, CpuListToMask) {
  EXPECT_EQ(*cpuListToMask("0-3"), "0000000f");
  EXPECT_EQ(*cpuListToMask("4-7"), "000000f0");
  EXPECT_EQ(*cpuListToMask("0,33"), "00000002,00000001");
  EXPECT_EQ(*cpuListToMask("31-32"), "00000001,80000000");
  EXPECT_EQ(*cpuListToMask(""), "00000000");
  EXPECT_FALSE(cpuListToMask("3-1").ok());
  EXPECT_FALSE(cpuListToMask("8192").ok());
  EXPECT_FALSE(cpuListToMask("0-9999999").ok());
  EXPECT_FALSE(cpuListToMask("a").ok());
}

TEST(TopoNcclDetect, MissingCpumapIsComputedFromCpulist) {
  StandardHost fake;
  fake.sysfs().remove("devices/system/node/node1/cpumap");
  const HostDescription host = detectOk(fake.options());
  ASSERT_EQ(host.numaNodes.size(), 2u);
  EXPECT_EQ(host.numaNodes[1].affinity, "000000f0");
  EXPECT_TRUE(hasNote(host, fake.sysfs().root() +
                                "/devices/system/node/node1/cpumap is missing; affinity "
                                "computed from cpulist"));
}

TEST(TopoNcclDetect, NoNumaDirectoryMeansOneNodeOfOnlineCpus) {
  StandardHost fake;
  fake.sysfs().remove("devices/system/node");
  fake.sysfs().write("devices/system/cpu/online", "0-5");
  const HostDescription host = detectOk(fake.options());
  ASSERT_EQ(host.numaNodes.size(), 1u);
  EXPECT_EQ(host.numaNodes[0].id, 0);
  EXPECT_EQ(host.numaNodes[0].cpulist, "0-5");
  EXPECT_EQ(host.numaNodes[0].affinity, "0000003f");
  // Both trees now hang from node 0 (the NIC's root said node 1).
  EXPECT_EQ(host.numaNodes[0].pci.size(), 2u);
  EXPECT_TRUE(hasNoteContaining(host, "no NUMA information", "assuming one node 0"));
}

TEST(TopoNcclDetect, CpuIdentity) {
  StandardHost fake;
  DetectOptions options = fake.options();
  options.machine = "aarch64";
  options.cpuinfoPath = fake.sysfs().writeCpuinfo("", "", "");  // an Arm cpuinfo has neither
  const HostDescription host = detectOk(options);
  EXPECT_EQ(host.cpu, (CpuInfo{"arm64", "", -1, -1}));
  options.machine = "ppc64le";
  EXPECT_EQ(detectOk(options).cpu.arch, "ppc64");
  options.machine = "riscv64";
  EXPECT_EQ(detectOk(options).cpu.arch, "riscv64");
}

TEST(TopoNcclDetect, UnusableSysfsRootIsAnError) {
  nccom_test::TempDir dir;
  DetectOptions options;
  options.sysfsRoot = dir.path() + "/absent";
  Result<HostDescription> host = detectHost(options);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.error().message.find(dir.path() + "/absent is not a directory"), std::string::npos)
      << host.error().message;
  std::ofstream(dir.path() + "/file") << "x";
  options.sysfsRoot = dir.path() + "/file";
  host = detectHost(options);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.error().message.find(dir.path() + "/file"), std::string::npos);
}

// The real machine: detection succeeds, and every network, display and
// processing-accelerator function sysfs lists is in the trees (checked
// against an independent scan of the class files).
void collect(const PciDevice& d, std::vector<std::string>& out) {
  out.push_back(d.busId);
  for (const PciDevice& c : d.children) collect(c, out);
}

TEST(TopoNcclDetect, RealHost) {
  DetectOptions options;  // /sys, /proc/cpuinfo, uname, libibverbs
  Result<HostDescription> host = detectHost(options);
  ASSERT_TRUE(host.ok()) << host.error().message;
  EXPECT_FALSE(host->cpu.arch.empty());
  ASSERT_FALSE(host->numaNodes.empty());
  for (const NumaNode& n : host->numaNodes) EXPECT_FALSE(n.affinity.empty()) << n.id;
  std::vector<std::string> found;
  for (const NumaNode& n : host->numaNodes)
    for (const PciDevice& d : n.pci) collect(d, found);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/bus/pci/devices", ec)) {
    std::ifstream in(entry.path() / "class");
    std::string cls;
    in >> cls;
    if (cls.rfind("0x02", 0) == 0 || cls.rfind("0x03", 0) == 0 || cls.rfind("0x12", 0) == 0) {
      const std::string busId = entry.path().filename().string();
      EXPECT_NE(std::find(found.begin(), found.end(), busId), found.end()) << busId << " " << cls;
    }
  }
  EXPECT_EQ(host->neuronDevices.empty(), !host->neuronReason.empty());
  EXPECT_EQ(host->nics.empty(), !host->nicReason.empty());
  std::printf("%s", render(*host).c_str());
}

}  // namespace
}  // namespace topo_nccl_test
