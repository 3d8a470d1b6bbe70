#include "abi/export.h"

#include "log/log.h"

namespace nccom::abi {
namespace {
thread_local CallScope* t_scope = nullptr;  // the innermost export running on this thread
}  // namespace

CallScope::CallScope(const char* export_name) noexcept
    : name_(export_name),
      outer_scope_(t_scope),
      outer_observer_(log::set_thread_warn_observer(this)) {
  t_scope = this;
}

CallScope::~CallScope() {
  log::set_thread_warn_observer(outer_observer_);
  t_scope = outer_scope_;
}

void CallScope::warned(std::string_view text) noexcept {
  try {
    last_warn_.assign(text);
  } catch (...) {
    last_warn_.clear();  // memory is short: the export says its cause again
  }
  if (outer_observer_ != nullptr) outer_observer_->warned(text);
}

NRT_STATUS fail(const Error& error) noexcept {
  const NRT_STATUS status = error.status == NRT_SUCCESS ? NRT_FAILURE : error.status;
  const CallScope* scope = t_scope;
  const char* name = scope != nullptr ? scope->name_ : "libnccom";
  if (scope != nullptr && !error.message.empty() &&
      scope->last_warn_.find(error.message) != std::string::npos) {
    return status;
  }
  try {
    if (error.message.empty()) {
      NCCOM_WARN("failed with status %d, no reason given (%s)", static_cast<int>(status), name);
    } else {
      NCCOM_WARN("%s (%s)", error.message.c_str(), name);
    }
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
