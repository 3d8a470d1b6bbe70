// A wrapping ncclNet_v6 table that times the data-path calls of another:
// CLOCK_MONOTONIC around each isend / irecv / test / iread, accumulated per
// calling thread (each rank's proxy thread reads its own totals), so the
// benchmark can split the time inside op_progress into "in the plugin" and
// "in the proxy".
#pragma once

#include <nccom/net_v6.h>

#include <cstdint>

namespace nccom::bench {

struct CallTimes {
  enum Call { kIsend, kIrecv, kTest, kIread, kCount };
  uint64_t ns[kCount] = {};
  uint64_t calls[kCount] = {};
  uint64_t total_ns() const { return ns[kIsend] + ns[kIrecv] + ns[kTest] + ns[kIread]; }
  void add(const CallTimes& o) {
    for (int i = 0; i < kCount; ++i) {
      ns[i] += o.ns[i];
      calls[i] += o.calls[i];
    }
  }
};

// The wrapper around `inner` (one inner table per process).
const ncclNet_v6_t* timed_net(const ncclNet_v6_t* inner);
// The calling thread's totals, and their reset.
CallTimes& thread_call_times();

// Monotonic nanoseconds.
uint64_t now_ns();

}  // namespace nccom::bench
