// The cause of a failed libnccom call, as libnccom forwarded it (status.h).
#include "status.h"

#include "../runtime_log.h"

#include <cstdint>
#include <string>

namespace nrt_emu::engine {
namespace {

thread_local uint64_t t_call_mark = 0;

}  // namespace

void begin_call() { t_call_mark = log::mark(); }

std::string st(const char* what, NRT_STATUS s) {
  std::string text = std::string(what) + " returned status " + std::to_string(s);
  const std::string cause = log::nccom_cause(t_call_mark);
  return text +
         (cause.empty() ? " (libnccom forwarded no reason to the runtime log)" : ": " + cause);
}

Why split_cause(const std::string& message) {
  const std::string cause = log::nccom_cause(t_call_mark);
  if (!cause.empty() && message != cause) {
    const size_t at = message.rfind(": " + cause);
    if (at != std::string::npos)
      return {cause, message.substr(0, at) + message.substr(at + 2 + cause.size())};
  }
  return {message, ""};
}

std::string cause_first(const Why& why) {
  return why.context.empty() ? why.cause : why.cause + " (" + why.context + ")";
}

}  // namespace nrt_emu::engine
