#include "host_xml.h"

#include <map>
#include <vector>

namespace nccom::topo_nccl {
namespace {

using topo::XmlNode;

struct NetEntry {
  const Nic* nic;
  const NicPort* port;
  int dev;
};

class HostXmlWriter {
 public:
  HostXmlWriter(const HostDescription& host, const LocalShare& share)
      : host_(host), share_(share) {}

  Result<topo::XmlDocument> run();

 private:
  Status addPci(XmlNode& parent, const PciDevice& pci);
  Status addGpus(XmlNode& pciXml, const PciDevice& pci, const std::vector<int>& locals);
  Status addNic(XmlNode& parent, const std::vector<NetEntry>& nets, const std::string& pciVendor);
  static Status setIfSet(XmlNode& x, const char* key, const std::string& value) {
    return value.empty() ? Status{} : x.setAttribute(key, value);
  }

  const HostDescription& host_;
  const LocalShare& share_;
  std::map<std::string, std::vector<int>> localsByBusId_;     // device bus id -> local indexes
  std::map<std::string, std::vector<NetEntry>> netsByBusId_;  // NIC bus id -> its nets
  std::map<std::string, bool> placed_;                        // NIC bus ids written in a tree
};

#define TRY(expr)                            \
  do {                                       \
    if (auto st_ = (expr); !st_) return st_; \
  } while (0)

Status HostXmlWriter::addGpus(XmlNode& pciXml, const PciDevice& pci,
                              const std::vector<int>& locals) {
  const NeuronDevice* dev = nullptr;
  for (const auto& d : host_.neuronDevices) {
    if (d.busId == pci.busId) dev = &d;
  }
  const int sm = dev != nullptr ? smTagForGeneration(dev->generation) : 0;
  auto addGpu = [&](XmlNode& parent, int local) -> Status {
    auto gpu = parent.addChild("gpu");
    if (!gpu) return gpu.take_error();
    TRY((*gpu)->setInt("dev", local));
    TRY((*gpu)->setInt("sm", sm));
    TRY((*gpu)->setInt("rank", share_.ranks[static_cast<std::size_t>(local)]));
    return (*gpu)->setInt("gdr", 1);
  };
  if (locals.size() == 1) return addGpu(pciXml, locals[0]);
  // Several cores of one device: the device becomes their upstream port
  // (no class, so it reads as a PCI switch) and each core gets its own <pci>.
  pciXml.removeAttribute("class");
  if (locals.size() > 15) {
    return make_error(NRT_INVALID, "host XML: " + std::to_string(locals.size()) +
                                       " local ranks on Neuron device " + pci.busId +
                                       ", at most 15 can be described");
  }
  for (std::size_t k = 0; k < locals.size(); ++k) {
    auto core = pciXml.addChild("pci");
    if (!core) return core.take_error();
    TRY((*core)->setAttribute("busid", coreBusId(pci.busId, static_cast<int>(k))));
    TRY(setIfSet(**core, "class", pci.classCode));
    TRY(setIfSet(**core, "vendor", pci.vendor));
    TRY(setIfSet(**core, "device", pci.device));
    TRY(setIfSet(**core, "link_speed", pci.linkSpeed));
    TRY(setIfSet(**core, "link_width", pci.linkWidth));
    TRY(addGpu(**core, locals[k]));
  }
  return {};
}

Status HostXmlWriter::addNic(XmlNode& parent, const std::vector<NetEntry>& nets,
                             const std::string& pciVendor) {
  auto nic = parent.addChild("nic");
  if (!nic) return nic.take_error();
  for (const NetEntry& e : nets) {
    auto net = (*nic)->addChild("net");
    if (!net) return net.take_error();
    XmlNode& x = **net;
    TRY(x.setAttribute("name", e.nic->name));
    TRY(x.setInt("dev", e.dev));
    if (e.port->speedMbps > 0) TRY(x.setInt("speed", e.port->speedMbps));
    TRY(x.setInt("port", e.port->port));
    TRY(x.setHex("guid", e.nic->guid));
    // EFA (Amazon's NICs) reads Neuron device memory directly; others we cannot tell.
    TRY(x.setInt("gdr", pciVendor == "0x1d0f" ? 1 : 0));
  }
  return {};
}

Status HostXmlWriter::addPci(XmlNode& parent, const PciDevice& pci) {
  auto child = parent.addChild("pci");
  if (!child) return child.take_error();
  XmlNode& x = **child;
  TRY(x.setAttribute("busid", pci.busId));
  TRY(setIfSet(x, "class", pci.classCode));
  TRY(setIfSet(x, "vendor", pci.vendor));
  TRY(setIfSet(x, "device", pci.device));
  TRY(setIfSet(x, "subsystem_vendor", pci.subsystemVendor));
  TRY(setIfSet(x, "subsystem_device", pci.subsystemDevice));
  TRY(setIfSet(x, "link_speed", pci.linkSpeed));
  TRY(setIfSet(x, "link_width", pci.linkWidth));
  if (auto it = localsByBusId_.find(pci.busId); it != localsByBusId_.end()) {
    return addGpus(x, pci, it->second);
  }
  if (auto it = netsByBusId_.find(pci.busId); it != netsByBusId_.end()) {
    placed_[pci.busId] = true;
    return addNic(x, it->second, pci.vendor);
  }
  for (const PciDevice& sub : pci.children) TRY(addPci(x, sub));
  return {};
}

Result<topo::XmlDocument> HostXmlWriter::run() {
  for (int i = 0; i < share_.nLocal() && !share_.devices.empty(); ++i) {
    const int d = share_.devices[static_cast<std::size_t>(i)];
    if (d >= 0 && d < static_cast<int>(host_.neuronDevices.size())) {
      localsByBusId_[host_.neuronDevices[static_cast<std::size_t>(d)].busId].push_back(i);
    }
  }
  int dev = 0;
  std::vector<NetEntry> unplaced;
  for (const Nic& nic : host_.nics) {
    for (const NicPort& port : nic.ports) {
      if (port.state != "ACTIVE")
        continue;  // as NCCL's IB transport: only active ports are devices
      netsByBusId_[nic.busId].push_back({&nic, &port, dev++});
    }
  }
  topo::XmlDocument doc;
  doc.source = "host detection";
  doc.root = std::make_unique<XmlNode>("system");
  if (auto st = doc.root->setInt("version", 1); !st) return st.take_error();
  for (const NumaNode& numa : host_.numaNodes) {
    auto cpu = doc.root->addChild("cpu");
    if (!cpu) return cpu.take_error();
    XmlNode& x = **cpu;
    for (auto st : {x.setInt("numaid", numa.id), setIfSet(x, "affinity", numa.affinity),
                    setIfSet(x, "arch", host_.cpu.arch), setIfSet(x, "vendor", host_.cpu.vendor)}) {
      if (!st) return st.take_error();
    }
    if (host_.cpu.familyId >= 0) {
      if (auto st = x.setInt("familyid", host_.cpu.familyId); !st) return st.take_error();
    }
    if (host_.cpu.modelId >= 0) {
      if (auto st = x.setInt("modelid", host_.cpu.modelId); !st) return st.take_error();
    }
    for (const PciDevice& root : numa.pci) {
      if (auto st = addPci(x, root); !st) return st.take_error();
    }
  }
  // NICs whose PCI function is not in a kept tree hang from the first NUMA
  // node, as upstream places a NIC it cannot locate.
  for (const auto& [busId, nets] : netsByBusId_) {
    if (placed_.count(busId) != 0 || doc.root->children().empty()) continue;
    if (auto st = addNic(*doc.root->children().front(), nets, ""); !st) return st.take_error();
  }
  return doc;
}

#undef TRY

}  // namespace

int smTagForGeneration(const std::string& generation) {
  if (generation == "trn1" || generation == "inf2") return 2;
  if (generation == "trn2") return 3;
  if (generation == "trn3") return 4;
  return 0;
}

std::string coreBusId(const std::string& deviceBusId, int slot) {
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string(1, kHex[(slot + 1) & 0xf]) + deviceBusId;
}

Result<topo::XmlDocument> hostToXml(const HostDescription& host, const LocalShare& share) {
  return HostXmlWriter(host, share).run();
}

}  // namespace nccom::topo_nccl
