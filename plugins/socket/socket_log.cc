#include "socket_log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace nccom::socket {
namespace {
std::atomic<ncclDebugLogger_t> g_logger{nullptr};
}  // namespace

void set_logger(ncclDebugLogger_t logger) { g_logger.store(logger, std::memory_order_release); }

void log_message(ncclDebugLogLevel level, const char* file, int line, const char* fmt, ...) {
  ncclDebugLogger_t logger = g_logger.load(std::memory_order_acquire);
  if (logger == nullptr) return;
  char text[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  logger(level, NCCL_NET, file, line, "%s", text);
}

}  // namespace nccom::socket
