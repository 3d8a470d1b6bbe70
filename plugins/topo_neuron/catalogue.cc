#include "catalogue.h"

#include "machine.h"

#include <nccom/topo/xml.h>

#include <cstring>
#include <string>
#include <vector>

namespace nccom::topo_neuron {
namespace {

// arch_name as the runtime spells it: the instance family, lower case.
const char* archOf(Variant v) {
  switch (v) {
    case Variant::Trn1:
    case Variant::Trn1n: return "trn1";
    case Variant::Inf2: return "inf2";
    case Variant::Trn2:
    case Variant::Trn2UltraServer: return "trn2";
    case Variant::Trn3:
    case Variant::Trn3SwitchV1: return "trn3";
    case Variant::Emu: return "emu";
  }
  return "";
}

int32_t podTypeOf(Variant v) {
  if (platformSpec(v).pod == PodLayout::None) return kPodTypeNone;
  return v == Variant::Trn3SwitchV1 ? kPodTypeSwitch : kPodTypeP2p;
}

std::string joined(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

// Sets every attribute in order; the first failure wins.
Status setAll(topo::XmlNode& node,
              std::initializer_list<std::pair<const char*, std::string>> attributes) {
  for (const auto& [key, value] : attributes) {
    if (auto st = node.setAttribute(key, value); !st) return st;
  }
  return {};
}

Result<topo::XmlNode*> child(topo::XmlNode& parent, const char* name,
                             std::initializer_list<std::pair<const char*, std::string>> attrs) {
  auto node = parent.addChild(name);
  if (!node) return node.take_error();
  if (auto st = setAll(**node, attrs); !st) return st.take_error();
  return *node;
}

}  // namespace

nccom_topo_machine_t machineOf(Variant v, int devices, int lnc) {
  const PlatformSpec& s = platformSpec(v);
  nccom_topo_machine_t m{};
  m.struct_size = sizeof m;
  m.instance_family = s.families.empty() ? 0u : static_cast<uint32_t>(s.families.front());
  m.instance_size = static_cast<uint32_t>(InstanceSize::Unknown);
  std::strncpy(m.arch_name, archOf(v), sizeof m.arch_name - 1);
  std::strncpy(m.device_revision, s.generation, sizeof m.device_revision - 1);
  m.device_count = devices;
  m.vcore_size = lnc;
  m.pod_type = podTypeOf(v);
  m.pod_size = s.podNodes > 0 ? s.podNodes : 1;
  return m;
}

Result<std::string> platformsXml() {
  topo::XmlNode root("platforms");
  for (const PlatformSpec& s : platformTable()) {
    const nccom_topo_machine_t m = machineOf(s.variant, s.instanceDevices.back(), s.defaultLnc);
    auto row = child(root, "platform",
                     {{"name", s.name},
                      {"codename", s.codename},
                      {"generation", s.generation},
                      {"instance_family", std::to_string(m.instance_family)},
                      {"instance_size", std::to_string(m.instance_size)},
                      {"arch_name", m.arch_name},
                      {"device_revision", m.device_revision},
                      {"pod_type", std::to_string(m.pod_type)},
                      {"pod_size", std::to_string(m.pod_size)},
                      {"devices", joined(s.instanceDevices)},
                      {"default_devices", std::to_string(s.instanceDevices.back())},
                      {"lnc", joined(s.lncModes)},
                      {"default_lnc", std::to_string(s.defaultLnc)}});
    if (!row) return row.take_error();
  }
  return topo::writeXml(root);
}

Result<std::string> nodeXml(const nccom_topo_machine_t& m) {
  auto described = describeMachine(m);
  if (!described) return described.take_error();
  const PlatformDescription& d = *described;
  topo::XmlNode root("node");
  if (auto st = setAll(root, {{"platform", d.name},
                              {"devices", std::to_string(d.nDevices)},
                              {"cores_per_device", std::to_string(d.coresPerDevice)},
                              {"lnc", std::to_string(d.lnc)},
                              {"vcores_per_device", std::to_string(d.vcoresPerDevice)}});
      !st) {
    return st.take_error();
  }
  for (const DeviceDesc& dev : d.devices) {
    std::vector<int> vcores;
    for (const VcoreDesc& v : d.vcores)
      if (v.device == dev.id) vcores.push_back(v.id);
    auto node = child(root, "device",
                      {{"id", std::to_string(dev.id)},
                       {"mla", std::to_string(dev.mla)},
                       {"numa", std::to_string(dev.numa)},
                       {"pci_switch", std::to_string(dev.pciSwitch)},
                       {"vcores", joined(vcores)}});
    if (!node) return node.take_error();
  }
  for (const NicDesc& nic : d.nics) {
    auto node = child(root, "nic",
                      {{"id", std::to_string(nic.id)},
                       {"numa", std::to_string(nic.numa)},
                       {"pci_switch", std::to_string(nic.pciSwitch)},
                       {"devices", joined(nic.devices)}});
    if (!node) return node.take_error();
  }
  for (const LinkDesc& link : d.links) {
    auto node = child(root, "link",
                      {{"a", std::to_string(link.a)},
                       {"b", std::to_string(link.b)},
                       {"locality", localityName(link.locality)}});
    if (!node) return node.take_error();
  }
  return topo::writeXml(root);
}

}  // namespace nccom::topo_neuron
