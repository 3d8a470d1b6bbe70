#include "platform.h"

#include "fail.h"

#include <algorithm>
#include <string>

namespace nccom::topo_neuron {
namespace {

using F = InstanceFamily;

// Every number here not known from the original is a decision in
// docs/decisions/topo-neuron.md ("Platform geometry").
PlatformSpec row(Variant v, Platform p, const char* name, const char* codename,
                 const char* generation, std::vector<InstanceFamily> families) {
  PlatformSpec s{};
  s.variant = v;
  s.platform = p;
  s.name = name;
  s.codename = codename;
  s.generation = generation;
  s.families = std::move(families);
  s.localDeviceCounts = {1, 4, 8, 16};  // verifyTopology's counts
  s.mlasPerDevice = 1;
  s.pod = PodLayout::None;
  s.podNodes = 0;
  return s;
}

// SUNDA: 2 NeuronCore-v2 per device, 2 SEngines of 1 core, one die.
PlatformSpec sunda(Variant v, const char* name, std::vector<InstanceFamily> f) {
  PlatformSpec s = row(v, Platform::Sunda, name, "SUNDA", "v2", std::move(f));
  s.coresPerDevice = 2;
  s.lncModes = {1};
  s.defaultLnc = 1;
  s.senginesPerMla = 2;
  s.ncPerSengine = 1;
  s.d2dXor2 = false;
  return s;
}

// CAYMAN / MARIANA: 8 cores per chip, 4 SEngines of 2 cores, d2d = s ^ 2,
// 4 C2C ports per MLA = 4 torus neighbours, 16 EFA NICs per full node.
PlatformSpec trn23(Variant v, Platform p, const char* name, const char* codename,
                   const char* generation, std::vector<InstanceFamily> f) {
  PlatformSpec s = row(v, p, name, codename, generation, std::move(f));
  s.instanceDevices = {16};
  s.coresPerDevice = 8;
  s.lncModes = {1, 2};
  s.defaultLnc = 2;
  s.senginesPerMla = 4;
  s.ncPerSengine = 2;
  s.c2cPortsPerMla = 4;
  s.d2dXor2 = true;
  s.layout = LinkLayout::Torus4x4;
  s.nicsFullNode = 16;
  return s;
}

std::vector<PlatformSpec> buildTable() {
  std::vector<PlatformSpec> t;
  auto trn1 = sunda(Variant::Trn1, "trn1", {F::Trn1});
  trn1.instanceDevices = {1, 16};  // trn1.2xlarge, trn1.32xlarge
  trn1.c2cPortsPerMla = 4;
  trn1.layout = LinkLayout::Torus4x4;
  trn1.nicsFullNode = 8;  // 8 x 100G EFA
  t.push_back(trn1);
  auto trn1n = trn1;
  trn1n.variant = Variant::Trn1n;
  trn1n.name = "trn1n";
  trn1n.families = {F::Trn1n};
  trn1n.instanceDevices = {16};
  trn1n.nicsFullNode = 16;  // 16 x 100G EFA
  t.push_back(trn1n);
  auto inf2 = sunda(Variant::Inf2, "inf2", {F::Inf2, F::Inf2e});
  inf2.instanceDevices = {1, 6, 12};  // xlarge/8xlarge, 24xlarge, 48xlarge
  inf2.localDeviceCounts = {1, 6, 12};
  inf2.c2cPortsPerMla = 2;
  inf2.layout = LinkLayout::Ring;
  inf2.nicsFullNode = 0;  // no EFA
  t.push_back(inf2);
  auto trn2 =
      trn23(Variant::Trn2, Platform::Cayman, "trn2", "CAYMAN", "v3", {F::Trn2, F::Trn2n, F::Trn2p});
  trn2.instanceDevices = {1, 16};  // trn2.3xlarge, trn2.48xlarge
  t.push_back(trn2);
  auto trn2u = trn23(Variant::Trn2UltraServer, Platform::Cayman, "trn2-ultraserver", "CAYMAN", "v3",
                     {F::Trn2u});
  trn2u.pod = PodLayout::Ring;
  trn2u.podNodes = 4;
  t.push_back(trn2u);
  t.push_back(trn23(Variant::Trn3, Platform::Mariana, "trn3", "MARIANA", "v4", {F::Trn3}));
  auto sw =
      trn23(Variant::Trn3SwitchV1, Platform::Mariana, "trn3-switch-v1", "MARIANA", "v4", {F::Trn3});
  sw.lncModes = {2};  // kangaRing paths hold 64 vcores
  sw.layout = LinkLayout::Torus4x4PlusSwitch;
  sw.pod = PodLayout::AllToAll;
  sw.podNodes = 9;  // 144 chips / 16
  t.push_back(sw);
  auto emu = row(Variant::Emu, Platform::Emu, "emu", "EMU", "emu", {});
  emu.instanceDevices = {1, 2, 3, 4, 8, 16};  // 2 and 3: small reference-runtime hosts
  emu.localDeviceCounts = {1, 2, 3, 4, 8, 16};
  emu.coresPerDevice = 2;
  emu.lncModes = {1, 2};
  emu.defaultLnc = 1;
  emu.senginesPerMla = 2;
  emu.ncPerSengine = 1;
  emu.c2cPortsPerMla = 0;
  emu.d2dXor2 = false;
  emu.layout = LinkLayout::AllToAll;
  emu.nicsFullNode = 4;  // one per 4 devices (see describePlatform)
  t.push_back(emu);
  return t;
}

void addTorus(PlatformDescription& d, EdgeLocality others, bool addSwitch) {
  auto id = [](int r, int c) { return ((r + 4) % 4) * 4 + (c + 4) % 4; };
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      d.links.push_back({id(r, c), id(r, c + 1), EdgeLocality::RemoteMLA});
      d.links.push_back({id(r, c), id(r + 1, c), EdgeLocality::RemoteMLA});
    }
  }
  if (!addSwitch) return;
  for (int a = 0; a < 16; ++a) {
    for (int b = a + 1; b < 16; ++b) {
      if (!d.linked(a, b)) d.links.push_back({a, b, others});
    }
  }
}

