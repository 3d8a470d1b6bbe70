// Neuron platform tables: what each instance family looks like to the topology
// stage — devices, NeuronCores, logical-core (LNC) modes, SEngine/MLA geometry,
// the intra-node device links and the NICs — and a neutral PlatformDescription
// that later code turns into topology XML.
//
// Numbers not known from the original are our decisions; each one is listed
// with its reason in docs/decisions/topo-neuron.md ("Platform geometry").
#pragma once

#include <nccom/util/result.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::topo_neuron {

// nrt_instance_info_t::family values (public nrt.h).
enum class InstanceFamily : uint32_t {
  Unknown = 0,
  Inf1 = 1,
  Trn1 = 2,
  Trn1n = 3,
  Inf2 = 4,
  Trn2 = 5,
  Trn2n = 6,
  Inf2e = 7,
  Trn2p = 8,
  Trn2u = 9,
  Trn3 = 10,
};

// nrt_instance_info_t::size values (public nrt.h).
enum class InstanceSize : uint32_t {
  XL1 = 0,
  XL2 = 1,
  XL4 = 2,
  XL6 = 3,
  XL8 = 4,
  XL24 = 5,
  XL32 = 6,
  XL48 = 7,
  XL3 = 8,
  Unknown = 9,
};

// The Neuron codenames (SUNDA, CAYMAN, MARIANA) plus EMU, our development hosts.
enum class Platform { Sunda, Cayman, Mariana, Emu };

// One row of the platform table: an instance kind with its own geometry.
enum class Variant { Trn1, Trn1n, Inf2, Trn2, Trn2UltraServer, Trn3, Trn3SwitchV1, Emu };

// Locality of a hop between two vcores/devices. The numeric order is the
// NEW search's tie-break: lower is preferred.
enum class EdgeLocality : int {
  SharedMemory = 0,  // same SEngine, or emulated devices sharing host memory
  RemoteMLA = 1,     // chip-to-chip (C2C) NeuronLink between two devices
  D2D = 2,           // cross-die inside one MLA (SEngine s <-> s ^ 2)
  RMTV = 3,          // same die, other SEngine; between devices: a NeuronSwitch hop
  Local = 4,         // anything else inside one device (through device memory)
};
const char* localityName(EdgeLocality l);

// How the devices of one instance are wired to each other.
enum class LinkLayout {
  None,               // a single device
  Ring,               // device i <-> i+1 (mod n)
  Torus4x4,           // 2-D 4x4 torus, row-major ids, 4 neighbours each
  AllToAll,           // every pair (emulated shared memory)
  Torus4x4PlusSwitch  // the torus plus a NeuronSwitch hop between every other pair
};

// Inter-node pod shape (UltraServer pods).
enum class PodLayout { None, Ring, AllToAll };

struct PlatformSpec {
  Variant variant;
  Platform platform;
  const char* name;        // "trn2", "trn3-switch-v1", ...
  const char* codename;    // "CAYMAN"
  const char* generation;  // "v3"
  std::vector<InstanceFamily> families;
  std::vector<int> instanceDevices;    // devices per instance, one entry per instance size
  std::vector<int> localDeviceCounts;  // legal devices of one node in a communicator
  int coresPerDevice;                  // physical NeuronCores per device
  std::vector<int> lncModes;           // NeuronCores per vcore (nec_get_virtual_core_size)
  int defaultLnc;
  int mlasPerDevice;
  int senginesPerMla;  // NeuronPlatform::get_sengine_num_per_mla()
  int ncPerSengine;
  int c2cPortsPerMla;  // 0 where the original's figure is unknown and we need none
  bool d2dXor2;        // d2d peer of SEngine s is s ^ 2 (Trn2/Trn3)
  LinkLayout layout;   // for the largest instance; smaller:
                       // docs/decisions/topo-neuron.md, "Intra-node links"
  int nicsFullNode;    // NICs on the largest instance; smaller: scaled down
  PodLayout pod;
  int podNodes;  // instances per pod (0: no pod)
};

// The whole table, one entry per Variant, in Variant order.
const std::vector<PlatformSpec>& platformTable();
const PlatformSpec& platformSpec(Variant v);

// instance info -> table row. `switchPod` is the pod type reported by the
// runtime being NEC_POD_TYPE_SWITCH (Trn3 on NeuronSwitch-v1).
Result<Variant> variantFromInstance(uint32_t family, bool switchPod);

// SEngine peers (the original's NeuronPlatform virtuals). Empty when none.
std::vector<int> d2dPeers(const PlatformSpec& p, int sengine);
std::vector<int> rmtvPeers(const PlatformSpec& p, int sengine);

// ---- The neutral description --------------------------------------------

struct DeviceDesc {
  int id;
  int mla;        // global MLA id (device * mlasPerDevice + local MLA); one MLA per device
  int numa;       // NUMA node the device hangs off
  int pciSwitch;  // PCIe switch id; NICs on the same switch are "near"
};

struct VcoreDesc {
  int id;  // global vcore id = device * vcoresPerDevice + index
  int device;
  int firstNc;  // first physical NeuronCore of the device it uses
  int ncCount;  // = LNC
  int sengine;  // SEngine of firstNc
};

struct LinkDesc {  // undirected device link
  int a;
  int b;
  EdgeLocality locality;
};

struct NicDesc {
  int id;
  int pciSwitch;
  int numa;
  std::vector<int> devices;  // devices on the same PCIe switch
};

struct PlatformDescription {
  Variant variant;
  Platform platform;
  std::string name;
  int nDevices = 0;
  int coresPerDevice = 0;
  int lnc = 1;
  int vcoresPerDevice = 0;
  int mlasPerDevice = 1;
  int senginesPerMla = 1;
  int ncPerSengine = 1;
  std::vector<DeviceDesc> devices;
  std::vector<VcoreDesc> vcores;
  std::vector<LinkDesc> links;
  std::vector<NicDesc> nics;

  int nVcores() const { return static_cast<int>(vcores.size()); }
  // Locality of the device link a-b, or nullptr-equivalent false if none.
  bool linked(int a, int b, EdgeLocality* locality = nullptr) const;
};

struct DescribeOptions {
  int instanceDevices = -1;  // -1: the platform's largest instance
  int lnc = -1;              // -1: the platform default
  int nics = -1;             // -1: the table's NIC count (EMU: one per 4 devices)
};

Result<PlatformDescription> describePlatform(Variant v, const DescribeOptions& opt = {});

// Locality of the hop between two vcores of the same device.
EdgeLocality intraDeviceLocality(const PlatformDescription& d, int vcoreA, int vcoreB);

}  // namespace nccom::topo_neuron
