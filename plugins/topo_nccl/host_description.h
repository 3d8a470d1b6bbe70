// What host detection found, in a neutral form: plain C++ values that the
// topology XML writer later turns into `<cpu>`, `<pci>`, `<nic>`/`<net>`. Text
// attributes keep sysfs's own spelling (class "0x060400", vendor "0x1d0f", link
// speed "16.0 GT/s PCIe") because NCCL's XML carries them as text; only what
// NCCL computes (Mbps, ids) is numeric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::topo_nccl {

// The `<cpu>` attributes that are the same for every NUMA node of a host.
struct CpuInfo {
  std::string arch;    // NCCL's names: "x86_64", "arm64", "ppc64"; else uname's machine
  std::string vendor;  // x86 vendor_id ("GenuineIntel", "AuthenticAMD"); empty elsewhere
  int familyId = -1;   // x86 displayed family (family + extended family); -1 unknown
  int modelId = -1;    // x86 displayed model (model + extended model << 4); -1 unknown

  bool operator==(const CpuInfo&) const = default;
};

// Why a PCI device was kept (docs/decisions/topo-nccl.md, "Which PCI functions are kept").
enum class PciKind {
  Bridge,       // class 0x0604, kept only with a kept device below it
  Network,      // class 0x02xxxx
  Display,      // class 0x03xxxx
  Accelerator,  // class 0x12xxxx (processing accelerators)
  Neuron,       // vendor 0x1d0f with a Neuron device id, whatever its class
  Path,         // any other class on the way up to a kept device
};
const char* pciKindName(PciKind kind);

struct PciDevice {
  std::string busId;            // "0000:3b:00.0", as sysfs names the device
  std::string classCode;        // "0x060400"
  std::string vendor;           // "0x1d0f"
  std::string device;           // "0x7164"
  std::string subsystemVendor;  // empty when sysfs has no such file
  std::string subsystemDevice;
  std::string linkSpeed;  // max_link_speed, else current_link_speed; may be empty
  std::string linkWidth;  // max_link_width, else current_link_width; may be empty
  int numaNode = -1;      // sysfs numa_node; -1 when the kernel does not know
  PciKind kind = PciKind::Path;
  std::vector<PciDevice> children;  // directly downstream, ordered by busId

  bool operator==(const PciDevice&) const = default;
};

// A NUMA node is a `<cpu>`; the PCI trees whose root sits on it hang below it.
struct NumaNode {
  int id = -1;
  std::string cpulist;   // "0-3,8-11", as sysfs prints it
  std::string affinity;  // sysfs cpumap ("00000000,0000000f"): NCCL's `affinity`
  std::vector<PciDevice> pci;

  bool operator==(const NumaNode&) const = default;
};

// A Neuron device found on the PCI bus (listed again here so callers need
// not walk the trees; the same device is also in its PCI tree).
struct NeuronDevice {
  std::string busId;
  std::string device;      // PCI device id, "0x7164"
  std::string generation;  // "inf1", "trn1", "inf2", "trn2", "trn3"
  int numaNode = -1;       // the NUMA node its tree is attached to

  bool operator==(const NeuronDevice&) const = default;
};

struct NicPort {
  int port = 0;           // 1-based, as verbs numbers them
  std::string state;      // "ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER", "NOP", "UNKNOWN(n)"
  std::string linkLayer;  // "InfiniBand", "Ethernet", "Unspecified"
  int speedMbps = 0;      // active speed x active width; 0 when verbs reports an unknown code

  bool operator==(const NicPort&) const = default;
};

// One RDMA device: becomes a `<nic>` with one `<net>` per usable port.
struct Nic {
  std::string name;   // "rdmap16s27", "mlx5_0"
  uint64_t guid = 0;  // node GUID, host byte order
  std::string busId;  // PCI function behind /sys/class/infiniband/<name>/device; empty if unknown
  int maxQp = 0;      // device attribute max_qp (an upper bound for `maxconn`)
  std::vector<NicPort> ports;

  bool operator==(const Nic&) const = default;
};

struct HostDescription {
  CpuInfo cpu;
  std::vector<NumaNode> numaNodes;          // ascending id
  std::vector<NeuronDevice> neuronDevices;  // ascending busId
  std::vector<Nic> nics;                    // ascending name
  // Why a list is empty ("no RDMA devices: ...", "no Neuron devices: ...");
  // empty when the list is not.
  std::string nicReason;
  std::string neuronReason;
  // Everything detection skipped or assumed, one line each, naming the file
  // and the rule. Each is also logged at INFO when it is recorded.
  std::vector<std::string> notes;
};

}  // namespace nccom::topo_nccl
