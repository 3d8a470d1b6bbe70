// Helpers shared by the files that define the 37 neuron* exports.
#pragma once

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <cstdint>
#include <exception>
#include <new>

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
// and how many WARN lines the thread had given out when it began. Scopes
// nest (an export that calls another).
class CallScope {
 public:
  explicit CallScope(const char* export_name) noexcept;
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  friend NRT_STATUS fail(const Error& error) noexcept;
  const char* name_;
  std::uint64_t warns_at_start_;
  CallScope* outer_;
};

// The status of an export that ends with `error` (NRT_FAILURE for an error
// without one). The runtime reports a failed call with the WARN lines
// libnccom forwarded to it during the call (nec_ndl_printk), so a call that
// has not said why on this thread yet says it here, once, cause first:
// "<message> (<export>)". An error a lower layer already logged as WARN is
// not said twice.
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
