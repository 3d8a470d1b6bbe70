// The emulated instance: which Neuron platform the reference runtime claims
// to be (NEURON_RT_EMU_PLATFORM) and the runtime's own version.
#pragma once

#include <nccom/nrt_abi.h>

#include <optional>

namespace nrt_emu::platform {

// Instance family values of the public nrt.h (topology.md §2.1).
enum Family : uint32_t { kFamilyUnknown = 0, kFamilyTrn1 = 2, kFamilyTrn2 = 5, kFamilyTrn3 = 10 };

// Instance size values of the public nrt.h.
enum Size : uint32_t { kSize32xl = 6, kSize48xl = 7, kSizeUnknown = 9 };

// The instance info for NEURON_RT_EMU_PLATFORM, or nullopt (logged) when the
// variable names no known platform.
std::optional<nrt_instance_info_t> instance_info();

// The full nrt_version_t this runtime reports (2.31.24.0, its build hash).
nrt_version_t runtime_version();

// The runtime's build hash: the tree's short git hash, at least 8 characters.
const char* git_hash();

}  // namespace nrt_emu::platform
