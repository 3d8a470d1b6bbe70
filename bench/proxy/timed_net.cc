#include "timed_net.h"

#include <ctime>

namespace nccom::bench {
namespace {

const ncclNet_v6_t* g_inner = nullptr;
ncclNet_v6_t g_table;
thread_local CallTimes t_times;

// Times one forwarded call into the calling thread's totals.
template <typename Fn>
ncclResult_t timed(CallTimes::Call which, Fn&& fn) {
  const uint64_t t0 = now_ns();
  const ncclResult_t rc = fn();
  t_times.ns[which] += now_ns() - t0;
  ++t_times.calls[which];
  return rc;
}

ncclResult_t t_isend(void* comm, void* data, int size, int tag, void* mh, void** req) {
  return timed(CallTimes::kIsend, [&] { return g_inner->isend(comm, data, size, tag, mh, req); });
}
ncclResult_t t_irecv(void* comm, int n, void** data, int* sizes, int* tags, void** mh, void** req) {
  return timed(CallTimes::kIrecv,
               [&] { return g_inner->irecv(comm, n, data, sizes, tags, mh, req); });
}
ncclResult_t t_test(void* req, int* done, int* sizes) {
  return timed(CallTimes::kTest, [&] { return g_inner->test(req, done, sizes); });
}
ncclResult_t t_iread(void* comm, void* dest, size_t size, void* mh, uint64_t src, uint64_t key,
                     void** req) {
  return timed(CallTimes::kIread,
               [&] { return g_inner->iread(comm, dest, size, mh, src, key, req); });
}

}  // namespace

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

const ncclNet_v6_t* timed_net(const ncclNet_v6_t* inner) {
  g_inner = inner;
  g_table = *inner;
  g_table.isend = t_isend;
  g_table.irecv = t_irecv;
  g_table.test = t_test;
  if (inner->iread != nullptr) g_table.iread = t_iread;
  return &g_table;
}

CallTimes& thread_call_times() { return t_times; }

}  // namespace nccom::bench
