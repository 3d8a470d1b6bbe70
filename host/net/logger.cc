#include "net/logger.h"

#include "log/log.h"

#include <cstdarg>
#include <cstring>

namespace nccom::net {
namespace {

// Plugin levels are ncclDebugLogLevel, whose values log::Level shares;
// anything outside the known range is shown as INFO rather than dropped.
// Taken as the integer the plugin passed: a third-party plugin's garbage
// level must not be read as an enum value it is not.
log::Level to_level(int level) {
  switch (level) {
    case NCCL_LOG_VERSION: return log::Level::Version;
    case NCCL_LOG_WARN: return log::Level::Warn;
    case NCCL_LOG_INFO: return log::Level::Info;
    case NCCL_LOG_ABORT: return log::Level::Abort;
    case NCCL_LOG_TRACE: return log::Level::Trace;
    case NCCL_LOG_NONE: return log::Level::None;
  }
  return log::Level::Info;
}

void message_with_no_format(log::Level level, unsigned long flags, const char* file, int line,
                            ...) {
  va_list args;
  va_start(args, line);
  log::vmessage(level, flags, file, line, "(net plugin logged a NULL format)", args);
  va_end(args);
}

extern "C" void nccom_net_plugin_log(ncclDebugLogLevel level, unsigned long flags, const char* file,
                                     int line, const char* fmt, ...) {
  int raw = 0;
  static_assert(sizeof raw == sizeof level);
  std::memcpy(&raw, &level, sizeof raw);  // the bits, without an enum load
  const log::Level mapped = to_level(raw);
  if (mapped == log::Level::None || !log::enabled(mapped, flags)) return;
  if (fmt == nullptr) {
    message_with_no_format(mapped, flags, file, line);
    return;
  }
  va_list args;
  va_start(args, fmt);
  log::vmessage(mapped, flags, file, line, fmt, args);
  va_end(args);
}

}  // namespace

ncclDebugLogger_t plugin_logger() { return &nccom_net_plugin_log; }

}  // namespace nccom::net
