// The engine's error idiom: the host's [[nodiscard]] Result / Status
// (nccom/util/result.h). A function that can fail returns Status (or
// Result<T>); the one that first classifies the failure writes the message,
// callers add context in front and propagate. The C API (ccom_api.cc) hands
// the message out through nrt_emu_ccom_error and returns the status. A
// failed libnccom call's message carries the cause libnccom forwarded (st).
#pragma once

#include <nccom/nrt_abi.h>
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

// Marks the start of an engine call on this thread (each nrt_emu_ccom_*
// entry point): st() names the cause libnccom forwarded since then.
void begin_call();
// "what returned status N: <the cause libnccom gave>", the way a runtime
// reports a failed libnccom call; libnccom forwards its WARN lines through
// nec_ndl_printk, so the text crosses the ABI with the status. This is the
// inside of an error; what a caller reads is cause-first (cause_first).
std::string st(const char* what, NRT_STATUS s);

// An error of this call split into its innermost cause and the context the
// engine wrapped around it: when libnccom forwarded a reason during the call
// (the newest WARN line since begin_call, preferring this thread's) and the
// message holds it after ": ", that reason is the cause and the rest of the
// message its context ("neuronInitGlobalComm returned status 2"); else the
// whole message is the cause.
struct Why {
  std::string cause;
  std::string context;  // "" when there is none
};
Why split_cause(const std::string& message);
// "CAUSE (CONTEXT)", or CAUSE alone.
std::string cause_first(const Why& why);

}  // namespace nrt_emu::engine
