// One libfabric RDM endpoint with everything it needs of its own — fabric,
// domain, completion queue (FI_CQ_FORMAT_TAGGED), address vector
// (FI_AV_TABLE) — and the requests posted on it.
//
// Posting never spins: -FI_EAGAIN from the provider runs one completion pass
// and one retry. Then a data-path post gives up (the host gets a NULL
// request and retries later), while a control message waits in a FIFO that
// every later progress pass drains in order (so a deferred message is never
// overtaken). Errors
// surface through fi_cq_readerr and fail exactly the request they belong to.
// Not thread-safe by itself: the owning comm serialises access (mutex()).
#pragma once

#include "common.h"
#include "provider.h"

#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

namespace nccom::ofi {

enum class Op : uint8_t {
  kSend,
  kRecv,
  kRead,
  kWrite,
  kInjectWrite,  // complete as soon as the provider accepted it (no completion)
  kLocal         // nothing to post: complete at once (iflush on host memory)
};

// "send", "receive", "RMA read", ... for log lines.
const char* op_name(Op op);

// kNew: handed out by the pool, not yet submitted. kAbandoned: failed because
// the peer is gone (liveness.h) while still posted in the provider; the slot
// stays taken until the comm closes, so a late completion can never land in
// a reused request.
enum class RequestState : uint8_t { kFree, kNew, kQueued, kPosted, kDone, kFailed, kAbandoned };

// A request is its own libfabric op context: `context` must stay the first
// member so the op_context libfabric returns is the Request's address.
struct Request {
  fi_context2 context{};
  Op op = Op::kSend;
  RequestState state = RequestState::kFree;
  void* buf = nullptr;
  size_t len = 0;
  void* desc = nullptr;
  fi_addr_t peer = FI_ADDR_UNSPEC;
  uint64_t tag = 0;
  uint64_t remote_addr = 0;
  uint64_t key = 0;
  size_t bytes = 0;  // transferred, known once kDone
  ncclResult_t error = ncclSuccess;
};

class Endpoint {
 public:
  // Opens fabric, domain, CQ, AV and endpoint on `info`, enables it and reads
  // its address. Everything acquired is released again on failure.
  static Status open(const fi_info& info, const NicCaps& caps, std::unique_ptr<Endpoint>* out);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  // Close the libfabric endpoint only (idempotent): no completion refers to
  // our requests afterwards; domain, CQ and AV stay until destruction.
  void shutdown() { ep_.reset(); }
  Endpoint& operator=(const Endpoint&) = delete;

  std::mutex& mutex() { return mutex_; }
  const NicCaps& caps() const { return caps_; }
  const std::vector<uint8_t>& address() const { return address_; }
  uint32_t addr_format() const { return addr_format_; }  // FI_SOCKADDR_IN, FI_ADDR_STR, ...
  fid_domain* domain() const { return domain_.get(); }
  fid_ep* ep() const { return ep_.get(); }

  Status insert_peer(const std::vector<uint8_t>& addr, fi_addr_t* out);
  // Post (or queue) `request`; on failure the request is untouched and the
  // error logged. For the plugin's own control messages, which must go out
  // eventually whatever the caller does next.
  Status submit(Request& request);
  // For the host's data-path calls (isend, irecv, RMA): never queues and
  // never loops. Posts at once; on -FI_EAGAIN runs one progress pass and
  // tries once more; if the provider still refuses, or earlier deferred
  // posts are still waiting (they must not be overtaken), sets *busy and
  // leaves the request kNew — the caller hands out a NULL request.
  Status try_submit(Request& request, bool* busy);
  // One completion pass, then retry queued posts.
  void progress();
  // Forget a request that is queued (its comm is releasing it).
  void forget(Request& request);
  // Register [buf, buf+len) on this domain (bound/enabled for FI_MR_ENDPOINT).
  Status register_memory(void* buf, size_t len, uint64_t access, uint64_t requested_key,
                         fid_mr** out);
  // A descriptor for local buffers: fi_mr_desc when FI_MR_LOCAL, else NULL.
  void* descriptor(fid_mr* mr) const;

 private:
  explicit Endpoint(const NicCaps& caps) : caps_(caps) {}
  ssize_t issue(Request& request);
  void mark_posted(Request& request);
  void drain_completions();
  void read_error_entry();
  void retry_queued();

  NicCaps caps_;
  std::mutex mutex_;
  // Declaration order = acquisition order; destruction closes in reverse.
  FabricPtr fabric_;
  DomainPtr domain_;
  CqPtr cq_;
  AvPtr av_;
  EpPtr ep_;
  std::vector<uint8_t> address_;
  uint32_t addr_format_ = FI_FORMAT_UNSPEC;
  std::deque<Request*> queued_;
};

}  // namespace nccom::ofi
