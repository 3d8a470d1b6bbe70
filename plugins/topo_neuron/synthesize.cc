// XML synthesis: see synthesize.h and docs/decisions/topo-neuron.md, "XML synthesis" for every
// number written here and why.
#include "synthesize.h"

#include "fail.h"
#include "graph_fill.h"
#include "search.h"
#include "verify.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace nccom::topo_neuron {
namespace {

constexpr const char* kSwitchClass = "0x060400";
constexpr const char* kCoreClass = "0x030000";  // a GPU class: sdk/topo keys NeuronCores on it
constexpr const char* kNicClass = "0x020000";
constexpr uint64_t kGuidBase = 0x1d0f000000000000ull;  // Amazon's PCI vendor id in the top bits
constexpr int kNetMaxConn = 65536;

struct HostFacts {
  const char* vendor;
  int familyId;
  int modelId;
  const char* pcieSpeed;
  int netMbps;
};

// CPU, PCIe generation and NIC speed per variant
// (docs/decisions/topo-neuron.md, "CPU, PCIe, NIC speed per variant").
HostFacts hostFacts(Variant v) {
  switch (v) {
    case Variant::Trn1:
    case Variant::Trn1n:
      return {"GenuineIntel", 6, 0x6a, "16 GT/s", 100000};  // Ice Lake, gen4, 100G EFA
    case Variant::Inf2:
      return {"AuthenticAMD", 0x19, 0x01, "16 GT/s", 100000};  // EPYC gen3; no NIC in the table
    case Variant::Trn2:
    case Variant::Trn2UltraServer:
    case Variant::Trn3:
    case Variant::Trn3SwitchV1:
      return {"GenuineIntel", 6, 0x8f, "32 GT/s", 200000};  // Sapphire Rapids, gen5, 200G EFAv3
    case Variant::Emu: return {"GenuineIntel", 6, 0x55, "16 GT/s", 10000};  // sockets, not EFA
  }
  return {"GenuineIntel", 6, 0x55, "16 GT/s", 10000};
}

std::string busId(int bus, int device) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0000:%02x:%02x.0", bus & 0xff, device & 0xff);
  return buf;
}

// Converts a DOM setter's Status into the synthesizer's error.
Status check(Status st) {
  if (!st) return fail(NRT_INVALID, "topo_neuron XML synthesis: " + st.error().message);
  return {};
}

class Synth {
 public:
  Synth(const PlatformDescription& d, const NodeShare& s, std::vector<int> vcores)
      : d_(d), s_(s), vcores_(std::move(vcores)), facts_(hostFacts(d.variant)) {}
  Result<topo::XmlDocument> run();

 private:
  Status addSwitch(topo::XmlNode& cpu, int sw);
  Status addVcore(topo::XmlNode& sw, int local);
  Status addNic(topo::XmlNode& sw, const NicDesc& nic);
  Status setPciLink(topo::XmlNode& pci);

  const PlatformDescription& d_;
  const NodeShare& s_;
  std::vector<int> vcores_;  // vcore of each local rank
  HostFacts facts_;
  std::vector<int> nics_;  // NICs emitted (ids)
};

Status Synth::setPciLink(topo::XmlNode& pci) {
  if (auto st = check(pci.setAttribute("link_speed", facts_.pcieSpeed)); !st) return st;
  return check(pci.setInt("link_width", 16));
}

