// The emulated instance: which Neuron platform the reference runtime claims
// to be (NEURON_RT_EMU_PLATFORM) and the runtime's own version.
#pragma once

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <optional>
#include <string>

namespace nrt_emu::platform {

// Instance family values of the public nrt.h.
enum Family : uint32_t {
  kFamilyUnknown = 0,
  kFamilyTrn1 = 2,
  kFamilyTrn1n = 3,
  kFamilyInf2 = 4,
  kFamilyTrn2 = 5,
  kFamilyTrn2u = 9,
  kFamilyTrn3 = 10
};

// Instance size values of the public nrt.h.
enum Size : uint32_t { kSize32xl = 6, kSize48xl = 7, kSizeUnknown = 9 };

// One emulated platform. `devices` / `lnc` = 0: any value of the knob is
// accepted; otherwise the platform exists only with that value (and it is
// the default when the knob is unset).
struct Spec {
  const char* name;  // NEURON_RT_EMU_PLATFORM value
  uint32_t family;
  uint32_t size;
  const char* arch;      // nrt_instance_info_t.arch_name
  const char* revision;  // device_revision: the generation tag
  nec_pod_type_t pod_type;
  int pod_nodes;         // nodes of the pod this host belongs to (1 when pod_type is NONE)
  int cores_per_device;  // physical NeuronCores per device
  int devices;
  int lnc;
};

// The platform NEURON_RT_EMU_PLATFORM names (default emu), or nullptr (one
// WARN line naming the known ones) when it names none.
const Spec* current();

// The instance info of the current platform, or nullopt (logged).
std::optional<nrt_instance_info_t> instance_info();

// NEURON_RT_VIRTUAL_CORE_SIZE checked against the current platform: its
// value (default: the platform's LNC, else 1), or nullopt with one WARN line
// saying what to set (a value outside 1..2, or not the platform's only LNC).
std::optional<uint32_t> virtual_core_size();

// OK when the environment describes a possible host (platform known, device
// count and LNC allowed on it), else what is wrong and what to set.
nccom::Status check_configuration();

// The full nrt_version_t this runtime reports (2.31.24.0, its build hash).
nrt_version_t runtime_version();

// The runtime's build hash: the tree's short git hash, at least 8 characters.
const char* git_hash();

}  // namespace nrt_emu::platform
