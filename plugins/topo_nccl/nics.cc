// Verbs codes to NCCL's NIC attributes, and each RDMA device's PCI function.
#include "nics.h"

#include "sysfs_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace nccom::topo_nccl {
namespace fs = std::filesystem;

int verbsSpeedMbps(int activeSpeed, int activeWidth) {
  // Per-lane signalling rate in Mbps for each active_speed bit (IBTA; the
  // same table NCCL's IB transport uses): SDR, DDR, QDR, FDR10, FDR, EDR,
  // HDR, NDR.
  int lane = 0;
  switch (activeSpeed) {
    case 1: lane = 2500; break;
    case 2: lane = 5000; break;
    case 4: lane = 10000; break;
    case 8: lane = 10000; break;
    case 16: lane = 14000; break;
    case 32: lane = 25000; break;
    case 64: lane = 50000; break;
    case 128: lane = 100000; break;
    default: return 0;
  }
  // active_width bits: 1x, 4x, 8x, 12x, 2x.
  int lanes = 0;
  switch (activeWidth) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return 0;
  }
  return lane * lanes;
}

std::string verbsPortStateName(int state) {
  switch (state) {
    case 0: return "NOP";
    case 1: return "DOWN";
    case 2: return "INIT";
    case 3: return "ARMED";
    case 4: return "ACTIVE";
    case 5: return "ACTIVE_DEFER";
    default: return "UNKNOWN(" + std::to_string(state) + ")";
  }
}

std::string verbsLinkLayerName(int linkLayer) {
  switch (linkLayer) {
    case 0: return "Unspecified";
    case 1: return "InfiniBand";
    case 2: return "Ethernet";
    default: return "UNKNOWN(" + std::to_string(linkLayer) + ")";
  }
}

namespace {

// Kernel RDMA device names are short identifiers (IB_DEVICE_NAME_MAX = 64);
// anything else could walk out of /sys/class/infiniband.
bool isUsableName(const std::string& name) {
  if (name.empty() || name.size() >= 64 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

// The PCI function the RDMA device sits on: the target of
// <root>/class/infiniband/<name>/device. Empty (with a note) when unknown.
std::string resolveBusId(const std::string& sysfsRoot, const std::string& name, Notes& notes) {
  const fs::path link = fs::path(sysfsRoot) / "class" / "infiniband" / name / "device";
  std::error_code ec;
  const fs::path target = fs::canonical(link, ec);
  if (ec) {
    notes.add("NIC " + name + ": no PCI function (" + link.string() + ": " + ec.message() + ")");
    return {};
  }
  const std::string busId = target.filename().string();
  if (!isBusId(busId)) {
    notes.add("NIC " + name + ": " + link.string() + " leads to " + target.string() +
              ", not a PCI function");
    return {};
  }
  return busId;
}

}  // namespace

std::vector<Nic> describeNics(const RdmaListing& listing, const std::string& sysfsRoot,
                              Notes& notes, std::string* reason) {
  for (const std::string& note : listing.notes) notes.add(note);
  std::vector<Nic> nics;
  for (const RdmaDeviceInfo& info : listing.devices) {
    if (!isUsableName(info.name)) {
      notes.add("skipped RDMA device " + quoteForMessage(info.name) +
                ": not a kernel device name (letters, digits, '_', '-', '.'; under 64)");
      continue;
    }
    Nic nic;
    nic.name = info.name;
    nic.guid = info.nodeGuid;
    nic.maxQp = info.maxQp;
    nic.busId = resolveBusId(sysfsRoot, info.name, notes);
    for (const RdmaPortInfo& p : info.ports) {
      NicPort port;
      port.port = p.portNum;
      port.state = verbsPortStateName(p.state);
      port.linkLayer = verbsLinkLayerName(p.linkLayer);
      port.speedMbps = verbsSpeedMbps(p.activeSpeed, p.activeWidth);
      if (port.speedMbps == 0 && p.state == 4)
        notes.add("NIC " + info.name + " port " + std::to_string(p.portNum) +
                  ": unknown active_speed " + std::to_string(p.activeSpeed) + " or width " +
                  std::to_string(p.activeWidth) + "; speed reported as 0");
      nic.ports.push_back(std::move(port));
    }
    nics.push_back(std::move(nic));
  }
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) { return a.name < b.name; });
  if (nics.empty()) {
    std::string why = listing.emptyReason;
    if (why.empty())
      why = listing.devices.empty() ? "the RDMA device list is empty"
                                    : "every RDMA device was skipped";
    *reason = "no RDMA devices: " + why;
  } else {
    reason->clear();
  }
  return nics;
}

}  // namespace nccom::topo_nccl
