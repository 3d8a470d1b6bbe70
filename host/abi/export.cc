#include "abi/export.h"

#include "log/log.h"

namespace nccom::abi {

NRT_STATUS exception_status(const char* export_name, const std::exception* e,
                            bool out_of_memory) noexcept {
  try {
    if (out_of_memory) {
      NCCOM_WARN(
          "%s: out of memory (an allocation failed: is the process's address space or memory "
          "limited, e.g. ulimit -v?); the call failed and changed nothing it could not undo",
          export_name);
    } else {
      NCCOM_WARN("%s: internal error: %s; the call failed", export_name,
                 e != nullptr ? e->what() : "an exception of unknown type");
    }
  } catch (...) {
    // The line could not be written (memory is short): the status still says it.
  }
  return out_of_memory ? NRT_RESOURCE : NRT_FAILURE;
}

}  // namespace nccom::abi
