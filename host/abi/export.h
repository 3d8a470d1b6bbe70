// Helpers shared by the files that define the 37 neuron* exports.
#pragma once

#include <nccom/nrt_abi.h>

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

// Runs an export's body: no exception crosses the C boundary, where it
// would end the runtime's process (std::terminate).
template <class Body>
NRT_STATUS guard(const char* export_name, Body&& body) noexcept {
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