Status Synth::addVcore(topo::XmlNode& sw, int local) {
  const auto li = static_cast<size_t>(local);
  const int vid = vcores_[li];
  const int dev = s_.devices[li];
  auto pci = sw.addChild("pci");
  if (!pci) return check(pci.take_error());
  for (auto st : {(*pci)->setAttribute("busid", vcoreBusId(dev, s_.cores[li])),
                  (*pci)->setAttribute("class", kCoreClass)}) {
    if (auto c = check(std::move(st)); !c) return c;
  }
  if (auto st = setPciLink(**pci); !st) return st;
  auto gpu = (*pci)->addChild("gpu");
  if (!gpu) return check(gpu.take_error());
  for (auto st : {(*gpu)->setInt("dev", vid), (*gpu)->setInt("rank", s_.ranks[li]),
                  (*gpu)->setInt("sm", smTag(d_.platform)), (*gpu)->setInt("gdr", 1)}) {
    if (auto c = check(std::move(st)); !c) return c;
  }
  // One <nvlink> per used peer vcore reachable over a platform link, in
  // local-rank order: same device always, other devices when linked.
  for (size_t p = 0; p < vcores_.size(); ++p) {
    if (p == li) continue;
    const int peerDev = s_.devices[p];
    int count = 0;
    if (peerDev == dev) {
      count = linkCount(intraDeviceLocality(d_, vid, vcores_[p]), true);
    } else {
      EdgeLocality loc{};
      if (!d_.linked(dev, peerDev, &loc)) continue;
      count = linkCount(loc, false);
    }
    auto link = (*gpu)->addChild("nvlink");
    if (!link) return check(link.take_error());
    for (auto st : {(*link)->setAttribute("target", vcoreBusId(peerDev, s_.cores[p])),
                    (*link)->setInt("count", count), (*link)->setAttribute("tclass", kCoreClass)}) {
      if (auto c = check(std::move(st)); !c) return c;
    }
  }
  return {};
}

Status Synth::addNic(topo::XmlNode& sw, const NicDesc& nic) {
  auto pci = sw.addChild("pci");
  if (!pci) return check(pci.take_error());
  for (auto st : {(*pci)->setAttribute("busid", nicBusId(nic.id)),
                  (*pci)->setAttribute("class", kNicClass)}) {
    if (auto c = check(std::move(st)); !c) return c;
  }
  if (auto st = setPciLink(**pci); !st) return st;
  auto nicXml = (*pci)->addChild("nic");
  if (!nicXml) return check(nicXml.take_error());
  auto net = (*nicXml)->addChild("net");
  if (!net) return check(net.take_error());
  for (auto st : {(*net)->setInt("dev", nic.id), (*net)->setInt("speed", facts_.netMbps),
                  (*net)->setInt("port", 1),
                  (*net)->setHex("guid", kGuidBase + static_cast<uint64_t>(nic.id)),
                  (*net)->setInt("gdr", 1), (*net)->setInt("maxconn", kNetMaxConn)}) {
    if (auto c = check(std::move(st)); !c) return c;
  }
  return {};
}

Status Synth::addSwitch(topo::XmlNode& cpu, int sw) {
  auto pci = cpu.addChild("pci");
  if (!pci) return check(pci.take_error());
  for (auto st : {(*pci)->setAttribute("busid", switchBusId(sw)),
                  (*pci)->setAttribute("class", kSwitchClass)}) {
    if (auto c = check(std::move(st)); !c) return c;
  }
  if (auto st = setPciLink(**pci); !st) return st;
  // Vcores in local-rank order, then the NICs: both grouped by switch.
  for (size_t i = 0; i < vcores_.size(); ++i) {
    if (d_.devices[static_cast<size_t>(s_.devices[i])].pciSwitch != sw) continue;
    if (auto st = addVcore(**pci, static_cast<int>(i)); !st) return st;
  }
  for (int k : nics_) {
    const NicDesc& nic = d_.nics[static_cast<size_t>(k)];
    if (nic.pciSwitch != sw) continue;
    if (auto st = addNic(**pci, nic); !st) return st;
  }
  return {};
}

