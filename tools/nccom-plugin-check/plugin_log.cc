#include "plugin_log.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace nccom::plugin_check {
namespace {

std::mutex g_mutex;
std::string g_last_warning;
bool g_verbose = false;
const char* g_who = "plugin";

const char* level_name(ncclDebugLogLevel level) {
  switch (level) {
    case NCCL_LOG_WARN: return "WARN";
    case NCCL_LOG_INFO: return "INFO";
    case NCCL_LOG_ABORT: return "ABORT";
    case NCCL_LOG_TRACE: return "TRACE";
    case NCCL_LOG_VERSION: return "VERSION";
    case NCCL_LOG_NONE: return "NONE";
  }
  return "?";
}

extern "C" void capture(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                        const char* fmt, ...) {
  char text[1024] = "(the plugin logged a NULL format)";
  if (fmt != nullptr) {
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (level == NCCL_LOG_WARN || level == NCCL_LOG_ABORT) g_last_warning = text;
  if (g_verbose) {
    std::fprintf(stderr, "[%s %s %s:%d] %s\n", g_who, level_name(level),
                 file != nullptr ? file : "?", line, text);
  }
  (void)flags;
}

}  // namespace

ncclDebugLogger_t plugin_logger() { return &capture; }

void set_verbose(bool verbose, const char* who) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_verbose = verbose;
  g_who = who;
}

std::string take_last_warning() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::string last;
  last.swap(g_last_warning);
  return last;
}

}  // namespace nccom::plugin_check
