#include "abi/export.h"
#include "core/context.h"
#include "log/log.h"

#include <mutex>
#include <set>
#include <string>

namespace nccom::abi {

NRT_STATUS not_implemented(const char* export_name, int issue, NRT_STATUS status) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  (void)core::Context::get();  // logging follows the configuration
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
