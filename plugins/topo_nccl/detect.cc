// detectHost: CPU, NUMA nodes, PCI trees placed on their NUMA node, the
// Neuron devices among them, and the RDMA NICs.
#include "detect.h"

#include "detect_internal.h"

#include <nccom/util/log.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace nccom::topo_nccl {
namespace fs = std::filesystem;

void Notes::add(std::string line) {
  NCCOM_SDK_INFO(NCCOM_SUBSYS_INIT | NCCOM_SUBSYS_GRAPH, "TOPO host detection: %s", line.c_str());
  lines_.push_back(std::move(line));
}

std::string neuronGeneration(const std::string& vendor, const std::string& device) {
  // Amazon's PCI vendor id also covers EFA and ENA, so the device id decides.
  // Ids as the Neuron kernel driver (aws-neuron-driver, neuron_device.h)
  // binds them.
  if (vendor != "0x1d0f") return {};
  static const struct {
    const char* device;
    const char* generation;
  } kNeuronIds[] = {
      {"0x7064", "inf1"}, {"0x7065", "inf1"}, {"0x7066", "inf1"},
      {"0x7067", "inf1"}, {"0x7164", "trn1"}, {"0x7264", "inf2"},
      {"0x7364", "trn2"}, {"0x7564", "trn3"}, {"0x7565", "trn3"},
  };
  for (const auto& id : kNeuronIds)
    if (device == id.device) return id.generation;
  return {};
}

namespace {

// The NUMA node a PCI tree hangs from: its root's numa_node when that names
// a detected node, else the lowest node (single-socket VMs report -1).
NumaNode& placeRoot(std::vector<NumaNode>& nodes, const PciDevice& root, Notes& notes) {
  for (NumaNode& node : nodes)
    if (node.id == root.numaNode) return node;
  NumaNode& fallback = nodes.front();
  notes.add("PCI " + root.busId + ": numa_node " + std::to_string(root.numaNode) +
            (root.numaNode < 0 ? " (unknown)" : " names no detected NUMA node") +
            "; attached to NUMA node " + std::to_string(fallback.id));
  return fallback;
}

void collectNeuron(const PciDevice& device, int numaNode, std::vector<NeuronDevice>& out) {
  if (device.kind == PciKind::Neuron)
    out.push_back(
        {device.busId, device.device, neuronGeneration(device.vendor, device.device), numaNode});
  for (const PciDevice& child : device.children) collectNeuron(child, numaNode, out);
}

}  // namespace

Result<HostDescription> detectHost(const DetectOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(options.sysfsRoot, ec))
    return make_error(NRT_FAILURE, "host detection: sysfs root " + options.sysfsRoot +
                                       " is not a directory" +
                                       (ec ? " (" + ec.message() + ")" : std::string()));
  Notes notes;
  HostDescription host;
  host.cpu = detectCpu(options.cpuinfoPath, options.machine, notes);
  host.numaNodes = detectNuma(options.sysfsRoot, notes);  // never empty
  for (PciDevice& root : detectPci(options.sysfsRoot, notes)) {
    NumaNode& node = placeRoot(host.numaNodes, root, notes);
    node.pci.push_back(std::move(root));
  }
  for (const NumaNode& node : host.numaNodes)
    for (const PciDevice& root : node.pci) collectNeuron(root, node.id, host.neuronDevices);
  std::sort(host.neuronDevices.begin(), host.neuronDevices.end(),
            [](const NeuronDevice& a, const NeuronDevice& b) { return a.busId < b.busId; });
  if (host.neuronDevices.empty()) {
    host.neuronReason =
        "no Neuron devices: no PCI function with vendor 0x1d0f and a Neuron device id";
    NCCOM_SDK_INFO(NCCOM_SUBSYS_INIT | NCCOM_SUBSYS_GRAPH, "TOPO host detection: %s",
                   host.neuronReason.c_str());
  }

  std::unique_ptr<NicSource> ibverbs;
  const NicSource* source = options.nicSource;
  if (source == nullptr) {
    ibverbs = makeIbverbsNicSource();
    source = ibverbs.get();
  }
  host.nics = describeNics(source->list(), options.sysfsRoot, notes, &host.nicReason);
  if (host.nics.empty())
    NCCOM_SDK_INFO(NCCOM_SUBSYS_INIT | NCCOM_SUBSYS_NET, "TOPO host detection: %s",
                   host.nicReason.c_str());
  host.notes = notes.take();
  return host;
}

}  // namespace nccom::topo_nccl
