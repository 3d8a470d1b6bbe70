// TopoNcclDetect, malformed trees: every broken file is either skipped with
// a note naming it and the rule, or (the sysfs root only) an error. Never a
// crash or a hang (each case would hang on a blocking open of the FIFO or
// loop on a symlink cycle if detection were careless).
#include "test_util.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace topo_nccl_test {
namespace {
using namespace nccom::topo_nccl;
using nccom::Result;

HostDescription detectOk(const DetectOptions& options) {
  Result<HostDescription> host = detectHost(options);
  EXPECT_TRUE(host.ok()) << (host.ok() ? "" : host.error().message);
  return host.ok() ? *host : HostDescription{};
}

const PciDevice* findPci(const std::vector<PciDevice>& devices, const std::string& busId) {
  for (const PciDevice& d : devices) {
    if (d.busId == busId) return &d;
    if (const PciDevice* in = findPci(d.children, busId)) return in;
  }
  return nullptr;
}
const PciDevice* findPci(const HostDescription& host, const std::string& busId) {
  for (const NumaNode& n : host.numaNodes)
    if (const PciDevice* d = findPci(n.pci, busId)) return d;
  return nullptr;
}

TEST(TopoNcclDetect, MalformedClassSkipsDeviceAndEverythingBelow) {
  StandardHost fake;
  fake.sysfs().write(FakeSysfs::devicePath(kSwitchUp) + "/class", "banana");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(hasNote(host, "skipped PCI 0000:01:00.0: " + fake.dev(kSwitchUp) +
                                "/class holds \"banana\", not 0x and 6 hex digits"));
  EXPECT_TRUE(hasNote(host,
                      "skipped PCI 0000:03:00.0: its upstream device 0000:01:00.0 is "
                      "unlisted or was skipped"));
  EXPECT_TRUE(hasNote(host,
                      "skipped PCI 0000:04:00.0: its upstream device 0000:01:00.0 is "
                      "unlisted or was skipped"));
  EXPECT_TRUE(host.numaNodes[0].pci.empty());
  EXPECT_TRUE(host.neuronDevices.empty());
  EXPECT_NE(findPci(host, "0000:81:00.0"), nullptr);  // the other tree is untouched
}

TEST(TopoNcclDetect, MalformedVendorMissing) {
  StandardHost fake;
  fake.sysfs().remove(FakeSysfs::devicePath(kNeuronA) + "/vendor");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(
      hasNote(host, "skipped PCI 0000:03:00.0: " + fake.dev(kNeuronA) + "/vendor is missing"));
  ASSERT_EQ(host.neuronDevices.size(), 1u);
  EXPECT_EQ(host.neuronDevices[0].busId, "0000:04:00.0");
}

TEST(TopoNcclDetect, MalformedNumaNodeIsUnknown) {
  StandardHost fake;
  fake.sysfs().write(FakeSysfs::devicePath(kEfa) + "/numa_node", "two");
  const HostDescription host = detectOk(fake.options());
  const PciDevice* efa = findPci(host, "0000:81:00.0");
  ASSERT_NE(efa, nullptr);
  EXPECT_EQ(efa->numaNode, -1);
  EXPECT_TRUE(hasNote(host, "PCI 0000:81:00.0: " + fake.dev(kEfa) +
                                "/numa_node holds \"two\", not a NUMA id (-1 or 0-65535); "
                                "attribute left empty"));
  ASSERT_EQ(host.numaNodes[1].pci.size(), 1u);  // its root still says node 1
}

TEST(TopoNcclDetect, MalformedLinkWidthFallsBackToCurrent) {
  StandardHost fake;
  fake.sysfs().write(FakeSysfs::devicePath(kEfa) + "/max_link_width", "x16");
  fake.sysfs().write(FakeSysfs::devicePath(kEfa) + "/current_link_width", "4");
  const HostDescription host = detectOk(fake.options());
  const PciDevice* efa = findPci(host, "0000:81:00.0");
  ASSERT_NE(efa, nullptr);
  EXPECT_EQ(efa->linkWidth, "4");
  EXPECT_TRUE(hasNoteContaining(host, fake.dev(kEfa) + "/max_link_width holds \"x16\""));
}

TEST(TopoNcclDetect, MalformedSymlinkLoopInDeviceList) {
  StandardHost fake;
  fake.sysfs().symlink("bus/pci/devices/0000:00:09.0", "0000:00:09.0");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(hasNoteContaining(
      host, "skipped PCI 0000:00:09.0: " + fake.sysfs().root() + "/bus/pci/devices/0000:00:09.0",
      "Too many levels of symbolic links"));
  EXPECT_EQ(host.numaNodes, expectedStandardHost().numaNodes);
}

TEST(TopoNcclDetect, MalformedSymlinkLoopAsAttribute) {
  StandardHost fake;
  fake.sysfs().symlink(FakeSysfs::devicePath(kNeuronA) + "/class", "class");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(hasNote(host, "skipped PCI 0000:03:00.0: cannot open " + fake.dev(kNeuronA) +
                                "/class: symlink loop (Too many levels of symbolic links)"));
  EXPECT_EQ(host.neuronDevices.size(), 1u);
}

TEST(TopoNcclDetect, MalformedLinkToAnotherDevice) {
  StandardHost fake;
  fake.sysfs().symlink("bus/pci/devices/0000:00:0a.0", "../../../devices/pci0000:00/0000:00:01.0");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(hasNoteContaining(host, "skipped PCI 0000:00:0a.0", "another device"));
  EXPECT_EQ(host.numaNodes, expectedStandardHost().numaNodes);
}

TEST(TopoNcclDetect, MalformedEntryName) {
  StandardHost fake;
  fake.sysfs().write("bus/pci/devices/garbage", "x");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(hasNote(host, "skipped " + fake.sysfs().root() +
                                "/bus/pci/devices/garbage: not a PCI function name like "
                                "0000:3b:00.0"));
}

TEST(TopoNcclDetect, MalformedHugeAttribute) {
  StandardHost fake;
  {
    std::ofstream out(fake.dev(kNeuronB) + "/class", std::ios::trunc);
    out << std::string(1 << 20, '7');
  }
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(
      hasNote(host, "skipped PCI 0000:04:00.0: " + fake.dev(kNeuronB) +
                        "/class holds more than 4096 bytes (a sysfs attribute never does)"));
  EXPECT_EQ(host.neuronDevices.size(), 1u);
}

TEST(TopoNcclDetect, MalformedFifoAndDirectoryAttributes) {
  StandardHost fake;
  const std::string fifo = fake.dev(kEfa) + "/numa_node";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // a blocking open would hang here
  fake.sysfs().remove(FakeSysfs::devicePath(kNeuronA) + "/device");
  std::filesystem::create_directory(fake.dev(kNeuronA) + "/device");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(hasNote(host, "PCI 0000:81:00.0: " + fifo +
                                " is not a regular file (sysfs attributes are); attribute left "
                                "empty"));
  EXPECT_TRUE(hasNote(host, "skipped PCI 0000:03:00.0: " + fake.dev(kNeuronA) +
                                "/device is not a regular file (sysfs attributes are)"));
}

TEST(TopoNcclDetect, MalformedCpulistSkipsNode) {
  StandardHost fake;
  fake.sysfs().write("devices/system/node/node1/cpulist", "zero-three");
  const HostDescription host = detectOk(fake.options());
  ASSERT_EQ(host.numaNodes.size(), 1u);
  EXPECT_EQ(host.numaNodes[0].id, 0);
  EXPECT_TRUE(hasNote(host, "skipped NUMA node 1: " + fake.sysfs().root() +
                                "/devices/system/node/node1/cpulist holds \"zero-three\", not a "
                                "cpu list like \"0-3,8\""));
  // The NIC's tree said node 1: it now hangs from node 0, and says so.
  EXPECT_EQ(host.numaNodes[0].pci.size(), 2u);
  EXPECT_TRUE(hasNoteContaining(host, "PCI 0000:80:01.0: numa_node 1 names no detected NUMA node"));
}

TEST(TopoNcclDetect, MalformedCpumapAndNodeLoop) {
  StandardHost fake;
  fake.sysfs().write("devices/system/node/node0/cpumap", "0000000g");
  fake.sysfs().remove("devices/system/node/node1");
  fake.sysfs().symlink("devices/system/node/node1", "node1");
  fake.sysfs().write("devices/system/cpu/online", "0-7");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(hasNoteContaining(host, "skipped NUMA node 0", "not a hex cpu mask"));
  EXPECT_TRUE(hasNoteContaining(host, "skipped NUMA node 1", "symlink loop"));
  ASSERT_EQ(host.numaNodes.size(), 1u);  // the fallback
  EXPECT_EQ(host.numaNodes[0].cpulist, "0-7");
  EXPECT_EQ(host.numaNodes[0].affinity, "000000ff");
}

TEST(TopoNcclDetect, MalformedCpuinfo) {
  StandardHost fake;
  DetectOptions options = fake.options();
  options.cpuinfoPath = fake.sysfs().writeCpuinfo("Genuine\x01Intel", "six", "143");
  HostDescription host = detectOk(options);
  EXPECT_EQ(host.cpu, (CpuInfo{"x86_64", "", -1, 143}));
  EXPECT_TRUE(hasNote(host, options.cpuinfoPath + ": 'cpu family' is \"six\", not a decimal "
                                                  "number; left unknown"));
  EXPECT_TRUE(hasNoteContaining(host, options.cpuinfoPath + ": vendor_id"));

  options.cpuinfoPath = fake.sysfs().root() + "/no-cpuinfo";
  host = detectOk(options);
  EXPECT_EQ(host.cpu, (CpuInfo{"x86_64", "", -1, -1}));
  EXPECT_TRUE(hasNoteContaining(host, "CPU vendor/family/model unknown", "no-cpuinfo"));

  // Megabytes without an empty line: read no further than 64 KiB.
  {
    std::ofstream out(fake.sysfs().root() + "/endless", std::ios::trunc);
    for (int i = 0; i < 100000; ++i) out << "flags\t: fpu vme de pse\n";
  }
  options.cpuinfoPath = fake.sysfs().root() + "/endless";
  host = detectOk(options);
  EXPECT_TRUE(hasNoteContaining(host, "endless: no empty line within the first 65536 bytes"));
}

TEST(TopoNcclDetect, MalformedNoPciBus) {
  StandardHost fake;
  fake.sysfs().remove("bus");
  const HostDescription host = detectOk(fake.options());
  EXPECT_TRUE(host.numaNodes[0].pci.empty());
  EXPECT_TRUE(host.numaNodes[1].pci.empty());
  EXPECT_TRUE(
      hasNoteContaining(host, "no PCI devices (" + fake.sysfs().root() + "/bus/pci/devices"));
  // The NIC is still listed; its PCI function still resolves through
  // class/infiniband, which does not depend on bus/pci.
  ASSERT_EQ(host.nics.size(), 1u);
  EXPECT_EQ(host.nics[0].busId, "0000:81:00.0");
}

}  // namespace
}  // namespace topo_nccl_test
