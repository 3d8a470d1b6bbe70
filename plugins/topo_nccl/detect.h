// Host detection for the NCCL-style topology backend (the sysfs augmentation
// NCCL's ncclTopoGetSystem does around its XML). Reads NUMA nodes and CPU
// identity, the PCI trees that lead to network, display, accelerator and Neuron
// functions, and the RDMA NICs, into a HostDescription that the XML writer
// serialises later.
#pragma once

#include "host_description.h"
#include "nics.h"

#include <nccom/util/result.h>

#include <string>

namespace nccom::topo_nccl {

struct DetectOptions {
  // Root of the sysfs tree; tests point it at a fake tree.
  std::string sysfsRoot = "/sys";
  // Where CPU vendor/family/model come from (the first processor block).
  std::string cpuinfoPath = "/proc/cpuinfo";
  // uname's machine ("x86_64", "aarch64"); empty: ask uname(2).
  std::string machine;
  // Where NICs come from; null: libibverbs. Not owned; must outlive the call.
  const NicSource* nicSource = nullptr;
};

// Errors only when the sysfs root itself is unusable (missing, not a
// directory). Everything below it that is missing or malformed is skipped
// with a note naming the file and the rule (HostDescription::notes), so a
// partial description is still returned.
Result<HostDescription> detectHost(const DetectOptions& options);

// The Neuron generation of an Amazon (0x1d0f) PCI device id ("0x7164" ->
// "trn1"), or empty when the id is not a Neuron device (EFA, ENA, ...).
std::string neuronGeneration(const std::string& vendor, const std::string& device);

}  // namespace nccom::topo_nccl
