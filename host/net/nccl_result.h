// ncclResult_t (what net plugins answer) for messages and at the C boundary.
#pragma once

#include <nccom/net_common.h>
#include <nccom/nrt_abi.h>

#include <string>

namespace nccom::net {

// "3 (ncclInternalError)"; unknown values as "42 (unknown ncclResult_t)".
inline std::string result_text(ncclResult_t r) {
  const char* name = "unknown ncclResult_t";
  switch (r) {
    case ncclSuccess: name = "ncclSuccess"; break;
    case ncclUnhandledCudaError: name = "ncclUnhandledCudaError"; break;
    case ncclSystemError: name = "ncclSystemError"; break;
    case ncclInternalError: name = "ncclInternalError"; break;
    case ncclInvalidArgument: name = "ncclInvalidArgument"; break;
    case ncclInvalidUsage: name = "ncclInvalidUsage"; break;
    case ncclRemoteError: name = "ncclRemoteError"; break;
  }
  return std::to_string(static_cast<int>(r)) + " (" + name + ")";
}

// The mapping of the neuronNet* exports (docs/decisions.md, "Net plugins"):
// the caller's fault (ncclInvalidArgument, ncclInvalidUsage) is NRT_INVALID;
// everything else that is not success (system, internal, remote, unknown
// values) is NRT_FAILURE.
inline NRT_STATUS to_nrt_status(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return NRT_SUCCESS;
    case ncclInvalidArgument:
    case ncclInvalidUsage: return NRT_INVALID;
    default: return NRT_FAILURE;
  }
}

}  // namespace nccom::net
