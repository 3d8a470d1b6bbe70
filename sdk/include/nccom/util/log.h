// nccom/util/log.h — how plugin code and the SDK's utility libraries log.
//
// C++17. Each shared object (a plugin, or libnccom itself) has one logger:
// the nccom_log_fn the host handed over (nccom_host_api_t::log for an
// nccom-native plugin, the ncclDebugLogger_t given to an ncclNet plugin's
// init, which has the same shape). Install it once with set_logger(); the
// macros below then reach the host's log, which applies NCCL_DEBUG,
// NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE and prints the libnccom line format.
//
// Before a logger is installed, WARN lines go to stderr (so an early failure
// is never silent) and INFO/TRACE lines are dropped.
//
//   NCCOM_SDK_WARN("cannot open %s", path);
//   NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH, "trimmed %d GPUs", n);
#pragma once

#include <nccom/plugin.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

// NCCL_DEBUG_SUBSYS bits (the values of NCCL's ncclDebugLogSubSys).
#define NCCOM_SUBSYS_INIT 1ul
#define NCCOM_SUBSYS_COLL 2ul
#define NCCOM_SUBSYS_P2P 4ul
#define NCCOM_SUBSYS_SHM 8ul
#define NCCOM_SUBSYS_NET 16ul
#define NCCOM_SUBSYS_GRAPH 32ul
#define NCCOM_SUBSYS_TUNING 64ul
#define NCCOM_SUBSYS_ENV 128ul
#define NCCOM_SUBSYS_ALLOC 256ul
#define NCCOM_SUBSYS_PROXY 1024ul
#define NCCOM_SUBSYS_BOOTSTRAP 4096ul
#define NCCOM_SUBSYS_ALL (~0ul)

namespace nccom::util {

// nccom_log_fn without its printf attribute, which a template argument
// cannot carry (the macros below keep the format checking: they expand to a
// call through nccom_log_fn).
using LogFnPlain = void (*)(nccom_log_level_t, unsigned long, const char*, int, const char*, ...);

// The logger of this shared object (hidden visibility keeps one per object).
inline std::atomic<LogFnPlain> g_logger{nullptr};

// Installs the host's logger; nullptr restores the stderr-for-WARN default.
inline void set_logger(nccom_log_fn fn) { g_logger.store(fn, std::memory_order_release); }
inline nccom_log_fn logger() { return g_logger.load(std::memory_order_acquire); }

// Used by the macros when no logger is installed.
inline void log_unset(nccom_log_level_t level, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
inline void log_unset(nccom_log_level_t level, const char* file, int line, const char* fmt, ...) {
  if (level != NCCOM_LOG_LEVEL_WARN) return;
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  std::fprintf(stderr, "nccom WARN %s:%d %s\n", file, line, text);
}

}  // namespace nccom::util

#define NCCOM_SDK_LOG(level, subsys, ...)                                 \
  do {                                                                    \
    nccom_log_fn nccom_log_fn_ = ::nccom::util::logger();                 \
    if (nccom_log_fn_ != nullptr)                                         \
      nccom_log_fn_((level), (subsys), __FILE__, __LINE__, __VA_ARGS__);  \
    else                                                                  \
      ::nccom::util::log_unset((level), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define NCCOM_SDK_WARN(...) NCCOM_SDK_LOG(NCCOM_LOG_LEVEL_WARN, NCCOM_SUBSYS_ALL, __VA_ARGS__)
#define NCCOM_SDK_INFO(subsys, ...) NCCOM_SDK_LOG(NCCOM_LOG_LEVEL_INFO, (subsys), __VA_ARGS__)
#define NCCOM_SDK_TRACE(subsys, ...) NCCOM_SDK_LOG(NCCOM_LOG_LEVEL_TRACE, (subsys), __VA_ARGS__)
