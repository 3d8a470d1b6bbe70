// The two measurements, run in lock-step by both processes (side A starts,
// side B answers). Times are CLOCK_MONOTONIC seconds taken on side A.
#pragma once

#include "bench_link.h"

namespace nccom::bench {

// Stream: A keeps `window` sends of `size` bytes in flight until `iters` are
// done; B keeps `window` receives posted; B acknowledges the last one with a
// 1-byte message. Time = A's first post .. the acknowledgement's arrival.
double stream_seconds(Link& link, bool side_a, size_t size, int iters, int window);

// Ping-pong: A sends `size` bytes, B sends them back, `iters` times. Time =
// the whole loop on A (fi_pingpong's definition: one-way latency =
// time / (2 iters), bandwidth = 2 iters size / time).
double pingpong_seconds(Link& link, bool side_a, size_t size, int iters);

}  // namespace nccom::bench
