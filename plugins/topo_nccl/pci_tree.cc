// The PCI trees of <sysfs>/bus/pci/devices that matter to topology.
//
// Each entry there links to the device's directory under /sys/devices, whose
// path spells out the hierarchy: .../pci0000:00/0000:00:01.0/0000:01:00.0
// means 0000:01:00.0 sits below the bridge 0000:00:01.0, which sits on root
// complex pci0000:00. We keep network, display, accelerator and Neuron
// functions and every device on the way up to them; the rest (storage, USB,
// host bridges, bridges leading nowhere we care about) is dropped.
#include "detect.h"
#include "detect_internal.h"
#include "sysfs_files.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <system_error>

namespace nccom::topo_nccl {
namespace fs = std::filesystem;
namespace {

struct Record {
  PciDevice device;
  std::string parent;  // parent busId; empty on a root complex
  bool keep = false;
};

PciKind classify(const PciDevice& d) {
  if (!neuronGeneration(d.vendor, d.device).empty()) return PciKind::Neuron;
  const unsigned long code = std::stoul(d.classCode.substr(2), nullptr, 16);  // validated
  if ((code >> 8) == 0x0604) return PciKind::Bridge;
  switch (code >> 16) {
    case 0x02: return PciKind::Network;
    case 0x03: return PciKind::Display;
    case 0x12: return PciKind::Accelerator;
    default: return PciKind::Path;
  }
}

bool isEndpointKind(PciKind kind) {
  return kind == PciKind::Network || kind == PciKind::Display || kind == PciKind::Accelerator ||
         kind == PciKind::Neuron;
}

// A required id file: 0x + `digits` hex digits. Error text on failure.
std::optional<std::string> readId(const fs::path& dir, const char* file, int digits,
                                  std::string* why) {
  const std::string path = (dir / file).string();
  Result<std::optional<std::string>> text = readAttribute(path);
  if (!text) {
    *why = text.error().message;
  } else if (!*text) {
    *why = path + " is missing";
  } else if (!isHexId(**text, digits)) {
    *why = path + " holds " + quoteForMessage(**text) + ", not 0x and " + std::to_string(digits) +
           " hex digits";
  } else {
    std::string id = **text;
    std::transform(id.begin(), id.end(), id.begin(), [](char c) { return std::tolower(c); });
    return id;
  }
  return std::nullopt;
}

// An optional attribute: empty when absent; empty plus a note when present
// but failing `valid`.
template <class Valid>
std::string readOptional(const fs::path& dir, const char* file, const std::string& busId,
                         Valid valid, const char* rule, Notes& notes) {
  const std::string path = (dir / file).string();
  Result<std::optional<std::string>> text = readAttribute(path);
  if (!text) {
    notes.add("PCI " + busId + ": " + text.error().message + "; attribute left empty");
    return {};
  }
  if (!*text) return {};
  if (!valid(**text)) {
    notes.add("PCI " + busId + ": " + path + " holds " + quoteForMessage(**text) + ", not " + rule +
              "; attribute left empty");
    return {};
  }
  return **text;
}

bool isLinkWidth(const std::string& text) { return parseDecimal(text, 0, 32).has_value(); }
bool isLinkSpeed(const std::string& text) { return isPrintableText(text, 64); }

// max_* when present, else current_* (virtual functions often have only one).
std::string readLink(const fs::path& dir, const std::string& busId, bool speed, Notes& notes) {
  const char* maxFile = speed ? "max_link_speed" : "max_link_width";
  const char* curFile = speed ? "current_link_speed" : "current_link_width";
  const char* rule = speed ? "1-64 printable characters" : "a lane count 0-32";
  auto valid = [speed](const std::string& t) { return speed ? isLinkSpeed(t) : isLinkWidth(t); };
  std::string value = readOptional(dir, maxFile, busId, valid, rule, notes);
  if (value.empty()) value = readOptional(dir, curFile, busId, valid, rule, notes);
  return value;
}

// Reads one device; nullopt (with a note) when it cannot be described.
std::optional<Record> readDevice(const fs::path& entry, Notes& notes) {
  const std::string busId = entry.filename().string();
  std::error_code ec;
  const fs::path dir = fs::canonical(entry, ec);
  if (ec) {
    notes.add("skipped PCI " + busId + ": " + entry.string() + ": " + ec.message());
    return std::nullopt;
  }
  if (dir.filename() != busId) {
    notes.add("skipped PCI " + busId + ": " + entry.string() + " leads to " + dir.string() +
              ", another device");
    return std::nullopt;
  }
  Record r;
  PciDevice& d = r.device;
  d.busId = busId;
  std::string why;
  auto classCode = readId(dir, "class", 6, &why);
  auto vendor = classCode ? readId(dir, "vendor", 4, &why) : std::nullopt;
  auto device = vendor ? readId(dir, "device", 4, &why) : std::nullopt;
  if (!device) {
    notes.add("skipped PCI " + busId + ": " + why);
    return std::nullopt;
  }
  d.classCode = *classCode;
  d.vendor = *vendor;
  d.device = *device;
  auto isId = [](const std::string& t) { return isHexId(t, 4); };
  d.subsystemVendor =
      readOptional(dir, "subsystem_vendor", busId, isId, "0x and 4 hex digits", notes);
  d.subsystemDevice =
      readOptional(dir, "subsystem_device", busId, isId, "0x and 4 hex digits", notes);
  d.linkSpeed = readLink(dir, busId, true, notes);
  d.linkWidth = readLink(dir, busId, false, notes);
  auto isNuma = [](const std::string& t) { return parseDecimal(t, -1, 65535).has_value(); };
  const std::string numa =
      readOptional(dir, "numa_node", busId, isNuma, "a NUMA id (-1 or 0-65535)", notes);
  d.numaNode = numa.empty() ? -1 : static_cast<int>(*parseDecimal(numa, -1, 65535));
  d.kind = classify(d);
  const std::string parentName = dir.parent_path().filename().string();
  if (isBusId(parentName)) r.parent = parentName;
  return r;
}

// Marks `busId` and its ancestors kept. False (nothing marked) when an
// ancestor was skipped or is not listed: hanging the device on the root
// complex instead would shorten its path and lie about the topology.
bool keepWithAncestors(std::map<std::string, Record>& records, const std::string& busId,
                       Notes& notes) {
  std::vector<Record*> chain;
  for (std::string at = busId; !at.empty();) {
    auto it = records.find(at);
    if (it == records.end()) {
      notes.add("skipped PCI " + busId + ": its upstream device " + at +
                " is unlisted or was skipped");
      return false;
    }
    if (chain.size() > records.size()) return false;  // cannot happen: paths get shorter
    chain.push_back(&it->second);
    at = it->second.parent;
  }
  for (Record* r : chain) r->keep = true;
  return true;
}

PciDevice buildTree(std::map<std::string, Record>& records,
                    const std::multimap<std::string, std::string>& children,
                    const std::string& busId) {
  PciDevice device = records.at(busId).device;
  auto [first, last] = children.equal_range(busId);
  for (auto it = first; it != last; ++it)
    if (records.at(it->second).keep)
      device.children.push_back(buildTree(records, children, it->second));
  return device;
}

}  // namespace

const char* pciKindName(PciKind kind) {
  switch (kind) {
    case PciKind::Bridge: return "bridge";
    case PciKind::Network: return "network";
    case PciKind::Display: return "display";
    case PciKind::Accelerator: return "accelerator";
    case PciKind::Neuron: return "neuron";
    case PciKind::Path: return "path";
  }
  return "?";
}

std::vector<PciDevice> detectPci(const std::string& sysfsRoot, Notes& notes) {
  const fs::path devicesDir = fs::path(sysfsRoot) / "bus/pci/devices";
  std::error_code ec;
  fs::directory_iterator it(devicesDir, ec);
  if (ec) {
    notes.add("no PCI devices (" + devicesDir.string() + ": " + ec.message() + ")");
    return {};
  }
  std::map<std::string, Record> records;  // ordered by busId: deterministic output
  std::size_t seen = 0;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec || ++seen > kMaxDirEntries) {
      notes.add("stopped reading " + devicesDir.string() + ": " +
                (ec ? ec.message() : "more than " + std::to_string(kMaxDirEntries) + " entries"));
      break;
    }
    const std::string name = it->path().filename().string();
    if (!isBusId(name)) {
      notes.add("skipped " + it->path().string() + ": not a PCI function name like 0000:3b:00.0");
      continue;
    }
    if (auto record = readDevice(it->path(), notes)) records.emplace(name, std::move(*record));
  }
  std::size_t kept = 0;
  for (auto& [busId, record] : records)
    if (isEndpointKind(record.device.kind)) keepWithAncestors(records, busId, notes);
  std::multimap<std::string, std::string> children;
  std::vector<std::string> roots;
  for (auto& [busId, record] : records) {
    if (!record.keep) continue;
    ++kept;
    if (record.parent.empty())
      roots.push_back(busId);
    else
      children.emplace(record.parent, busId);  // inserted in busId order
  }
  notes.add("PCI: kept " + std::to_string(kept) + " of " + std::to_string(seen) +
            " functions (network, display, accelerator, Neuron, and the bridges above them)");
  std::vector<PciDevice> trees;
  for (const std::string& root : roots) trees.push_back(buildTree(records, children, root));
  return trees;
}

}  // namespace nccom::topo_nccl
