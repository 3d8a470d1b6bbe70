// The platforms the topology plugins list and the nodes they model, read from
// their XML answers (nccom/topo_plugin.h list_platforms, describe_node).
#include "topo_tool.h"

#include <nccom/topo/xml.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace nccom::topotool {
namespace {

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

Error bad(const std::string& backend, const char* call, const std::string& what) {
  return Error{NRT_FAILURE, "topology plugin " + backend + ": its " + call + " answer " + what};
}

// Reads each attribute into its int; the first failure is named.
Status read_ints(const topo::XmlNode& node,
                 std::initializer_list<std::pair<const char*, int*>> fields) {
  for (const auto& [key, out] : fields) {
    auto v = node.getInt(key);
    if (!v) return v.take_error();
    if (*v < INT32_MIN || *v > INT32_MAX) {
      return make_error(NRT_INVALID, std::string("attribute ") + key + " of " +
                                         ("<" + node.name() + ">") + " is out of range");
    }
    *out = static_cast<int>(*v);
  }
  return {};
}

// "1,4,16" -> {1, 4, 16}; "" -> {}.
Result<std::vector<int>> read_list(const topo::XmlNode& node, const char* key) {
  auto text = node.getString(key);
  if (!text) return text.take_error();
  std::vector<int> out;
  std::size_t start = 0;
  while (start < text->size()) {
    std::size_t end = text->find(',', start);
    if (end == std::string::npos) end = text->size();
    auto v = topo::parseIntText(std::string_view(*text).substr(start, end - start));
    if (!v || *v < INT32_MIN || *v > INT32_MAX) {
      return make_error(NRT_INVALID, std::string("attribute ") + key + " of " +
                                         ("<" + node.name() + ">") +
                                         " is not a list of integers: " + in_quotes(*text));
    }
    out.push_back(static_cast<int>(*v));
    start = end + 1;
  }
  return out;
}

Status copy_name(char* out, std::size_t size, const std::string& text, const char* key) {
  if (text.size() >= size) {
    return make_error(NRT_INVALID, std::string(key) + " " + in_quotes(text) + " is longer than " +
                                       std::to_string(size - 1) + " bytes");
  }
  std::memcpy(out, text.c_str(), text.size() + 1);
  return {};
}

Result<PlatformEntry> read_platform(const topo::XmlNode& p, const std::string& backend) {
  PlatformEntry e;
  e.backend = backend;
  for (auto [key, out] : {std::pair{"name", &e.name}, std::pair{"codename", &e.codename},
                          std::pair{"generation", &e.generation}}) {
    auto v = p.getString(key);
    if (!v) return v.take_error();
    *out = *v;
  }
  nccom_topo_machine_t& m = e.machine;
  m.struct_size = sizeof m;
  int family = 0, size = 0, pod_type = 0, pod_size = 0, devices = 0, lnc = 0;
  if (auto st = read_ints(p, {{"instance_family", &family},
                              {"instance_size", &size},
                              {"pod_type", &pod_type},
                              {"pod_size", &pod_size},
                              {"default_devices", &devices},
                              {"default_lnc", &lnc}});
      !st) {
    return st.take_error();
  }
  m.instance_family = static_cast<uint32_t>(family);
  m.instance_size = static_cast<uint32_t>(size);
  m.pod_type = pod_type;
  m.pod_size = pod_size;
  m.device_count = devices;
  m.vcore_size = lnc;
  for (auto [key, out, cap] :
       {std::tuple{"arch_name", m.arch_name, sizeof m.arch_name},
        std::tuple{"device_revision", m.device_revision, sizeof m.device_revision}}) {
    auto v = p.getString(key);
    if (!v) return v.take_error();
    if (auto st = copy_name(out, cap, *v, key); !st) return st.take_error();
  }
  auto dev_list = read_list(p, "devices");
  if (!dev_list) return dev_list.take_error();
  auto lnc_list = read_list(p, "lnc");
  if (!lnc_list) return lnc_list.take_error();
  e.devices = std::move(*dev_list);
  e.lnc = std::move(*lnc_list);
  if (e.name.empty()) return make_error(NRT_INVALID, "a platform has an empty name");
  if (std::find(e.devices.begin(), e.devices.end(), devices) == e.devices.end() ||
      std::find(e.lnc.begin(), e.lnc.end(), lnc) == e.lnc.end()) {
    return make_error(NRT_INVALID, "platform " + in_quotes(e.name) +
                                       ": its default devices or LNC is not one of its own");
  }
  return e;
}

}  // namespace

Result<std::vector<PlatformEntry>> parse_platforms(const std::string& xml,
                                                   const std::string& backend) {
  auto doc = topo::parseXml(xml, "list_platforms answer of topology plugin " + backend);
  if (!doc) return doc.take_error();
  const topo::XmlNode& root = *doc->root;
  if (root.name() != "platforms") {
    return bad(backend, "list_platforms", "is <" + root.name() + ">, not <platforms>");
  }
  std::vector<PlatformEntry> out;
  std::set<std::string> seen;
  for (const auto& child : root.children()) {
    if (child->name() != "platform") continue;
    auto e = read_platform(*child, backend);
    if (!e) return bad(backend, "list_platforms", "is malformed: " + e.error().message);
    if (!seen.insert(e->name).second) {
      return bad(backend, "list_platforms", "names platform " + in_quotes(e->name) + " twice");
    }
    out.push_back(std::move(*e));
  }
  return out;
}

