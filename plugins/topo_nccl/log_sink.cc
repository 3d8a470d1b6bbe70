#include "log_sink.h"

#include <cstdio>
#include <vector>

namespace nccom::topo_nccl {

void logf(const LogSink& sink, LogLevel level, unsigned long subsys, const char* file, int line,
          const char* fmt, ...) {
  if (!sink) return;
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string text;
  if (n > 0) {
    std::vector<char> buf(static_cast<std::size_t>(n) + 1);
    std::vsnprintf(buf.data(), buf.size(), fmt, args);
    text.assign(buf.data(), static_cast<std::size_t>(n));
  }
  va_end(args);
  sink(level, subsys, file, line, text);
}

}  // namespace nccom::topo_nccl