Result<topo::XmlDocument> Synth::run() {
  std::vector<int> usedDevices(s_.devices.begin(), s_.devices.end());
  std::sort(usedDevices.begin(), usedDevices.end());
  usedDevices.erase(std::unique(usedDevices.begin(), usedDevices.end()), usedDevices.end());
  nics_ = usableNics(d_, usedDevices);
  // Switch -> NUMA node, for every switch holding a used device or a NIC.
  std::map<int, int> switchNuma;
  for (int dev : usedDevices) {
    const auto& dd = d_.devices[static_cast<size_t>(dev)];
    switchNuma[dd.pciSwitch] = dd.numa;
  }
  for (int k : nics_) {
    const auto& nic = d_.nics[static_cast<size_t>(k)];
    switchNuma.emplace(nic.pciSwitch, nic.numa);
  }
  std::set<int> numas;
  for (const auto& [sw, numa] : switchNuma) numas.insert(numa);

  topo::XmlDocument doc;
  doc.source = "<topo_neuron " + d_.name + ">";
  doc.root = std::make_unique<topo::XmlNode>("system");
  if (auto st = check(doc.root->setInt("version", 1)); !st) return st.take_error();
  // The per-link width travels with the XML, so any reader (the host, a
  // dump loaded as NCCL_TOPO_FILE) weighs the links alike.
  if (auto st = check(doc.root->setFloat("nvlinkwidth", linkWidthForSm(smTag(d_.platform)))); !st) {
    return st.take_error();
  }
  for (int numa : numas) {
    auto cpu = doc.root->addChild("cpu");
    if (!cpu) return check(cpu.take_error()).take_error();
    for (auto st :
         {(*cpu)->setInt("numaid", numa), (*cpu)->setAttribute("arch", "x86_64"),
          (*cpu)->setAttribute("vendor", facts_.vendor),
          (*cpu)->setInt("familyid", facts_.familyId), (*cpu)->setInt("modelid", facts_.modelId)}) {
      if (auto c = check(std::move(st)); !c) return c.take_error();
    }
    for (const auto& [sw, swNuma] : switchNuma) {
      if (swNuma != numa) continue;
      if (auto st = addSwitch(**cpu, sw); !st) return st.take_error();
    }
  }
  return doc;
}

}  // namespace

NodeShare fullShare(const PlatformDescription& d, int nDevices, int firstRank, int nRanks,
                    int nNodes, int node) {
  NodeShare s;
  for (const auto& v : d.vcores) {
    if (v.device >= nDevices) continue;
    s.ranks.push_back(firstRank + static_cast<int>(s.ranks.size()));
    s.devices.push_back(v.device);
    s.cores.push_back(v.id - v.device * d.vcoresPerDevice);
  }
  s.nRanks = nRanks < 0 ? firstRank + static_cast<int>(s.ranks.size()) : nRanks;
  s.nNodes = nNodes;
  s.node = node;
  return s;
}

int smTag(Platform p) {
  switch (p) {
    case Platform::Emu: return 1;
    case Platform::Sunda: return 2;
    case Platform::Cayman: return 3;
    case Platform::Mariana: return 4;
  }
  return 0;
}

float linkWidthForSm(int sm) {
  switch (sm) {
    case 1: return 5.0F;
    case 2: return 24.0F;
    case 3: return 32.0F;
    case 4: return 48.0F;
    default: return 0.0F;
  }
}

topo::SystemOptions systemOptions(const PlatformDescription& d) {
  topo::SystemOptions o;
  o.nvlinkWidth = linkWidthForSm(smTag(d.platform));
  return o;
}

int linkCount(EdgeLocality locality, bool sameDevice) {
  if (sameDevice) return locality == EdgeLocality::SharedMemory ? 16 : 8;
  switch (locality) {
    case EdgeLocality::RemoteMLA:     // C2C NeuronLink
    case EdgeLocality::SharedMemory:  // emulated devices sharing host memory
      return 4;
    default:  // a NeuronSwitch hop
      return 2;
  }
}

std::string switchBusId(int s) { return busId(0x10 + s, 0); }
std::string vcoreBusId(int device, int core) { return busId(0x40 + device, core); }
std::string nicBusId(int nic) { return busId(0x80 + nic, 0); }