Result<NodeModel> parse_node(const std::string& xml, const std::string& backend) {
  auto doc = topo::parseXml(xml, "describe_node answer of topology plugin " + backend);
  if (!doc) return doc.take_error();
  const topo::XmlNode& root = *doc->root;
  if (root.name() != "node") {
    return bad(backend, "describe_node", "is <" + root.name() + ">, not <node>");
  }
  NodeModel n;
  auto name = root.getString("platform");
  if (!name) return bad(backend, "describe_node", "is malformed: " + name.error().message);
  n.platform = *name;
  Status st = read_ints(root, {{"devices", &n.n_devices},
                               {"cores_per_device", &n.cores_per_device},
                               {"lnc", &n.lnc},
                               {"vcores_per_device", &n.vcores_per_device}});
  for (const auto& child : root.children()) {
    if (!st) break;
    const topo::XmlNode& c = *child;
    if (c.name() == "device") {
      NodeModel::Device& d = n.devices.emplace_back();
      st = read_ints(
          c, {{"id", &d.id}, {"mla", &d.mla}, {"numa", &d.numa}, {"pci_switch", &d.pci_switch}});
      if (st) {
        auto v = read_list(c, "vcores");
        if (v)
          d.vcores = std::move(*v);
        else
          st = v.take_error();
      }
    } else if (c.name() == "nic") {
      NodeModel::Nic& nic = n.nics.emplace_back();
      st = read_ints(c, {{"id", &nic.id}, {"numa", &nic.numa}, {"pci_switch", &nic.pci_switch}});
      if (st) {
        auto v = read_list(c, "devices");
        if (v)
          nic.devices = std::move(*v);
        else
          st = v.take_error();
      }
    } else if (c.name() == "link") {
      NodeModel::Link& l = n.links.emplace_back();
      st = read_ints(c, {{"a", &l.a}, {"b", &l.b}});
      if (st) {
        auto v = c.getString("locality");
        if (v)
          l.locality = *v;
        else
          st = v.take_error();
      }
    }
  }
  if (!st) return bad(backend, "describe_node", "is malformed: " + st.error().message);
  if (n.n_devices < 1 || n.vcores_per_device < 1 ||
      static_cast<int>(n.devices.size()) != n.n_devices) {
    return bad(backend, "describe_node",
               "says " + std::to_string(n.n_devices) + " devices of " +
                   std::to_string(n.vcores_per_device) + " logical cores and lists " +
                   std::to_string(n.devices.size()) + " <device> elements");
  }
  auto known = [&](int d) { return d >= 0 && d < n.n_devices; };
  for (const auto& l : n.links) {
    if (!known(l.a) || !known(l.b)) {
      return bad(backend, "describe_node",
                 "links devices " + std::to_string(l.a) + " and " + std::to_string(l.b) +
                     " of a node with " + std::to_string(n.n_devices));
    }
  }
  for (const auto& nic : n.nics) {
    if (!std::all_of(nic.devices.begin(), nic.devices.end(), known)) {
      return bad(backend, "describe_node",
                 "puts nic " + std::to_string(nic.id) + " next to a device the node lacks");
    }
  }
  return n;
}

std::vector<std::string> platform_names(const Backends& backends) {
  std::vector<std::string> names;
  for (const PlatformEntry& e : backends.platforms()) names.push_back(e.name);
  return names;
}

Result<PlatformChoice> choose_platform(const Backends& backends, const std::string& name,
                                       int devices, int lnc) {
  const auto& all = backends.platforms();
  auto it =
      std::find_if(all.begin(), all.end(), [&](const PlatformEntry& e) { return e.name == name; });
  if (it == all.end()) {
    std::string valid;
    for (const std::string& n : platform_names(backends)) valid += (valid.empty() ? "" : ", ") + n;
    if (valid.empty()) valid = "none: no loaded topology plugin lists platforms";
    return make_error(NRT_INVALID,
                      "unknown platform " + in_quotes(name) + " (valid: " + valid + ")");
  }
  PlatformChoice c;
  c.entry = *it;
  c.machine = it->machine;
  if (devices >= 0) c.machine.device_count = devices;
  if (lnc >= 0) c.machine.vcore_size = lnc;
  const graphbuild::TopoBackend* backend = backends.find(it->backend);
  if (backend == nullptr) {
    return make_error(NRT_FAILURE, "topology plugin " + it->backend + " is not loaded");
  }
  // The plugin checks the device count and LNC: they are its rules.
  auto xml = backend->node_xml(c.machine);
  if (!xml) return xml.take_error();
  if (!*xml) {
    return make_error(NRT_FAILURE, "topology plugin " + it->backend + " lists platform " +
                                       in_quotes(name) + " but does not describe its node");
  }
  auto node = parse_node(**xml, it->backend);
  if (!node) return node.take_error();
  c.node = std::move(*node);
  return c;
}

}  // namespace nccom::topotool
