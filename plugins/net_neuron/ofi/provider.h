// Provider discovery: which libfabric provider, which NICs, grouped into the
// devices the ABI exposes, and what each can do.
#pragma once

#include "common.h"

#include <string>
#include <vector>

namespace nccom::ofi {

// What a NIC's fi_info lets the data path do, decoded once.
struct NicCaps {
  bool rma = false;          // getMrKey / iread / iwrite / iwriteInline usable
  bool mr_local = false;     // FI_MR_LOCAL: local buffers need a descriptor
  bool virt_addr = false;    // FI_MR_VIRT_ADDR: remote addresses are virtual
  bool prov_key = false;     // FI_MR_PROV_KEY: the provider picks MR keys
  bool mr_endpoint = false;  // FI_MR_ENDPOINT: bind MRs to the endpoint, then enable
  bool manual_progress = true;
  size_t inject_size = 0;
};

NicCaps decode_caps(const fi_info& info);

// One ABI device: one NIC, or `rails` NICs grouped together. A comm opens its
// endpoint on one rail of its device, round-robin over the rails.
struct Device {
  std::string name;      // domain name of the first rail, e.g. "eth0", "rdmap16s27"
  std::string pci_path;  // empty when the NIC has no PCI identity (tcp on lo, shm)
  uint64_t guid = 0;
  int speed_mbps = 0;  // sum over the rails
  NicCaps caps;        // of the first rail (rails of one provider agree)
  std::vector<InfoPtr> rails;
};

struct Discovery {
  std::string provider;  // e.g. "efa", "tcp;ofi_rxm", "shm"
  std::string fabric;
  int nics = 0;
  std::vector<Device> devices;
};

// net.efa as the host hands it over (config_get, net_config.cc): "yes",
// "no" or "auto" (also for anything else, and when the host has no such
// knob). With the default provider filter "efa" and no EFA device here
// (nccom/util/efa.h), finding no provider is expected and logged at INFO;
// otherwise it is a WARN.
void set_efa_mode(const char* mode);

// fi_getinfo for FI_EP_RDM with tagged messages (+RMA when available), the
// provider filter (FI_PROVIDER as libfabric reads it, else "efa"), the EFA
// version gate, dedup by domain name, grouping into `rails`-wide devices.
// Logs what it selected or why nothing was eligible.
Status discover(int rails, Discovery* out);

}  // namespace nccom::ofi