Result<std::vector<int>> shareVcores(const PlatformDescription& d, const NodeShare& s,
                                     bool disableVerify) {
  const std::string where = "topo_neuron (platform " + d.name + "): ";
  const size_t n = s.ranks.size();
  if (n == 0) return fail(NRT_INVALID, where + "the node has no local ranks");
  if (s.devices.size() != n || s.cores.size() != n)
    return fail(NRT_INVALID, where + "ranks, devices and cores must list one entry per local rank");
  if (s.nNodes < 1 || s.node < 0 || s.node >= s.nNodes)
    return fail(NRT_INVALID, where + "node " + std::to_string(s.node) + " is outside [0, " +
                                 std::to_string(s.nNodes) + ")");
  if (static_cast<int>(n) > s.nRanks)
    return fail(NRT_INVALID, where + std::to_string(n) + " local ranks but the communicator has " +
                                 std::to_string(s.nRanks));
  for (size_t i = 0; i < n; ++i) {
    if (s.ranks[i] < 0 || s.ranks[i] >= s.nRanks)
      return fail(NRT_INVALID, where + "local rank " + std::to_string(i) + " is global rank " +
                                   std::to_string(s.ranks[i]) + ", outside [0, " +
                                   std::to_string(s.nRanks) + ")");
  }
  if (std::set<int>(s.ranks.begin(), s.ranks.end()).size() != n)
    return fail(NRT_INVALID, where + "a global rank is listed twice among the local ranks");
  // A ring across nodes leaves and enters each node through a NIC; a
  // platform without one (Inf2) cannot be part of a multi-node communicator.
  if (s.nNodes > 1 && d.nics.empty())
    return fail(NRT_INVALID, where + "the communicator spans " + std::to_string(s.nNodes) +
                                 " nodes, but this platform has no NIC to leave the node "
                                 "through; use one node per communicator");
  VerifyInput vin;
  vin.rankDevices = s.devices;
  for (const auto& dev : d.devices) vin.presentDevices.push_back(dev.id);
  vin.disabled = disableVerify;
  if (auto st = verifyTopology(platformSpec(d.variant), vin); !st) return st.take_error();
  if (auto st = checkRanksFitCores(static_cast<int>(n), d.nVcores()); !st) return st.take_error();
  std::vector<int> out;
  for (size_t i = 0; i < n; ++i) {
    const int dev = s.devices[i];
    const int core = s.cores[i];
    // Reached with verification disabled: the device check was skipped.
    if (dev < 0 || dev >= d.nDevices)
      return fail(NRT_INVALID, where + "rank " + std::to_string(s.ranks[i]) + " is on device " +
                                   std::to_string(dev) + ", but the node has devices 0.." +
                                   std::to_string(d.nDevices - 1));
    if (core < 0 || core >= d.vcoresPerDevice)
      return fail(NRT_INVALID, where + "rank " + std::to_string(s.ranks[i]) + " is on core " +
                                   std::to_string(core) + " of device " + std::to_string(dev) +
                                   ", but a device has " + std::to_string(d.vcoresPerDevice) +
                                   " logical cores at LNC " + std::to_string(d.lnc));
    out.push_back(dev * d.vcoresPerDevice + core);
  }
  auto unique = vcoresFromIds(out);  // two ranks on one vcore is an error there
  if (!unique) return unique.take_error();
  return out;
}

Result<topo::XmlDocument> synthesizeSystem(const PlatformDescription& d, const NodeShare& share,
                                           bool disableVerify) {
  auto vcores = shareVcores(d, share, disableVerify);
  if (!vcores) return vcores.take_error();
  return Synth(d, share, std::move(*vcores)).run();
}

Result<std::string> synthesizeSystemXml(const PlatformDescription& d, const NodeShare& share,
                                        bool disableVerify) {
  auto doc = synthesizeSystem(d, share, disableVerify);
  if (!doc) return doc.take_error();
  return topo::writeXml(*doc->root);
}

}  // namespace nccom::topo_neuron
