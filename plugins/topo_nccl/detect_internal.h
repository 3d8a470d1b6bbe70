// The pieces detectHost is made of, one per file, exposed for the tests.
#pragma once

#include "host_description.h"
#include "notes.h"

#include <nccom/util/result.h>

#include <string>
#include <vector>

namespace nccom::topo_nccl {

// cpu_numa.cc. CPU identity never fails: unknown fields stay empty / -1.
CpuInfo detectCpu(const std::string& cpuinfoPath, const std::string& machine, Notes& notes);
// NUMA nodes in ascending id, with empty `pci`. Without any usable node
// directory, one node 0 covering the online CPUs (a non-NUMA kernel).
std::vector<NumaNode> detectNuma(const std::string& sysfsRoot, Notes& notes);
// "0-2,5" -> sysfs cpumap text ("00000027"); errors past kMaxCpus.
inline constexpr long kMaxCpus = 8192;  // Linux's largest NR_CPUS
Result<std::string> cpuListToMask(const std::string& cpulist);

// pci_tree.cc. The kept PCI trees, roots ordered by busId. numaNode of each
// root is what sysfs says (-1 unknown); detectHost places the roots.
std::vector<PciDevice> detectPci(const std::string& sysfsRoot, Notes& notes);
// Upper bound on directory entries read from one sysfs directory.
inline constexpr std::size_t kMaxDirEntries = 65536;

}  // namespace nccom::topo_nccl
