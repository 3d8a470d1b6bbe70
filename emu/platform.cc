#include "platform.h"

#include "knobs.h"
#include "runtime_log.h"

#include <cstring>
#include <string>

extern "C" const char nccom_build_git_hash[];  // generated: cmake/WriteBuildId.cmake

namespace nrt_emu::platform {
namespace {

// Sizes are the largest instance of each family (trn1.32xlarge,
// trn1n.32xlarge, inf2.48xlarge, trn2.48xlarge, trn2u.48xlarge); Trn3's
// instance size is not known, hence UNKNOWN. trn2-ultraserver is a Trn2 node
// of a P2P pod of 4 (the pod type in the device info says so, as on the
// hardware); the emulated host is the pod's node given by its host index.
// trn3-switch-v1 is a Trn3 node of a NeuronSwitch pod (neuronIsTrn3SwitchV1Family):
// libnccom tells it from trn3 only by the pod type in the device info, and
// it exists with 16 devices and LNC 2 only
// (docs/decisions/topo-neuron.md, "Trn3 Switch-V1 is LNC 2 only").
// Its pod is this one node: the emu has no second node to switch to.
constexpr Spec kPlatforms[] = {
    {"emu", kFamilyUnknown, kSizeUnknown, "emu", "emu", NEC_POD_TYPE_NONE, 1, 2, 0, 0},
    {"trn1", kFamilyTrn1, kSize32xl, "trn1", "v2", NEC_POD_TYPE_NONE, 1, 2, 0, 0},
    {"trn1n", kFamilyTrn1n, kSize32xl, "trn1", "v2", NEC_POD_TYPE_NONE, 1, 2, 0, 0},
    {"inf2", kFamilyInf2, kSize48xl, "inf2", "v2", NEC_POD_TYPE_NONE, 1, 2, 0, 0},
    {"trn2", kFamilyTrn2, kSize48xl, "trn2", "v3", NEC_POD_TYPE_NONE, 1, 8, 0, 0},
    {"trn2-ultraserver", kFamilyTrn2u, kSize48xl, "trn2", "v3", NEC_POD_TYPE_P2P, 4, 8, 0, 0},
    {"trn3", kFamilyTrn3, kSizeUnknown, "trn3", "v4", NEC_POD_TYPE_NONE, 1, 8, 0, 0},
    {"trn3-switch-v1", kFamilyTrn3, kSizeUnknown, "trn3", "v4", NEC_POD_TYPE_SWITCH, 1, 8, 16, 2},
};

constexpr const char* kKnown =
    "emu, trn1, trn1n, inf2, trn2, trn2-ultraserver, trn3 or trn3-switch-v1";

template <std::size_t N>
void copy_text(char (&field)[N], const char* text) {
  std::memset(field, 0, N);
  std::strncpy(field, text, N - 1);
}

const Spec* find(std::string_view wanted) {
  for (const Spec& p : kPlatforms) {
    if (wanted == p.name) return &p;
  }
  return nullptr;
}

}  // namespace

const Spec* current() {
  const std::string_view wanted = knobs::text(knobs::Var::kPlatform).value_or("emu");
  const Spec* p = find(wanted);
  if (p == nullptr) {
    log::message(log::Level::Warn, "NEURON_RT_EMU_PLATFORM=%.*s is not a known platform: use %s",
                 static_cast<int>(wanted.size()), wanted.data(), kKnown);
  }
  return p;
}

std::optional<nrt_instance_info_t> instance_info() {
  const Spec* p = current();
  if (p == nullptr) return std::nullopt;
  nrt_instance_info_t info{};
  info.family = p->family;
  info.size = p->size;
  copy_text(info.arch_name, p->arch);
  copy_text(info.device_revision, p->revision);
  return info;
}

std::optional<uint32_t> virtual_core_size() {
  const Spec* p = current();
  const long fallback = p != nullptr && p->lnc != 0 ? p->lnc : 1;
  const auto size = knobs::integer_or_warn(knobs::Var::kVirtualCoreSize, fallback);
  if (!size) return std::nullopt;
  if (p != nullptr && p->lnc != 0 && *size != p->lnc) {
    log::message(
        log::Level::Warn,
        "NEURON_RT_EMU_PLATFORM=%s runs LNC %d only: set NEURON_RT_VIRTUAL_CORE_SIZE=%d (or "
        "unset it), not %lld",
        p->name, p->lnc, p->lnc, *size);
    return std::nullopt;
  }
  return static_cast<uint32_t>(*size);
}

nccom::Status check_configuration() {
  const std::string_view wanted = knobs::text(knobs::Var::kPlatform).value_or("emu");
  const Spec* p = find(wanted);
  if (p == nullptr)
    return nccom::make_error(NRT_INVALID, "NEURON_RT_EMU_PLATFORM=" + std::string(wanted) +
                                              " is not a known platform: use " + kKnown);
  if (p->lnc != 0) {
    std::string why;
    if (const auto lnc = knobs::text(knobs::Var::kVirtualCoreSize);
        lnc && knobs::integer(knobs::Var::kVirtualCoreSize, 0, why) != p->lnc)
      return nccom::make_error(
          NRT_INVALID, "NEURON_RT_EMU_PLATFORM=" + std::string(p->name) + " runs LNC " +
                           std::to_string(p->lnc) + " only: set NEURON_RT_VIRTUAL_CORE_SIZE=" +
                           std::to_string(p->lnc) + " (or unset it), not " + std::string(*lnc));
  }
  if (p->devices != 0) {
    std::string why;
    if (const auto d = knobs::text(knobs::Var::kDevices);
        d && knobs::integer(knobs::Var::kDevices, 0, why) != p->devices)
      return nccom::make_error(
          NRT_INVALID,
          "NEURON_RT_EMU_PLATFORM=" + std::string(p->name) + " has " + std::to_string(p->devices) +
              " devices per node: set NEURON_RT_EMU_DEVICES=" + std::to_string(p->devices) +
              " (or unset it), not " + std::string(*d));
  }
  return {};
}

const char* git_hash() {
  // libnccom keeps the first 8 bytes as the runtime's hash (nrt_version_t.git_hash), so
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
