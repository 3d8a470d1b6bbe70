// CPU identity (the `<cpu>` arch/vendor/familyid/modelid attributes) and
// NUMA nodes (numaid, affinity) from /proc/cpuinfo and
// <sysfs>/devices/system/node/node<N>/{cpulist,cpumap}.
#include "detect_internal.h"
#include "sysfs_files.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace nccom::topo_nccl {
namespace fs = std::filesystem;
namespace {

// NCCL's arch names; anything else is passed through as uname spells it.
std::string archName(const std::string& machine) {
  if (machine == "x86_64" || machine == "i686" || machine == "i386") return "x86_64";
  if (machine == "aarch64" || machine == "arm64") return "arm64";
  if (machine.rfind("ppc64", 0) == 0) return "ppc64";
  return machine;
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

// One "key : value" field of the first processor block, or nullopt.
std::optional<std::string> cpuinfoField(const std::string& block, std::string_view key) {
  std::size_t start = 0;
  while (start < block.size()) {
    std::size_t end = block.find('\n', start);
    if (end == std::string::npos) end = block.size();
    const std::string_view line(block.data() + start, end - start);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos && trim(line.substr(0, colon)) == key)
      return trim(line.substr(colon + 1));
    start = end + 1;
  }
  return std::nullopt;
}

int cpuinfoNumber(const std::string& block, std::string_view key, const std::string& path,
                  Notes& notes) {
  const auto value = cpuinfoField(block, key);
  if (!value) return -1;
  const auto number = parseDecimal(*value, 0, 65535);
  if (!number) {
    notes.add(path + ": '" + std::string(key) + "' is " + quoteForMessage(*value) +
              ", not a decimal number; left unknown");
    return -1;
  }
  return static_cast<int>(*number);
}

}  // namespace

CpuInfo detectCpu(const std::string& cpuinfoPath, const std::string& machine, Notes& notes) {
  CpuInfo cpu;
  std::string m = machine;
  if (m.empty()) {
    struct utsname names {};
    if (::uname(&names) == 0) m = names.machine;
  }
  cpu.arch = archName(m);
  Result<std::string> block = readFirstBlock(cpuinfoPath, 64 * 1024);
  if (!block) {
    notes.add("CPU vendor/family/model unknown: " + block.error().message);
    return cpu;
  }
  if (auto vendor = cpuinfoField(*block, "vendor_id")) {
    if (isPrintableText(*vendor, 32))
      cpu.vendor = *vendor;
    else
      notes.add(cpuinfoPath + ": vendor_id " + quoteForMessage(*vendor) +
                " is not 1-32 printable characters; left unknown");
  }
  cpu.familyId = cpuinfoNumber(*block, "cpu family", cpuinfoPath, notes);
  cpu.modelId = cpuinfoNumber(*block, "model", cpuinfoPath, notes);
  return cpu;
}

Result<std::string> cpuListToMask(const std::string& cpulist) {
  if (!isCpuList(cpulist))
    return make_error(NRT_FAILURE, "cpu list " + quoteForMessage(cpulist) + " is malformed");
  std::vector<uint32_t> words(1, 0);
  std::size_t i = 0;
  while (i < cpulist.size()) {
    std::size_t end = cpulist.find(',', i);
    if (end == std::string::npos) end = cpulist.size();
    const std::string range = cpulist.substr(i, end - i);
    const auto dash = range.find('-');
    const auto low = parseDecimal(range.substr(0, dash), 0, kMaxCpus - 1);
    const auto high =
        dash == std::string::npos ? low : parseDecimal(range.substr(dash + 1), 0, kMaxCpus - 1);
    if (!low || !high || *high < *low)
      return make_error(NRT_FAILURE, "cpu list " + quoteForMessage(cpulist) + ": range " + range +
                                         " is reversed or beyond " + std::to_string(kMaxCpus) +
                                         " CPUs");
    for (long cpu = *low; cpu <= *high; ++cpu) {
      const std::size_t word = static_cast<std::size_t>(cpu) / 32;
      if (words.size() <= word) words.resize(word + 1, 0);
      words[word] |= 1u << (cpu % 32);
    }
    i = end + 1;
  }
  std::string mask;
  for (std::size_t w = words.size(); w-- > 0;) {
    char group[9];
    std::snprintf(group, sizeof group, "%08x", words[w]);
    if (!mask.empty()) mask += ',';
    mask += group;
  }
  return mask;
}

