#include "log.h"

#include <atomic>

namespace nccom::p2p {
namespace {
std::atomic<void*> g_logger{nullptr};  // nccom_log_fn (attributes do not fit atomic<>)
}  // namespace

void set_logger(nccom_log_fn fn) {
  g_logger.store(reinterpret_cast<void*>(fn), std::memory_order_release);
}
nccom_log_fn logger() {
  return reinterpret_cast<nccom_log_fn>(g_logger.load(std::memory_order_acquire));
}

}  // namespace nccom::p2p