Status addLinks(const PlatformSpec& s, PlatformDescription& d) {
  const int n = d.nDevices;
  if (n == 1) return {};
  switch (s.layout) {
    case LinkLayout::None: return {};
    case LinkLayout::Ring:
      for (int i = 0; i < n; ++i) {
        if (n == 2 && i == 1) break;  // one link, not two copies of it
        d.links.push_back({i, (i + 1) % n, EdgeLocality::RemoteMLA});
      }
      return {};
    case LinkLayout::AllToAll:
      for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b) d.links.push_back({a, b, EdgeLocality::SharedMemory});
      return {};
    case LinkLayout::Torus4x4:
    case LinkLayout::Torus4x4PlusSwitch:
      if (n != 16) {
        return fail(NRT_INVALID, "topo_neuron: platform " + std::string(s.name) +
                                     " wires devices as a 4x4 torus, which needs 16 "
                                     "devices, not " +
                                     std::to_string(n));
      }
      addTorus(d, EdgeLocality::RMTV, s.layout == LinkLayout::Torus4x4PlusSwitch);
      return {};
  }
  return {};
}

Status addNics(int nics, PlatformDescription& d) {
  const int n = d.nDevices;
  if (nics < 0) return fail(NRT_INVALID, "topo_neuron: negative NIC count");
  if (nics == 0) {
    for (auto& dev : d.devices) dev.pciSwitch = dev.id / 4;  // no NIC: 4 devices per switch
    return {};
  }
  if (n % nics != 0 && nics % n != 0) {
    return fail(NRT_INVALID, "topo_neuron: " + std::to_string(nics) +
                                 " NICs cannot be "
                                 "spread evenly over " +
                                 std::to_string(n) +
                                 " devices "
                                 "(one count must divide the other)");
  }
  const int devicesPerSwitch = nics >= n ? 1 : n / nics;
  const int nSwitches = n / devicesPerSwitch;
  for (auto& dev : d.devices) dev.pciSwitch = dev.id / devicesPerSwitch;
  for (int k = 0; k < nics; ++k) {
    NicDesc nic{k, static_cast<int>(static_cast<long>(k) * nSwitches / nics), 0, {}};
    for (const auto& dev : d.devices)
      if (dev.pciSwitch == nic.pciSwitch) nic.devices.push_back(dev.id);
    nic.numa = d.devices[nic.devices.front()].numa;
    d.nics.push_back(std::move(nic));
  }
  return {};
}

