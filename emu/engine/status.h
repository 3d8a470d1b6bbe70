// The engine's error idiom: the host's [[nodiscard]] Result / Status
// (nccom/util/result.h). A function that can fail returns Status (or
// Result<T>); the one that first classifies the failure writes the message,
// callers add context in front and propagate. The C API (ccom_api.cc) hands
// the message out through nrt_emu_ccom_error and returns the status.
#pragma once

#include <nccom/util/result.h>

#include <string>
#include <utility>

namespace nrt_emu::engine {

using nccom::Error;
using nccom::Result;
using nccom::Status;

// A failure of the engine (NRT_FAILURE) saying what failed and where.
inline Error engine_error(std::string message) {
  return nccom::make_error(NRT_FAILURE, std::move(message));
}

// `e` with `context` in front of its message, its status kept.
inline Error with_context(const std::string& context, const Error& e) {
  return nccom::make_error(e.status, context + e.message);
}

}  // namespace nrt_emu::engine
