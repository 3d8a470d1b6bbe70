// neuronPreferredNcRidNic / neuronPreferredNcRidNicBdf (export-table slots
// 14-15; docs/decisions/transport.md, "neuronPreferredNcRidNic[Bdf]"): the network device
// nearest to a local Neuron device, named by (a = runtime device id, b = routing id, the `rid`
// neuronGetCommInfo reports for it). The answer comes from what the comm layer
// learnt when it built a communicator in this process: the local devices'
// PCI bus ids (peer records of ranks on this host) and the selected net's
// devices with their PCI paths. Without a built communicator: an error.
#pragma once

#include <nccom/util/result.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nccom::transport {

struct LocalDevice {
  uint32_t device = 0;  // runtime device id (enc_peer_info.neuron_dev)
  uint32_t rid = 0;     // routing id (enc_peer_info.rid, the MLA index)
  int64_t bus_id = 0;   // PCI bus id from the peer record
};

struct NetDevice {
  int index = 0;  // the net plugin's device index
  std::string name;
  std::string pci_path;  // sysfs path; empty when the device has none (loopback)
};

struct NicTable {
  std::vector<LocalDevice> devices;
  std::vector<NetDevice> nics;
};

// The PCI address "dddd:bb:dd.f" of a sysfs device path (its last component
// of that form), or nullopt.
std::optional<std::string> pci_address(const std::string& sysfs_path);

// Devices in PCI order (bus id, then device id), NICs in PCI order (address;
// those without one after, by index): device i of D gets NIC floor(i*N/D).
Result<const NetDevice*> preferred_nic(const NicTable& table, uint32_t device, uint32_t rid);

// Writes the NIC's PCI address, NUL-terminated, into bdf_out (bdf_len bytes:
// at least 13). Errors: no PCI address (NRT_FAILURE), a short buffer
// (NRT_INVALID, nothing written).
Status write_bdf(const NetDevice& nic, char* bdf_out, size_t bdf_len);

// The process-wide table: devices are added by every communicator built here
// (ranks on this host), the NIC list is the latest built communicator's net.
void publish_nic_table(const NicTable& table);
Result<NetDevice> preferred_nic_of_process(uint32_t device, uint32_t rid);

}  // namespace nccom::transport
