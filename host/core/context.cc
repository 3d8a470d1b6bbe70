#include "core/context.h"

#include "abi/export.h"
#include "core/runtime.h"
#include "log/log.h"

#include <mutex>
#include <set>
#include <string>

namespace nccom::core {
namespace {

// WARN lines also go to the driver log (nec_ndl_printk, abi.md §5.2); see
// docs/decisions.md for the action value.
void forward_to_runtime(const char* line, std::size_t length) {
  runtime::api().nec_ndl_printk(const_cast<char*>(line), static_cast<uint32_t>(length), 0);
}

Status initialize() {
  log::set_warn_sink(&forward_to_runtime);
  return {};
}

}  // namespace

Status ensure_initialized() {
  static std::once_flag once;
  static Status outcome;
  std::call_once(once, [] { outcome = initialize(); });
  return outcome;
}

}  // namespace nccom::core

namespace nccom::abi {

NRT_STATUS not_implemented(const char* export_name, int issue, NRT_STATUS status) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  (void)core::ensure_initialized();
  bool first = false;
  {
    std::lock_guard lock(mutex);
    first = reported.insert(export_name).second;
  }
  if (first) {
    NCCOM_WARN("%s is not implemented yet in this nccom build (tracked by issue #%d); "
               "returning NRT_STATUS %d",
               export_name, issue, static_cast<int>(status));
  }
  return status;
}

}  // namespace nccom::abi
