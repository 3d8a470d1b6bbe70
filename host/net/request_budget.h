// nccom::net::RequestBudget — at most a fixed number of requests in flight per
// comm, for plugins whose contract lets them refuse past a fixed pool.
//
// NVIDIA's ncclNet v4-v6 headers set NCCL_NET_MAX_REQUESTS to 8, and NCCL's
// proxy never had more than that in flight on one comm (NCCL_STEPS), so
// plugins written against them size a pool of 8 (or a little more) and
// answer a post beyond it with an error, not with the NULL request ("post
// again later") the Neuron headers ask for with their pool of 128. The
// adapters of those layouts answer NULL themselves once a comm holds its
// budget, which every caller already handles, so such a plugin never sees
// more than NCCL gave it.
#pragma once

#include <nccom/net_common.h>

#include <mutex>
#include <unordered_map>

namespace nccom::net {

// NCCL_NET_MAX_REQUESTS of NVIDIA's ncclNet_v4, v5 and v6 headers.
inline constexpr int kNvidiaMaxRequests = 8;

class RequestBudget {
 public:
  explicit RequestBudget(int limit) : limit_(limit) {}

  // Calls `post` (an isend or irecv that fills *request) when `comm` has
  // room; otherwise answers success with a NULL request without calling it.
  template <class Post>
  ncclResult_t post(void* comm, void** request, Post&& post_fn) {
    if (request == nullptr) return post_fn();  // the plugin answers for its arguments
    if (!reserve(comm)) {
      *request = nullptr;
      return ncclSuccess;
    }
    const ncclResult_t r = post_fn();
    if (r == ncclSuccess && *request != nullptr) {
      bind(*request, comm);
    } else {
      unreserve(comm);
    }
    return r;
  }

  // The plugin reported `request` done, or failed it: its comm has room again.
  // Requests the budget did not count (flushes) are ignored.
  void finished(void* request);
  // The comm is closed: whatever it had in flight is forgotten.
  void closed(void* comm);

  int in_flight(void* comm);

 private:
  bool reserve(void* comm);
  void unreserve(void* comm);
  void bind(void* request, void* comm);

  const int limit_;
  std::mutex mu_;
  std::unordered_map<void*, void*> owner_;    // request -> its comm
  std::unordered_map<void*, int> in_flight_;  // comm -> requests (and reservations)
};

}  // namespace nccom::net
