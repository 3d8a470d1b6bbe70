// Where the backend's messages go. Plugins never print: the plugin entry points
// turn the host's nccom_host_api_t::log into a LogSink, tests pass a lambda
// that records the lines. An empty sink drops them.
#pragma once

#include <cstdarg>
#include <functional>
#include <string>

namespace nccom::topo_nccl {

enum class LogLevel : int { Warn = 2, Info = 3 };

// NCCL_DEBUG_SUBSYS bits used here.
inline constexpr unsigned long kLogInit = 1;
inline constexpr unsigned long kLogGraph = 32;

using LogSink = std::function<void(LogLevel level, unsigned long subsys, const char* file, int line,
                                   const std::string& text)>;

// printf-style formatting into the sink (nothing happens when it is empty).
void logf(const LogSink& sink, LogLevel level, unsigned long subsys, const char* file, int line,
          const char* fmt, ...) __attribute__((format(printf, 6, 7)));

}  // namespace nccom::topo_nccl

#define TOPO_NCCL_INFO(sink, subsys, ...)                                                  \
  ::nccom::topo_nccl::logf((sink), ::nccom::topo_nccl::LogLevel::Info, (subsys), __FILE__, \
                           __LINE__, __VA_ARGS__)
#define TOPO_NCCL_WARN(sink, subsys, ...)                                                  \
  ::nccom::topo_nccl::logf((sink), ::nccom::topo_nccl::LogLevel::Warn, (subsys), __FILE__, \
                           __LINE__, __VA_ARGS__)
