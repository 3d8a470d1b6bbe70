// Helpers shared by the files that define the 37 neuron* exports.
#pragma once

#include "log/log.h"

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <exception>
#include <new>
#include <string>
#include <string_view>

// Every export is a plain, unversioned C function with default visibility;
// host/libnccom.map is what finally decides the dynamic symbol table.
#define NCCOM_API extern "C" __attribute__((visibility("default")))

namespace nccom::abi {

// The status and WARN line of an export whose body threw: NRT_RESOURCE for
// an allocation that failed, NRT_FAILURE for anything else. Never throws
// (under memory exhaustion the line may be shortened or lost, the status
// never is).
NRT_STATUS exception_status(const char* export_name, const std::exception* e,
                            bool out_of_memory) noexcept;

// The export running on this thread, while guard() runs its body: its name
// and the last WARN line the thread gave out during the call. Scopes nest
// (an export that calls another); an inner call's lines count for the
// outer one too.
class CallScope final : private log::WarnObserver {
 public:
  explicit CallScope(const char* export_name) noexcept;
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  friend NRT_STATUS fail(const Error& error) noexcept;
  void warned(std::string_view text) noexcept override;
  const char* name_;
  std::string last_warn_;  // "" when none yet
  CallScope* outer_scope_;
  log::WarnObserver* outer_observer_;
};

// The status of an export that ends with `error` (NRT_FAILURE for an error
// without one). The runtime reports a failed call with the WARN lines
// libnccom forwarded to it during the call (nec_ndl_printk), the newest
// first, so a call whose last WARN line does not already hold the error's
// message says it here, cause first: "<message> (<export>)". An error a
// lower layer logged as its last word is not said twice.
NRT_STATUS fail(const Error& error) noexcept;

// Runs an export's body: no exception crosses the C boundary, where it
// would end the runtime's process (std::terminate).
template <class Body>
NRT_STATUS guard(const char* export_name, Body&& body) noexcept {
  const CallScope scope(export_name);
  try {
    return body();
  } catch (const std::bad_alloc& e) {
    return exception_status(export_name, &e, true);
  } catch (const std::exception& e) {
    return exception_status(export_name, &e, false);
  } catch (...) {
    return exception_status(export_name, nullptr, false);
  }
}

}  // namespace nccom::abi
