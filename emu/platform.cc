#include "platform.h"

#include "env.h"
#include "runtime_log.h"

#include <cstring>
#include <string>

extern "C" const char nccom_build_git_hash[];  // generated: cmake/WriteBuildId.cmake

namespace nrt_emu::platform {
namespace {

struct PlatformSpec {
  const char* name;      // NEURON_RT_EMU_PLATFORM value and arch_name
  uint32_t family;
  uint32_t size;
  const char* revision;  // device_revision: the generation tag (topology.md §2.1)
};

// Sizes are the largest instance of each family (trn1.32xlarge,
// trn2.48xlarge); Trn3's instance size is not in the spec, hence UNKNOWN.
constexpr PlatformSpec kPlatforms[] = {
    {"emu", kFamilyUnknown, kSizeUnknown, "emu"},
    {"trn1", kFamilyTrn1, kSize32xl, "v2"},
    {"trn2", kFamilyTrn2, kSize48xl, "v3"},
    {"trn3", kFamilyTrn3, kSizeUnknown, "v4"},
};

template <std::size_t N>
void copy_text(char (&field)[N], const char* text) {
  std::memset(field, 0, N);
  std::strncpy(field, text, N - 1);
}

}  // namespace

std::optional<nrt_instance_info_t> instance_info() {
  const std::string_view wanted = env::get("NEURON_RT_EMU_PLATFORM").value_or("emu");
  for (const PlatformSpec& p : kPlatforms) {
    if (wanted != p.name) continue;
    nrt_instance_info_t info{};
    info.family = p.family;
    info.size = p.size;
    copy_text(info.arch_name, p.name);
    copy_text(info.device_revision, p.revision);
    return info;
  }
  log::message(log::Level::Warn,
               "NEURON_RT_EMU_PLATFORM=%.*s is not a known platform: use emu, trn1, trn2 or trn3",
               static_cast<int>(wanted.size()), wanted.data());
  return std::nullopt;
}

const char* git_hash() {
  // libnccom keeps the first 8 bytes as the runtime's hash (abi.md §6.2), so
  // a shorter build id ("nogit" outside a repository) is padded with '0'.
  static const std::string hash = [] {
    std::string h = nccom_build_git_hash;
    if (h.size() < 8) h.append(8 - h.size(), '0');
    return h;
  }();
  return hash.c_str();
}

nrt_version_t runtime_version() {
  nrt_version_t v{};
  v.rt_major = 2;
  v.rt_minor = 31;
  v.rt_patch = 24;
  v.rt_maintenance = 0;
  copy_text(v.rt_detail, "nccom reference runtime (CPU emulation of libnrt 2.31.24.0)");
  copy_text(v.git_hash, git_hash());
  return v;
}

}  // namespace nrt_emu::platform