namespace {

// One node<N> directory, or nullopt (with a note) when unusable.
std::optional<NumaNode> readNode(const fs::path& dir, int id, Notes& notes) {
  const std::string listPath = (dir / "cpulist").string();
  const std::string mapPath = (dir / "cpumap").string();
  Result<std::optional<std::string>> list = readAttribute(listPath);
  if (!list || !*list) {
    notes.add("skipped NUMA node " + std::to_string(id) + ": " +
              (list ? listPath + " is missing" : list.error().message));
    return std::nullopt;
  }
  if (!isCpuList(**list)) {
    notes.add("skipped NUMA node " + std::to_string(id) + ": " + listPath + " holds " +
              quoteForMessage(**list) + ", not a cpu list like \"0-3,8\"");
    return std::nullopt;
  }
  NumaNode node;
  node.id = id;
  node.cpulist = **list;
  Result<std::optional<std::string>> map = readAttribute(mapPath);
  if (!map) {
    notes.add("skipped NUMA node " + std::to_string(id) + ": " + map.error().message);
    return std::nullopt;
  }
  if (*map) {
    if (!isCpuMask(**map)) {
      notes.add("skipped NUMA node " + std::to_string(id) + ": " + mapPath + " holds " +
                quoteForMessage(**map) + ", not a hex cpu mask like \"0000000f\"");
      return std::nullopt;
    }
    node.affinity = **map;
    return node;
  }
  Result<std::string> mask = cpuListToMask(node.cpulist);
  if (!mask) {
    notes.add("skipped NUMA node " + std::to_string(id) + ": " + listPath + ": " +
              mask.error().message);
    return std::nullopt;
  }
  notes.add(mapPath + " is missing; affinity computed from cpulist");
  node.affinity = *mask;
  return node;
}

// The stand-in for a kernel without NUMA directories: node 0 = online CPUs.
NumaNode wholeMachineNode(const std::string& sysfsRoot, Notes& notes) {
  NumaNode node;
  node.id = 0;
  const std::string online = (fs::path(sysfsRoot) / "devices/system/cpu/online").string();
  Result<std::optional<std::string>> list = readAttribute(online);
  if (list && *list && isCpuList(**list)) {
    if (Result<std::string> mask = cpuListToMask(**list)) {
      node.cpulist = **list;
      node.affinity = *mask;
      return node;
    }
  }
  notes.add("NUMA node 0 has no CPU list: " + online + " is missing or malformed");
  node.affinity = "00000000";
  return node;
}

}  // namespace

std::vector<NumaNode> detectNuma(const std::string& sysfsRoot, Notes& notes) {
  const fs::path nodeDir = fs::path(sysfsRoot) / "devices/system/node";
  std::vector<NumaNode> nodes;
  std::error_code ec;
  fs::directory_iterator it(nodeDir, ec);
  if (ec) {
    notes.add("no NUMA information (" + nodeDir.string() + ": " + ec.message() +
              "); assuming one node 0 with every online CPU");
    nodes.push_back(wholeMachineNode(sysfsRoot, notes));
    return nodes;
  }
  std::size_t seen = 0;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec || ++seen > kMaxDirEntries) {
      notes.add("stopped reading " + nodeDir.string() + ": " +
                (ec ? ec.message() : "more than " + std::to_string(kMaxDirEntries) + " entries"));
      break;
    }
    const std::string name = it->path().filename().string();
    if (name.rfind("node", 0) != 0 || name.size() == 4) continue;  // cpumap files, "online", ...
    const auto id = parseDecimal(std::string_view(name).substr(4), 0, 65535);
    if (!id) continue;
    if (auto node = readNode(it->path(), static_cast<int>(*id), notes)) nodes.push_back(*node);
  }
  if (nodes.empty()) {
    notes.add("no usable NUMA node under " + nodeDir.string() +
              "; assuming one node 0 with every online CPU");
    nodes.push_back(wholeMachineNode(sysfsRoot, notes));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return nodes;
}

}  // namespace nccom::topo_nccl
