#include "transport/preferred_nic.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>

namespace nccom::transport {

std::optional<std::string> pci_address(const std::string& sysfs_path) {
  // Walk the components from the end: "0000:10:1c.0" is 4 hex, ':', 2 hex,
  // ':', 2 hex, '.', 1 digit.
  size_t end = sysfs_path.size();
  while (end > 0) {
    while (end > 0 && sysfs_path[end - 1] == '/') --end;
    const size_t begin = sysfs_path.rfind('/', end == 0 ? 0 : end - 1);
    const size_t from = begin == std::string::npos ? 0 : begin + 1;
    const std::string c = sysfs_path.substr(from, end - from);
    bool ok = c.size() == 12 && c[4] == ':' && c[7] == ':' && c[10] == '.';
    for (size_t i = 0; ok && i < c.size(); ++i) {
      if (i == 4 || i == 7 || i == 10) continue;
      ok = std::isxdigit(static_cast<unsigned char>(c[i])) != 0;
    }
    if (ok) return c;
    if (begin == std::string::npos) break;
    end = begin;
  }
  return std::nullopt;
}

Result<const NetDevice*> preferred_nic(const NicTable& table, uint32_t device, uint32_t rid) {
  if (table.nics.empty()) {
    return make_error(NRT_INVALID, "no network device is known (the selected net reports none)");
  }
  std::vector<const LocalDevice*> devs;
  for (const LocalDevice& d : table.devices) devs.push_back(&d);
  std::sort(devs.begin(), devs.end(), [](const LocalDevice* x, const LocalDevice* y) {
    return x->bus_id != y->bus_id ? x->bus_id < y->bus_id : x->device < y->device;
  });
  size_t pos = devs.size();
  for (size_t i = 0; i < devs.size(); ++i) {
    if (devs[i]->device == device && devs[i]->rid == rid) pos = i;
  }
  if (pos == devs.size()) {
    std::string known;
    for (const LocalDevice* d : devs) {
      known += (known.empty() ? "" : ", ") + std::string("(") + std::to_string(d->device) + ", " +
               std::to_string(d->rid) + ")";
    }
    return make_error(NRT_INVALID, "device " + std::to_string(device) + " with routing id " +
                                       std::to_string(rid) +
                                       " is no device of a communicator built on this host "
                                       "(known (device, rid): " +
                                       known + ")");
  }
  std::vector<const NetDevice*> nics;
  for (const NetDevice& n : table.nics) nics.push_back(&n);
  std::sort(nics.begin(), nics.end(), [](const NetDevice* x, const NetDevice* y) {
    const auto ax = pci_address(x->pci_path), ay = pci_address(y->pci_path);
    if (ax.has_value() != ay.has_value()) return ax.has_value();
    if (ax && *ax != *ay) return *ax < *ay;
    return x->index < y->index;
  });
  return nics[pos * nics.size() / devs.size()];
}

Status write_bdf(const NetDevice& nic, char* bdf_out, size_t bdf_len) {
  const auto bdf = pci_address(nic.pci_path);
  if (!bdf) {
    return make_error(NRT_FAILURE, "net device " + std::to_string(nic.index) + " (" + nic.name +
                                       ") has no PCI address (pciPath \"" + nic.pci_path + "\")");
  }
  if (bdf_out == nullptr || bdf_len < bdf->size() + 1) {
    return make_error(NRT_INVALID, "bdf_len " + std::to_string(bdf_len) + " is too short for \"" +
                                       *bdf + "\" (needs " + std::to_string(bdf->size() + 1) +
                                       " bytes with the NUL)");
  }
  std::memcpy(bdf_out, bdf->c_str(), bdf->size() + 1);
  return {};
}

namespace {
std::mutex g_mutex;
NicTable g_table;
}  // namespace

void publish_nic_table(const NicTable& table) {
  std::lock_guard lock(g_mutex);
  for (const LocalDevice& d : table.devices) {
    auto same = [&d](const LocalDevice& k) { return k.device == d.device && k.rid == d.rid; };
    auto it = std::find_if(g_table.devices.begin(), g_table.devices.end(), same);
    if (it == g_table.devices.end()) {
      g_table.devices.push_back(d);
    } else {
      *it = d;
    }
  }
  if (!table.nics.empty()) g_table.nics = table.nics;
}

Result<NetDevice> preferred_nic_of_process(uint32_t device, uint32_t rid) {
  std::lock_guard lock(g_mutex);
  if (g_table.devices.empty()) {
    return make_error(NRT_INVALID,
                      "no communicator was built in this process yet "
                      "(neuronBuildGraphComm learns the devices and NICs)");
  }
  auto nic = preferred_nic(g_table, device, rid);
  if (!nic) return nic.take_error();
  return **nic;
}

}  // namespace nccom::transport