std::string joinInts(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

const char* localityName(EdgeLocality l) {
  switch (l) {
    case EdgeLocality::SharedMemory: return "SharedMemory";
    case EdgeLocality::RemoteMLA: return "RemoteMLA";
    case EdgeLocality::D2D: return "D2D";
    case EdgeLocality::RMTV: return "RMTV";
    case EdgeLocality::Local: return "Local";
  }
  return "?";
}

// Built on first use: no static constructor runs at load time.
const std::vector<PlatformSpec>& platformTable() {
  static const std::vector<PlatformSpec> table = buildTable();
  return table;
}

const PlatformSpec& platformSpec(Variant v) { return platformTable().at(static_cast<size_t>(v)); }

Result<Variant> variantFromInstance(uint32_t family, bool switchPod) {
  const auto f = static_cast<InstanceFamily>(family);
  if (f == InstanceFamily::Trn3) return switchPod ? Variant::Trn3SwitchV1 : Variant::Trn3;
  for (const auto& s : platformTable()) {
    if (std::find(s.families.begin(), s.families.end(), f) != s.families.end()) return s.variant;
  }
  return fail(NRT_INVALID, "topo_neuron: unknown platform: instance family " +
                               std::to_string(family) +
                               " is not one of trn1, trn1n, inf2, inf2e, trn2, trn2n, "
                               "trn2p, trn2u, trn3");
}

std::vector<int> d2dPeers(const PlatformSpec& p, int sengine) {
  if (!p.d2dXor2 || sengine < 0 || sengine >= p.senginesPerMla) return {};
  return {sengine ^ 2};
}

std::vector<int> rmtvPeers(const PlatformSpec& p, int sengine) {
  // Our rule: the other SEngine of the same die (bit 0 toggled).
  if (p.senginesPerMla < 2 || sengine < 0 || sengine >= p.senginesPerMla) return {};
  return {sengine ^ 1};
}

bool PlatformDescription::linked(int a, int b, EdgeLocality* locality) const {
  for (const auto& l : links) {
    if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) {
      if (locality) *locality = l.locality;
      return true;
    }
  }
  return false;
}

Result<PlatformDescription> describePlatform(Variant v, const DescribeOptions& opt) {
  const auto idx = static_cast<size_t>(v);
  if (idx >= platformTable().size())
    return fail(NRT_INVALID, "topo_neuron: unknown platform variant " + std::to_string(idx));
  const PlatformSpec& s = platformTable()[idx];
  const int n = opt.instanceDevices < 0 ? s.instanceDevices.back() : opt.instanceDevices;
  if (std::find(s.instanceDevices.begin(), s.instanceDevices.end(), n) == s.instanceDevices.end())
    return fail(NRT_INVALID, "topo_neuron: platform " + std::string(s.name) + " has no " +
                                 "instance with " + std::to_string(n) + " devices (it has " +
                                 joinInts(s.instanceDevices) + ")");
  const int lnc = opt.lnc < 0 ? s.defaultLnc : opt.lnc;
  if (std::find(s.lncModes.begin(), s.lncModes.end(), lnc) == s.lncModes.end())
    return fail(NRT_INVALID, "topo_neuron: platform " + std::string(s.name) +
                                 " does not support logical-core size " + std::to_string(lnc) +
                                 " (allowed: " + joinInts(s.lncModes) + ")");
  PlatformDescription d;
  d.variant = v;
  d.platform = s.platform;
  d.name = s.name;
  d.nDevices = n;
  d.coresPerDevice = s.coresPerDevice;
  d.lnc = lnc;
  d.vcoresPerDevice = s.coresPerDevice / lnc;
  d.mlasPerDevice = s.mlasPerDevice;
  d.senginesPerMla = s.senginesPerMla;
  d.ncPerSengine = s.ncPerSengine;
  if (n * d.vcoresPerDevice > 128)
    return fail(NRT_INVALID, "topo_neuron: " + std::to_string(n * d.vcoresPerDevice) +
                                 " vcores exceed the 128-vcore search limit");
  for (int dev = 0; dev < n; ++dev) {
    d.devices.push_back({dev, dev * s.mlasPerDevice, n >= 8 && dev >= n / 2 ? 1 : 0, 0});
    for (int j = 0; j < d.vcoresPerDevice; ++j) {
      const int nc = j * lnc;
      d.vcores.push_back({dev * d.vcoresPerDevice + j, dev, nc, lnc, nc / s.ncPerSengine});
    }
  }
  if (auto st = addLinks(s, d); !st) return st.take_error();
  int nics = opt.nics;
  if (nics < 0) {
    nics = s.platform == Platform::Emu ? std::max(1, n / 4)
                                       : s.nicsFullNode * n / s.instanceDevices.back();
  }
  if (auto st = addNics(nics, d); !st) return st.take_error();
  return d;
}

EdgeLocality intraDeviceLocality(const PlatformDescription& d, int vcoreA, int vcoreB) {
  const auto& a = d.vcores.at(vcoreA);
  const auto& b = d.vcores.at(vcoreB);
  if (d.senginesPerMla < 1) return EdgeLocality::Local;
  const int sa = a.sengine % d.senginesPerMla;
  const int sb = b.sengine % d.senginesPerMla;
  if (sa == sb) return EdgeLocality::SharedMemory;
  const PlatformSpec& s = platformSpec(d.variant);
  for (int p : d2dPeers(s, sa))
    if (p == sb) return EdgeLocality::D2D;
  for (int p : rmtvPeers(s, sa))
    if (p == sb) return EdgeLocality::RMTV;
  return EdgeLocality::Local;
}

}  // namespace nccom::topo_neuron
