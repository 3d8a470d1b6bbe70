// Shared by the NetOfiLiveness* suites (liveness_test.cc,
// liveness_killed_test.cc): driving one request to its end with a time
// limit, and what the plugin's liveness log lines look like.
#pragma once

#include "net_ofi_fixture.h"

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>

namespace net_ofi_test {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The bound docs/internals/net-ofi.md ("Peer liveness") gives for the default
// knobs (check period 100 ms + grace 500 ms), with room for a loaded 2-core
// machine.
constexpr auto kBound = milliseconds(2000);
constexpr int kLargeMessage = 1 << 20;  // rendezvous-sized: a send waits for its receiver

struct Outcome {
  bool finished = false;  // done or failed before the limit
  bool done = false;
  ncclResult_t rc = ncclSuccess;
  milliseconds after{0};  // since `since`
};

// test() `request` until it is done or fails, or `limit` after `since`.
inline Outcome test_until(const ncclNet_v6_t* net, void* request, Clock::time_point since,
                          milliseconds limit) {
  for (;;) {
    int done = 0;
    int size = -1;
    const ncclResult_t rc = net->test(request, &done, &size);
    const auto after = std::chrono::duration_cast<milliseconds>(Clock::now() - since);
    if (rc != ncclSuccess || done != 0) return Outcome{true, done != 0, rc, after};
    if (after > limit) return Outcome{false, false, ncclSuccess, after};
    std::this_thread::yield();
  }
}

inline std::string pointer_text(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

// "peer <address> <what>" where the address is the fabric address the
// plugin names peers by: ip:port, [ip6]:port or an shm name.
inline bool logs_name_peer(const std::string& what) {
  const std::regex line(
      "peer (\\d+\\.\\d+\\.\\d+\\.\\d+:\\d+|\\[[0-9a-f:]+\\]:\\d+|fi_shm://\\S+) " + what);
  return std::regex_search(captured_logs(), line);
}

}  // namespace net_ofi_test
