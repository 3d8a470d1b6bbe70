#include "detect_fixture.h"

#include <sstream>

namespace topo_nccl_test {
using namespace nccom::topo_nccl;

namespace {

PciAttrs bridge(const std::string& vendor, const std::string& device, const std::string& numa) {
  PciAttrs a;
  a.classCode = "0x060400";
  a.vendor = vendor;
  a.device = device;
  a.subsystemVendor = "0x0000";
  a.subsystemDevice = "0x0000";
  a.maxLinkSpeed = "16.0 GT/s PCIe";
  a.maxLinkWidth = "16";
  a.numaNode = numa;
  return a;
}

PciAttrs endpoint(const std::string& classCode, const std::string& device, const std::string& numa,
                  const std::string& width) {
  PciAttrs a;
  a.classCode = classCode;
  a.vendor = "0x1d0f";
  a.device = device;
  a.subsystemVendor = "0x1d0f";
  a.subsystemDevice = "0x0001";
  a.maxLinkSpeed = "16.0 GT/s PCIe";
  a.maxLinkWidth = width;
  a.numaNode = numa;
  return a;
}

}  // namespace

std::string buildStandardHost(const FakeSysfs& sysfs) {
  sysfs.addNumaNode(0, "0-3", "0000000f");
  sysfs.addNumaNode(1, "4-7", "000000f0");
  // Not NUMA nodes: the files that sit next to node<N> in the real tree.
  sysfs.write("devices/system/node/online", "0-1");
  sysfs.write("devices/system/node/possible", "0-1");

  PciAttrs hostBridge = bridge("0x8086", "0x09a2", "0");
  hostBridge.classCode = "0x060000";
  sysfs.addPci("pci0000:00/0000:00:00.0", hostBridge);
  sysfs.addPci("pci0000:00/0000:00:01.0", bridge("0x8086", "0x347a", "0"));
  sysfs.addPci(kSwitchUp, bridge("0x1000", "0xc030", "0"));
  sysfs.addPci("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0",
               bridge("0x1000", "0xc030", "0"));
  sysfs.addPci("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0",
               bridge("0x1000", "0xc030", "0"));
  sysfs.addPci(kNeuronA, endpoint("0x120000", "0x7164", "0", "16"));
  sysfs.addPci(kNeuronB, endpoint("0x120000", "0x7164", "0", "16"));
  PciAttrs nvme = endpoint("0x010802", "0x8061", "0", "4");
  sysfs.addPci("pci0000:00/0000:00:02.0", nvme);
  sysfs.addPci("pci0000:00/0000:00:03.0", bridge("0x8086", "0x347b", "0"));
  sysfs.addPci("pci0000:80/0000:80:01.0", bridge("0x8086", "0x347a", "1"));
  sysfs.addPci(kEfa, endpoint("0x020000", "0xefa1", "1", "8"));
  sysfs.addInfiniband("rdmap129s0", kEfa);
  return sysfs.writeCpuinfo("GenuineIntel", "6", "143");
}

RdmaListing standardNicListing() {
  RdmaListing listing;
  RdmaDeviceInfo efa;
  efa.name = "rdmap129s0";
  efa.nodeGuid = 0x0123456789abcdefull;
  efa.maxQp = 256;
  // ACTIVE, EDR (32) x 4 lanes (width code 2), link layer unspecified (EFA).
  efa.ports.push_back(RdmaPortInfo{1, 4, 32, 2, 0});
  listing.devices.push_back(efa);
  return listing;
}

HostDescription expectedStandardHost() {
  auto pci = [](const char* busId, const char* cls, const char* vendor, const char* device,
                const char* subVendor, const char* subDevice, const char* width, int numa,
                PciKind kind) {
    PciDevice d;
    d.busId = busId;
    d.classCode = cls;
    d.vendor = vendor;
    d.device = device;
    d.subsystemVendor = subVendor;
    d.subsystemDevice = subDevice;
    d.linkSpeed = "16.0 GT/s PCIe";
    d.linkWidth = width;
    d.numaNode = numa;
    d.kind = kind;
    return d;
  };
  PciDevice neuronA = pci("0000:03:00.0", "0x120000", "0x1d0f", "0x7164", "0x1d0f", "0x0001", "16",
                          0, PciKind::Neuron);
  PciDevice neuronB = pci("0000:04:00.0", "0x120000", "0x1d0f", "0x7164", "0x1d0f", "0x0001", "16",
                          0, PciKind::Neuron);
  PciDevice downA = pci("0000:02:00.0", "0x060400", "0x1000", "0xc030", "0x0000", "0x0000", "16", 0,
                        PciKind::Bridge);
  downA.children = {neuronA};
  PciDevice downB = pci("0000:02:01.0", "0x060400", "0x1000", "0xc030", "0x0000", "0x0000", "16", 0,
                        PciKind::Bridge);
  downB.children = {neuronB};
  PciDevice up = pci("0000:01:00.0", "0x060400", "0x1000", "0xc030", "0x0000", "0x0000", "16", 0,
                     PciKind::Bridge);
  up.children = {downA, downB};
  PciDevice root0 = pci("0000:00:01.0", "0x060400", "0x8086", "0x347a", "0x0000", "0x0000", "16", 0,
                        PciKind::Bridge);
  root0.children = {up};
  PciDevice efa = pci("0000:81:00.0", "0x020000", "0x1d0f", "0xefa1", "0x1d0f", "0x0001", "8", 1,
                      PciKind::Network);
  PciDevice root1 = pci("0000:80:01.0", "0x060400", "0x8086", "0x347a", "0x0000", "0x0000", "16", 1,
                        PciKind::Bridge);
  root1.children = {efa};

  HostDescription host;
  host.cpu = CpuInfo{"x86_64", "GenuineIntel", 6, 143};
  host.numaNodes = {NumaNode{0, "0-3", "0000000f", {root0}},
                    NumaNode{1, "4-7", "000000f0", {root1}}};
  host.neuronDevices = {NeuronDevice{"0000:03:00.0", "0x7164", "trn1", 0},
                        NeuronDevice{"0000:04:00.0", "0x7164", "trn1", 0}};
  host.nics = {Nic{"rdmap129s0",
                   0x0123456789abcdefull,
                   "0000:81:00.0",
                   256,
                   {NicPort{1, "ACTIVE", "Unspecified", 100000}}}};
  // 11 functions listed; the host bridge, the NVMe drive and the empty root
  // port are dropped.
  host.notes = {
      "PCI: kept 8 of 11 functions (network, display, accelerator, Neuron, and the bridges "
      "above them)"};
  return host;
}

std::string render(const PciDevice& d, int depth) {
  std::ostringstream out;
  out << std::string(2 * depth + 2, ' ') << "pci " << d.busId << " " << pciKindName(d.kind)
      << " class=" << d.classCode << " id=" << d.vendor << ":" << d.device
      << " sub=" << d.subsystemVendor << ":" << d.subsystemDevice << " link=" << d.linkSpeed << " x"
      << d.linkWidth << " numa=" << d.numaNode << "\n";
  for (const PciDevice& child : d.children) out << render(child, depth + 1);
  return out.str();
}

std::string render(const HostDescription& h) {
  std::ostringstream out;
  out << "cpu arch=" << h.cpu.arch << " vendor=" << h.cpu.vendor << " family=" << h.cpu.familyId
      << " model=" << h.cpu.modelId << "\n";
  for (const NumaNode& n : h.numaNodes) {
    out << "numa " << n.id << " cpus=" << n.cpulist << " affinity=" << n.affinity << "\n";
    for (const PciDevice& d : n.pci) out << render(d, 0);
  }
  for (const NeuronDevice& d : h.neuronDevices)
    out << "neuron " << d.busId << " " << d.device << " " << d.generation << " numa=" << d.numaNode
        << "\n";
  for (const Nic& nic : h.nics) {
    out << "nic " << nic.name << " guid=" << std::hex << nic.guid << std::dec
        << " pci=" << nic.busId << " maxqp=" << nic.maxQp << "\n";
    for (const NicPort& p : nic.ports)
      out << "  port " << p.port << " " << p.state << " " << p.linkLayer << " " << p.speedMbps
          << "\n";
  }
  out << "nicReason=" << h.nicReason << "\nneuronReason=" << h.neuronReason << "\n";
  for (const std::string& note : h.notes) out << "note: " << note << "\n";
  return out.str();
}

}  // namespace topo_nccl_test
