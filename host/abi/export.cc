#include "abi/export.h"

#include "log/log.h"

namespace nccom::abi {
namespace {
thread_local CallScope* t_scope = nullptr;  // the innermost export running on this thread
}  // namespace

CallScope::CallScope(const char* export_name) noexcept
    : name_(export_name), warns_at_start_(log::thread_warn_count()), outer_(t_scope) {
  t_scope = this;
}

CallScope::~CallScope() { t_scope = outer_; }

NRT_STATUS fail(const Error& error) noexcept {
  const NRT_STATUS status = error.status == NRT_SUCCESS ? NRT_FAILURE : error.status;
  const CallScope* scope = t_scope;
  if (scope != nullptr && log::thread_warn_count() != scope->warns_at_start_) return status;
  try {
    NCCOM_WARN("%s (%s)", error.message.c_str(), scope != nullptr ? scope->name_ : "libnccom");
  } catch (...) {
    // The line could not be written (memory is short): the status still says it.
  }
  return status;
}

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
