// The call counter, and the error texts and mappings every file uses.
#include "common.h"

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace nccom::ofi {
namespace {

std::atomic<int> g_calls_in_flight{0};

}  // namespace

CallScope::CallScope() { g_calls_in_flight.fetch_add(1, std::memory_order_relaxed); }
CallScope::~CallScope() { g_calls_in_flight.fetch_sub(1, std::memory_order_relaxed); }
int CallScope::active() { return g_calls_in_flight.load(std::memory_order_relaxed); }

std::string fi_error_text(long rc) {
  long code = rc < 0 ? -rc : rc;
  char text[160];
  std::snprintf(text, sizeof text, "%s (%ld)", fi_strerror(static_cast<int>(code)), rc);
  return text;
}

ncclResult_t map_completion_error(int err) {
  switch (err < 0 ? -err : err) {
    case FI_ETRUNC:  // the peer sent more than the posted receive holds
    case FI_ECONNRESET:
    case FI_ECONNREFUSED:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_EHOSTUNREACH:
    case FI_EHOSTDOWN:
    case FI_ESHUTDOWN:
    case FI_ETIMEDOUT:
    case FI_ENOKEY:
    case FI_ENORX:
    case FI_ENETUNREACH:
    case FI_EREMOTEIO:
    case FI_EACCES:  // remote key / protection failures
    case FI_EIO: return ncclRemoteError;
    default: return ncclSystemError;
  }
}

}  // namespace nccom::ofi
