#include "bench_measure.h"

#include <chrono>
#include <deque>

namespace nccom::bench {
namespace {

constexpr int kDataTag = 1;
constexpr int kAckTag = 2;
constexpr int kPingTag = 3;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Keeps up to `window` requests made by `post` in flight until `total` have
// completed (same-tag requests complete in order, so the oldest is tested).
template <class Post>
void pipeline(Link& link, int total, int window, Post post) {
  std::deque<void*> in_flight;
  int posted = 0;
  int completed = 0;
  while (completed < total) {
    while (posted < total && static_cast<int>(in_flight.size()) < window) {
      in_flight.push_back(post());
      ++posted;
    }
    if (link.test(in_flight.front())) {
      in_flight.pop_front();
      ++completed;
    }
  }
}

}  // namespace

double stream_seconds(Link& link, bool side_a, size_t size, int iters, int window) {
  if (side_a) {
    void* ack = link.irecv(1, kAckTag);  // posted before the start: no unexpected path
    link.barrier();
    const double t0 = now();
    pipeline(link, iters, window, [&] { return link.isend(size, kDataTag); });
    link.wait(ack);
    return now() - t0;
  }
  link.barrier();
  pipeline(link, iters, window, [&] { return link.irecv(size, kDataTag); });
  link.wait(link.isend(1, kAckTag));
  return 0;
}

double pingpong_seconds(Link& link, bool side_a, size_t size, int iters) {
  link.barrier();
  const double t0 = now();
  for (int i = 0; i < iters; ++i) {
    void* recv = link.irecv(size, kPingTag);  // posted before the send it answers
    if (side_a) {
      link.wait(link.isend(size, kPingTag));
      link.wait(recv);
    } else {
      link.wait(recv);
      link.wait(link.isend(size, kPingTag));
    }
  }
  return now() - t0;
}

}  // namespace nccom::bench
