// Logging for the socket net plugin. The plugin never prints: every message
// goes through the logger the host handed to init (NCCL_NET subsystem). Before
// init, or when the host passed NULL, messages are dropped.
#pragma once

#include <nccom/net_common.h>

namespace nccom::socket {

// Stores the host's logger; safe to call again (re-init after fini).
void set_logger(ncclDebugLogger_t logger);

// printf-style; formats locally so the compiler checks the arguments, then
// hands the text to the host's logger as "%s".
void log_message(ncclDebugLogLevel level, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace nccom::socket

#define SOCK_WARN(...) \
  ::nccom::socket::log_message(NCCL_LOG_WARN, __FILE__, __LINE__, "NET/Socket : " __VA_ARGS__)
#define SOCK_INFO(...) \
  ::nccom::socket::log_message(NCCL_LOG_INFO, __FILE__, __LINE__, "NET/Socket : " __VA_ARGS__)
#define SOCK_TRACE(...) \
  ::nccom::socket::log_message(NCCL_LOG_TRACE, __FILE__, __LINE__, "NET/Socket : " __VA_ARGS__)
