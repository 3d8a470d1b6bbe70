// What the NetOfi tests and their peer processes share to pass a net
// handle across a process boundary (as hex on a command line or a stdout
// line), to wait for a connect/accept, and to keep a plugin's log quiet.
// Header-only: the peers link only the SDK.
#pragma once

#include <nccom/net_v6.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace net_ofi_wire {

inline std::string to_hex(const char* bytes, size_t len) {
  std::string hex;
  char two[3];
  for (size_t i = 0; i < len; ++i) {
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned char>(bytes[i]));
    hex += two;
  }
  return hex;
}

inline bool from_hex(const std::string& hex, char* out, size_t len) {
  if (hex.size() != 2 * len) return false;
  for (size_t i = 0; i < len; ++i) {
    unsigned value = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &value) != 1) return false;
    out[i] = static_cast<char>(value);
  }
  return true;
}

// A peer process's plugin logger: warnings only, on stderr.
inline void quiet_logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt,
                         ...) {
  if (level == NCCL_LOG_WARN) std::fprintf(stderr, "peer WARN: %s\n", fmt);
}

// Calls step until it yields a comm or fails, for at most `limit`.
template <class Step>
bool until_ready(void** comm, std::chrono::seconds limit, Step step) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (*comm == nullptr && std::chrono::steady_clock::now() < deadline) {
    if (step() != ncclSuccess) return false;
  }
  return *comm != nullptr;
}

// A peer process's report line ("key=value") to the test, flushed at once.
inline void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace net_ofi_wire
