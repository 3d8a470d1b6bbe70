// The standard fake host of the detection tests, and a readable rendering
// of a HostDescription so a mismatch shows as a text diff.
//
// Standard host: 2 NUMA nodes (0: CPUs 0-3, 1: CPUs 4-7).
//   pci0000:00  0000:00:00.0 host bridge        (dropped: not on a kept path)
//               0000:00:01.0 root port, NUMA 0
//                 0000:01:00.0 switch upstream port
//                   0000:02:00.0 downstream port -> 0000:03:00.0 Neuron trn1
//                   0000:02:01.0 downstream port -> 0000:04:00.0 Neuron trn1
//               0000:00:02.0 NVMe               (dropped: storage)
//               0000:00:03.0 root port, empty   (dropped: nothing kept below)
//   pci0000:80  0000:80:01.0 root port, NUMA 1
//                 0000:81:00.0 EFA NIC (class 0x020000), RDMA device rdmap129s0
#pragma once

#include "detect.h"
#include "fake_sysfs.h"

#include <string>

namespace topo_nccl_test {

inline constexpr const char* kSwitchUp = "pci0000:00/0000:00:01.0/0000:01:00.0";
inline constexpr const char* kNeuronA =
    "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0";
inline constexpr const char* kNeuronB =
    "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0";
inline constexpr const char* kEfa = "pci0000:80/0000:80:01.0/0000:81:00.0";

// Builds the standard host in `sysfs` and returns its cpuinfo path.
std::string buildStandardHost(const FakeSysfs& sysfs);

// The listing the fake NIC source returns for the standard host.
nccom::topo_nccl::RdmaListing standardNicListing();

// What detection must report for the standard host, written by hand.
nccom::topo_nccl::HostDescription expectedStandardHost();

std::string render(const nccom::topo_nccl::HostDescription& host);
std::string render(const nccom::topo_nccl::PciDevice& device, int depth = 0);

}  // namespace topo_nccl_test
