// nccom/util/log.h — how plugin code and the SDK's utility libraries log.
//
// C++17. Each shared object (a plugin, or libnccom itself) has one logger:
// the one the host handed over — nccom_host_api_t::log for an nccom-native
// plugin, the ncclDebugLogger_t given to an ncclNet plugin's init. Install it
// once with set_logger(); the macros below then reach the host's log, which
// applies NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE and prints the
// libnccom line format. clear_logger() (at fini) stops logging again.
//
// Plugins never print on their own: with no logger installed (before init,
// after fini) the lines are dropped. The message is formatted here and
// handed over as "%s", so no text that came from a peer or a file is ever
// read as a format by the host.
//
//   NCCOM_SDK_WARN("cannot open %s", path);
//   NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH, "trimmed %d GPUs", n);
//
// A plugin that tags its lines ("NET/Socket : ...") wraps the macros with a
// string literal in front of the format.
#pragma once

#include <nccom/net_common.h>
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

// The two logger shapes without their printf attribute, which a template
// argument cannot carry (formatting is checked on log_line instead).
using HostLogFn = void (*)(nccom_log_level_t, unsigned long, const char*, int, const char*, ...);
using NetLogFn = void (*)(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...);

// The logger of this shared object (hidden visibility keeps one per object);
// at most one of the two is set.
inline std::atomic<HostLogFn> g_host_logger{nullptr};
inline std::atomic<NetLogFn> g_net_logger{nullptr};

inline void clear_logger() {
  g_host_logger.store(nullptr, std::memory_order_release);
  g_net_logger.store(nullptr, std::memory_order_release);
}
// nccom-native plugins: nccom_host_api_t::log.
inline void set_logger(nccom_log_fn fn) {
  clear_logger();
  g_host_logger.store(fn, std::memory_order_release);
}
// ncclNet plugins: the logger given to init (same line, NCCL's level enum).
inline void set_logger(ncclDebugLogger_t fn) {
  clear_logger();
  g_net_logger.store(fn, std::memory_order_release);
}
inline bool has_logger() {
  return g_host_logger.load(std::memory_order_acquire) != nullptr ||
         g_net_logger.load(std::memory_order_acquire) != nullptr;
}

// Longest line handed over; a longer one is cut.
inline constexpr std::size_t kLogLineMax = 1024;

inline void log_line(nccom_log_level_t level, unsigned long subsys, const char* file, int line,
                     const char* fmt, ...) __attribute__((format(printf, 5, 6)));
inline void log_line(nccom_log_level_t level, unsigned long subsys, const char* file, int line,
                     const char* fmt, ...) {
  const HostLogFn host = g_host_logger.load(std::memory_order_acquire);
  const NetLogFn net = g_net_logger.load(std::memory_order_acquire);
  if (host == nullptr && net == nullptr) return;
  char text[kLogLineMax];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  if (host != nullptr) {
    host(level, subsys, file, line, "%s", text);
  } else {
    // nccom_log_level_t uses ncclDebugLogLevel's numbers (WARN 2, INFO 3, TRACE 5).
    net(static_cast<ncclDebugLogLevel>(level), subsys, file, line, "%s", text);
  }
}

}  // namespace nccom::util

#define NCCOM_SDK_LOG(level, subsys, ...) \
  ::nccom::util::log_line((level), (subsys), __FILE__, __LINE__, __VA_ARGS__)
#define NCCOM_SDK_WARN(...) NCCOM_SDK_LOG(NCCOM_LOG_LEVEL_WARN, NCCOM_SUBSYS_ALL, __VA_ARGS__)
#define NCCOM_SDK_INFO(subsys, ...) NCCOM_SDK_LOG(NCCOM_LOG_LEVEL_INFO, (subsys), __VA_ARGS__)
#define NCCOM_SDK_TRACE(subsys, ...) NCCOM_SDK_LOG(NCCOM_LOG_LEVEL_TRACE, (subsys), __VA_ARGS__)
