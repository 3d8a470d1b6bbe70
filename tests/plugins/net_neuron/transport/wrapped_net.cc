#include "wrapped_net.h"

#include <mutex>
#include <unordered_set>

namespace nn_test {
namespace {

// Requests are wrapped, so a held completion never collides with a new
// request the inner plugin places at a recycled address.
struct Request {
  void* inner = nullptr;
  bool completed = false;  // the inner plugin reported done (and released it)
  int remaining = 0;
  int size = 0;
  bool recv = false;
};

const ncclNet_v6_t* g_inner = nullptr;
WrapConfig g_config;
ncclNet_v6_t g_table;
WrapStats g_stats;
std::mutex g_mu;
int g_calls = 0;

bool refuse() {
  std::lock_guard lock(g_mu);
  if (g_config.null_every <= 1) return false;
  if (++g_calls % g_config.null_every == 0) return false;
  ++g_stats.refused;
  return true;
}

// Every wrapped request still in flight: a test whose op fails leaves some
// untested, and the next wrap_net releases them (never destroyed itself, so
// what the last test leaves stays reachable until the process ends).
std::unordered_set<Request*>& g_live = *new std::unordered_set<Request*>;

void* wrap(void* inner) {
  if (inner == nullptr) return nullptr;
  auto* r = new Request{inner};
  std::lock_guard lock(g_mu);
  g_live.insert(r);
  return r;
}

void release(Request* r) {
  {
    std::lock_guard lock(g_mu);
    g_live.erase(r);
  }
  delete r;
}

ncclResult_t w_isend(void* comm, void* data, int size, int tag, void* mh, void** req) {
  *req = nullptr;
  if (refuse()) return ncclSuccess;
  void* inner = nullptr;
  ncclResult_t rc = g_inner->isend(comm, data, size, tag, mh, &inner);
  if (rc == ncclSuccess && inner != nullptr) ++g_stats.isend_posted;
  *req = wrap(inner);
  return rc;
}

ncclResult_t w_irecv(void* comm, int n, void** data, int* sizes, int* tags, void** mh, void** req) {
  *req = nullptr;
  if (refuse()) return ncclSuccess;
  void* inner = nullptr;
  ncclResult_t rc = g_inner->irecv(comm, n, data, sizes, tags, mh, &inner);
  if (rc == ncclSuccess && inner != nullptr) ++g_stats.irecv_posted;
  *req = wrap(inner);
  if (*req != nullptr) static_cast<Request*>(*req)->recv = true;
  return rc;
}

ncclResult_t w_iread(void* comm, void* dest, size_t size, void* mh, uint64_t src, uint64_t key,
                     void** req) {
  *req = nullptr;
  if (refuse()) return ncclSuccess;
  void* inner = nullptr;
  ncclResult_t rc = g_inner->iread(comm, dest, size, mh, src, key, &inner);
  if (rc == ncclSuccess && inner != nullptr) ++g_stats.iread_posted;
  *req = wrap(inner);
  return rc;
}

ncclResult_t w_test(void* handle, int* done, int* sizes) {
  auto* r = static_cast<Request*>(handle);
  *done = 0;
  if (!r->completed) {
    int size = 0;
    ncclResult_t rc = g_inner->test(r->inner, done, &size);
    if (rc != ncclSuccess) {
      release(r);
      return rc;
    }
    if (*done == 0) return ncclSuccess;
    r->completed = true;
    r->size = size;
    r->remaining = g_config.hold_tests;
    if (r->remaining > 0) ++g_stats.held;
  }
  if (r->remaining > 0) {
    --r->remaining;
    *done = 0;
    return ncclSuccess;
  }
  *done = 1;
  if (sizes != nullptr && !(r->recv && g_config.recv_sizes_unwritten)) {
    *sizes = r->size + (r->recv ? g_config.recv_size_error : 0);
  }
  release(r);
  return ncclSuccess;
}

}  // namespace

const ncclNet_v6_t* wrap_net(const ncclNet_v6_t* inner, WrapConfig config) {
  std::lock_guard lock(g_mu);
  for (Request* r : g_live) delete r;
  g_live.clear();
  g_inner = inner;
  g_config = config;
  g_table = *inner;
  g_table.isend = w_isend;
  g_table.irecv = w_irecv;
  g_table.iread = w_iread;
  g_table.test = w_test;
  g_calls = 0;
  g_stats.isend_posted = g_stats.irecv_posted = g_stats.iread_posted = 0;
  g_stats.refused = g_stats.held = 0;
  return &g_table;
}

WrapStats& wrap_stats() { return g_stats; }

}  // namespace nn_test
