// What every file of the libfabric net plugin shares: the status type, the
// logger given to init, RAII owners for libfabric objects, and the limits.
//
// The plugin never prints: every message goes through the SDK's logger
// (nccom/util/log.h) to the ncclDebugLogger_t the host passed to init
// (nothing is logged before init or after fini).
#pragma once

#include <nccom/net_common.h>
#include <nccom/util/log.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <cstdint>
#include <memory>
#include <string>

namespace nccom::ofi {

// The one result type inside the plugin. The ABI shims return code().
class [[nodiscard]] Status {
 public:
  constexpr Status(ncclResult_t code = ncclSuccess) : code_(code) {}
  constexpr bool ok() const { return code_ == ncclSuccess; }
  constexpr ncclResult_t code() const { return code_; }

 private:
  ncclResult_t code_;
};

// ---- logging -------------------------------------------------------------
// The function that classifies an error logs it with OFI_WARN; callers only
// propagate the Status.
#define OFI_WARN(...) NCCOM_SDK_WARN(__VA_ARGS__)
#define OFI_INFO(subsys, ...) NCCOM_SDK_INFO((subsys), __VA_ARGS__)

// "Operation not permitted (-1)"-style text for a negative libfabric code.
std::string fi_error_text(long rc);

// Counts calls into the plugin that are in progress (every ABI shim holds
// one). At process exit the plugin only tears libfabric down when none is:
// exit() from a signal handler that interrupted a libfabric call would
// otherwise deadlock on the provider's own locks.
class CallScope {
 public:
  CallScope();
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  static int active();
};

// ---- RAII owners for libfabric objects -------------------------------------
template <class T>
struct FidCloser {
  void operator()(T* object) const noexcept {
    if (object != nullptr) (void)fi_close(&object->fid);
  }
};
template <class T>
using FidPtr = std::unique_ptr<T, FidCloser<T>>;

using FabricPtr = FidPtr<fid_fabric>;
using DomainPtr = FidPtr<fid_domain>;
using CqPtr = FidPtr<fid_cq>;
using AvPtr = FidPtr<fid_av>;
using EpPtr = FidPtr<fid_ep>;
using MrPtr = FidPtr<fid_mr>;

struct InfoFree {
  void operator()(fi_info* info) const noexcept { fi_freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoFree>;

// ---- limits and constants ----------------------------------------------------
// The libfabric API version we ask for: the one of the headers we build with.
constexpr uint32_t kFiApiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
constexpr int kMaxRequests = NCCL_NET_MAX_REQUESTS;
constexpr int kMaxRails = 64;

// Tag layout (64-bit tags; every provider used here matches all 64 bits):
//   bit 62      control (connect messages) vs data
//   bits 32..58 id of the receiving comm (27 bits)
//   bits 0..31  the caller's tag
constexpr uint64_t kControlTagBit = 1ull << 62;
constexpr uint32_t kCommIdMask = (1u << 27) - 1;
inline uint64_t data_tag(uint32_t comm_id, int tag) {
  return (uint64_t{comm_id & kCommIdMask} << 32) | static_cast<uint32_t>(tag);
}
inline uint64_t control_tag(uint32_t comm_id) {
  return kControlTagBit | (uint64_t{comm_id & kCommIdMask} << 32);
}

// Map a libfabric error (positive errno from a CQ error entry) to the ABI:
// the peer's doing → ncclRemoteError, anything else → ncclSystemError.
ncclResult_t map_completion_error(int err);

}  // namespace nccom::ofi
