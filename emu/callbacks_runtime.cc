// The 4 nrt_* runtime queries libnccom imports @NRT_2.0.0 and
// nec_ndl_printk, libnccom's way into the runtime log.
#include "export.h"
#include "knobs.h"
#include "nccom_loader.h"
#include "platform.h"
#include "runtime_log.h"

#include <nccom/nrt_abi.h>

#include <algorithm>
#include <cstring>
#include <string>

NRT_EMU_API NRT_STATUS nrt_get_total_vnc_count(uint32_t* count_out) {
  if (count_out == nullptr) return NRT_INVALID;
  // 0 means "no local vNC world": libnccom then runs its distributed
  // bootstrap (bootstrapInit's vNC gate). Tests set a count to skip it.
  const auto count = nrt_emu::knobs::integer_or_warn(nrt_emu::knobs::Var::kTotalVncCount, 0);
  if (!count) return NRT_INVALID;
  *count_out = static_cast<uint32_t>(*count);
  return NRT_SUCCESS;
}

NRT_EMU_API NRT_STATUS nrt_get_instance_info(nrt_instance_info_t* out, size_t out_len) {
  if (out == nullptr) return NRT_INVALID;
  const auto info = nrt_emu::platform::instance_info();
  if (!info) return NRT_INVALID;
  // Version-tolerant: an older, smaller caller struct gets only what fits.
  std::memcpy(out, &*info, std::min(out_len, sizeof *info));
  return NRT_SUCCESS;
}

NRT_EMU_API NRT_STATUS nrt_get_version(nrt_version_t* out, size_t out_len) {
  // The four numbers are the minimum a caller can ask for; rt_detail is
  // written only if out_len covers it, git_hash only if the whole struct
  // fits. Nothing is ever written past out_len.
  if (out == nullptr || out_len < offsetof(nrt_version_t, rt_detail)) return NRT_INVALID;
  const nrt_version_t v = nrt_emu::platform::runtime_version();
  std::memcpy(out, &v, offsetof(nrt_version_t, rt_detail));
  if (out_len >= offsetof(nrt_version_t, git_hash)) {
    std::memcpy(out->rt_detail, v.rt_detail, sizeof v.rt_detail);
  }
  if (out_len >= sizeof(nrt_version_t)) std::memcpy(out->git_hash, v.git_hash, sizeof v.git_hash);
  return NRT_SUCCESS;
}

NRT_EMU_API void* nrt_get_libnccl_net(int* err_out, char* err_msg, size_t err_msg_len) {
  auto plugin = nrt_emu::NccomLoader::instance().net_plugin();
  void* handle = plugin ? *plugin : nullptr;
  const std::string why = plugin ? std::string() : plugin.error().message;
  if (err_out != nullptr) *err_out = handle != nullptr ? 0 : 1;
  if (err_msg != nullptr && err_msg_len > 0) {
    const size_t n = std::min(why.size(), err_msg_len - 1);
    std::memcpy(err_msg, why.data(), n);
    err_msg[n] = '\0';
  }
  return handle;
}

// `action` is recorded with each line; the original's meaning of it is not
// known, so the emu does not interpret it.
NRT_EMU_API void nec_ndl_printk(char* str, uint32_t size, uint32_t action) {
  nrt_emu::log::nccom_text(str, size, action);
}
