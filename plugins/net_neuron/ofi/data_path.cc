// The data path: tagged isend/irecv, iflush, RMA read/write, test.
//
// A request slot is taken from the comm's pool of NCCL_NET_MAX_REQUESTS; when
// all are in flight the call succeeds with a NULL request (the caller
// retries). test() drives progress, reports the bytes moved (from the
// completion for receives) and returns the slot once the request is done or
// failed.
#include "net_plugin.h"

#include <algorithm>
#include <climits>
#include <mutex>

namespace nccom::ofi {
namespace {

// Take a slot, post, hand it out. NULL request ("retry later", the ncclNet
// contract) when the pool is empty or the provider pushes back: the call is
// bounded — at most two provider posts and one progress pass — and nothing
// is left queued on the host's behalf.
Status post(Comm& comm, Request* r, void** request) {
  *request = nullptr;
  if (r == nullptr) return ncclSuccess;  // NCCL_NET_MAX_REQUESTS in flight
  bool busy = false;
  if (Status s = comm.endpoint->try_submit(*r, &busy); !s.ok() || busy) {
    comm.release_request(r);
    return s;
  }
  *request = r;
  return ncclSuccess;
}

}  // namespace

// A comm whose peer is gone takes no new requests: they could never
// complete. (Within the grace period after detection it still does, so
// data already on its way can be received.)
Status Plugin::check_peer(Comm& comm, const char* call) {
  if (!comm.watch.enabled() || !comm.watch.peer_lost(monotonic_ns())) return ncclSuccess;
  OFI_WARN("NET/OFI %s on %s failed: %s", call, comm.watch.label().c_str(),
           comm.watch.what_happened().c_str());
  return ncclRemoteError;
}

Status Plugin::local_descriptor(Comm& comm, void* mhandle, const void* buf, size_t len,
                                void** desc) {
  *desc = nullptr;
  if (mhandle == nullptr) {
    if (len == 0 || !comm.endpoint->caps().mr_local) return ncclSuccess;
    OFI_WARN(
        "NET/OFI The provider needs registered buffers (FI_MR_LOCAL): pass the mhandle "
        "from regMr");
    return ncclInvalidArgument;
  }
  MemoryRegion* region = comm.find_region(mhandle);
  if (region == nullptr) {
    OFI_WARN("NET/OFI mhandle %p was not registered on this comm", mhandle);
    return ncclInvalidArgument;
  }
  if (!region->covers(buf, len)) {
    OFI_WARN("NET/OFI Buffer %p (+%zu bytes) lies outside its registration %p (+%zu bytes)", buf,
             len, reinterpret_cast<void*>(region->base), region->size);
    return ncclInvalidArgument;
  }
  *desc = region->desc;
  return ncclSuccess;
}

Status Plugin::isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                     void** request) {
  if (request == nullptr || size < 0 || (data == nullptr && size > 0)) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  Comm* comm = find_comm(send_comm, CommKind::kSend);
  if (comm == nullptr) {
    OFI_WARN("NET/OFI isend: %p is not an open send comm", send_comm);
    return ncclInvalidArgument;
  }
  std::lock_guard guard(comm->endpoint->mutex());
  if (Status s = check_peer(*comm, "isend"); !s.ok()) return s;
  void* desc = nullptr;
  if (Status s = local_descriptor(*comm, mhandle, data, size, &desc); !s.ok()) return s;
  Request* r = comm->allocate_request(Op::kSend);
  if (r != nullptr) {
    *r = Request{.op = Op::kSend,
                 .state = RequestState::kNew,
                 .buf = data,
                 .len = static_cast<size_t>(size),
                 .desc = desc,
                 .peer = comm->peer,
                 .tag = data_tag(comm->id, tag)};
  }
  return post(*comm, r, request);
}

Status Plugin::irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                     void** request) {
  if (request == nullptr || data == nullptr || sizes == nullptr || tags == nullptr) {
    return ncclInvalidArgument;
  }
  if (n != 1) {
    OFI_WARN("NET/OFI irecv: only n == 1 is supported (maxRecvs = 1), got %d", n);
    return ncclInvalidArgument;
  }
  if (sizes[0] < 0 || (data[0] == nullptr && sizes[0] > 0)) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  Comm* comm = find_comm(recv_comm, CommKind::kRecv);
  if (comm == nullptr) {
    OFI_WARN("NET/OFI irecv: %p is not an open recv comm", recv_comm);
    return ncclInvalidArgument;
  }
  std::lock_guard guard(comm->endpoint->mutex());
  if (Status s = check_peer(*comm, "irecv"); !s.ok()) return s;
  void* desc = nullptr;
  void* mhandle = mhandles != nullptr ? mhandles[0] : nullptr;
  if (Status s = local_descriptor(*comm, mhandle, data[0], sizes[0], &desc); !s.ok()) return s;
  Request* r = comm->allocate_request(Op::kRecv);
  if (r != nullptr) {
    *r = Request{.op = Op::kRecv,
                 .state = RequestState::kNew,
                 .buf = data[0],
                 .len = static_cast<size_t>(sizes[0]),
                 .desc = desc,
                 .tag = data_tag(comm->id, tags[0])};
  }
  return post(*comm, r, request);
}

// Host memory needs no flush (no GPU/Neuron-direct receives here): the
// request completes at once, reporting 0 bytes.
Status Plugin::iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                      void** request) {
  if (request == nullptr) return ncclInvalidArgument;
  if (n != 1) {
    OFI_WARN("NET/OFI iflush: only n == 1 is supported (maxRecvs = 1), got %d", n);
    return ncclInvalidArgument;
  }
  std::shared_lock lock(mutex_);
  Comm* comm = find_comm(recv_comm, CommKind::kRecv);
  if (comm == nullptr) {
    OFI_WARN("NET/OFI iflush: %p is not an open recv comm", recv_comm);
    return ncclInvalidArgument;
  }
  std::lock_guard guard(comm->endpoint->mutex());
  return post(*comm, comm->allocate_request(Op::kLocal), request);
}

Status Plugin::rma(Op op, Comm& comm, void* local, size_t size, void* mhandle, uint64_t remote,
                   uint64_t mr_key, void** request) {
  const NicCaps& caps = comm.endpoint->caps();
  if (!caps.rma) {
    OFI_WARN("NET/OFI RMA is not available with provider %s (rma_supported = 0)",
             discovery_.provider.c_str());
    return ncclInvalidUsage;
  }
  if (op == Op::kInjectWrite && size > caps.inject_size) {
    OFI_WARN("NET/OFI iwriteInline of %zu bytes exceeds max_write_inline_size %zu", size,
             caps.inject_size);
    return ncclInvalidArgument;
  }
  if (Status s = check_peer(comm, op == Op::kRead ? "iread" : "iwrite"); !s.ok()) return s;
  RemoteTarget target;
  if (!decode_remote_key(caps, remote, mr_key, &target)) {
    OFI_WARN("NET/OFI Remote address 0x%llx does not belong to the region of key 0x%llx",
             static_cast<unsigned long long>(remote), static_cast<unsigned long long>(mr_key));
    return ncclInvalidArgument;
  }
  void* desc = nullptr;
  if (op != Op::kInjectWrite) {
    if (Status s = local_descriptor(comm, mhandle, local, size, &desc); !s.ok()) return s;
  }
  Request* r = comm.allocate_request(size == 0 ? Op::kLocal : op);
  if (r != nullptr && size != 0) {
    *r = Request{.op = op,
                 .state = RequestState::kNew,
                 .buf = local,
                 .len = size,
                 .desc = desc,
                 .peer = comm.peer,
                 .remote_addr = target.addr,
                 .key = target.key};
  }
  return post(comm, r, request);
}

Status Plugin::iread(void* recv_comm, void* dest, size_t size, void* dest_mhandle, uint64_t src,
                     uint64_t mr_key, void** request) {
  if (request == nullptr || (dest == nullptr && size > 0)) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  Comm* comm = find_data_comm(recv_comm);  // NET_NEURON reads on either side
  if (comm == nullptr) {
    OFI_WARN("NET/OFI iread: %p is not an open send or recv comm", recv_comm);
    return ncclInvalidArgument;
  }
  std::lock_guard guard(comm->endpoint->mutex());
  return rma(Op::kRead, *comm, dest, size, dest_mhandle, src, mr_key, request);
}

Status Plugin::iwrite(void* send_comm, void* src, size_t size, void* src_mhandle, uint64_t dest,
                      uint64_t mr_key, void** request) {
  if (request == nullptr || (src == nullptr && size > 0)) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  Comm* comm = find_data_comm(send_comm);
  if (comm == nullptr) {
    OFI_WARN("NET/OFI iwrite: %p is not an open send or recv comm", send_comm);
    return ncclInvalidArgument;
  }
  std::lock_guard guard(comm->endpoint->mutex());
  return rma(Op::kWrite, *comm, src, size, src_mhandle, dest, mr_key, request);
}

Status Plugin::iwrite_inline(void* send_comm, void* src, size_t size, uint64_t dest,
                             uint64_t mr_key, void** request) {
  if (request == nullptr || (src == nullptr && size > 0)) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  Comm* comm = find_data_comm(send_comm);
  if (comm == nullptr) {
    OFI_WARN("NET/OFI iwriteInline: %p is not an open send or recv comm", send_comm);
    return ncclInvalidArgument;
  }
  std::lock_guard guard(comm->endpoint->mutex());
  return rma(Op::kInjectWrite, *comm, src, size, nullptr, dest, mr_key, request);
}

Status Plugin::test(void* request, int* done, int* sizes) {
  if (request == nullptr || done == nullptr) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  auto it = requests_.find(request);
  if (it == requests_.end()) {
    OFI_WARN("NET/OFI test: %p is not a request of an open comm", request);
    return ncclInvalidArgument;
  }
  idle_.note_activity();
  Comm& comm = *it->second;
  auto* r = static_cast<Request*>(request);
  bool needs_peer_progress = false;
  // Whatever the outcome, this call also moves a few other comms along: an
  // RMA whose target is one of them, issued by another process, moves only
  // while this process progresses that endpoint (docs/internals/net-ofi.md,
  // "Progress across comms"). After this comm's own pass, so the caller's
  // request goes first.
  struct NextOthers {
    Plugin* plugin;
    const Comm* except;
    ~NextOthers() { plugin->progress_next_others(except); }
  } next_others{this, &comm};
  {
    std::lock_guard guard(comm.endpoint->mutex());
    if (r->state == RequestState::kFree || r->state == RequestState::kNew ||
        r->state == RequestState::kAbandoned) {
      OFI_WARN("NET/OFI test: request %p is not in flight", request);
      return ncclInvalidArgument;
    }
    if (r->state == RequestState::kQueued || r->state == RequestState::kPosted) {
      comm.endpoint->progress();
    }
    if (r->state == RequestState::kDone) {
      *done = 1;
      if (sizes != nullptr) sizes[0] = r->bytes > INT_MAX ? INT_MAX : static_cast<int>(r->bytes);
      comm.release_request(r);
      return ncclSuccess;
    }
    if (r->state == RequestState::kFailed) {  // logged when the error entry was read
      Status error = r->error;
      comm.release_request(r);
      return error;
    }
    if (comm.watch.enabled() && comm.watch.peer_lost(monotonic_ns())) {
      OFI_WARN("NET/OFI %s request %p on %s failed: %s", op_name(r->op), request,
               comm.watch.label().c_str(), comm.watch.what_happened().c_str());
      comm.abandon_request(r);
      return ncclRemoteError;
    }
    *done = 0;
    needs_peer_progress =
        comm.endpoint->caps().manual_progress && (r->op == Op::kRead || r->op == Op::kWrite);
  }
  if (needs_peer_progress) progress_others(&comm);
  return ncclSuccess;
}

// With manual-progress providers (tcp, shm) the target of an RMA only moves
// when its own endpoint is progressed. When both sides live in this process
// nobody else would do it for an idle comm, so we progress the others we can
// lock without waiting.
void Plugin::progress_others(const Comm* except) {
  for (const auto& [key, comm] : comms_) {
    if (comm.get() == except || !comm->endpoint) continue;
    std::unique_lock guard(comm->endpoint->mutex(), std::try_to_lock);
    if (guard.owns_lock()) comm->endpoint->progress();
  }
}

// Every test() does this, for the other direction: a peer process reads
// from (or writes into) one of our comms that nobody here tests any more —
// the NET_NEURON transport's 4-byte slice confirmation reads from the send
// comm after its sends completed. Bounded per call: at most
// kRoundRobinPerTest progress passes, none of them waiting for a lock; the
// shared cursor makes every such comm's turn come within
// ring size / kRoundRobinPerTest calls of test() in the process. The ring
// holds only comms with a remotely keyed region: nothing else can be an RMA
// target, and two-sided traffic needs no help (the receiver tests its own
// receives).
void Plugin::progress_next_others(const Comm* except) {
  constexpr size_t kRoundRobinPerTest = 2;
  const size_t n = progress_ring_.size();
  if (n == 0) return;
  const size_t visits = std::min(n, kRoundRobinPerTest);
  const size_t start = progress_cursor_.fetch_add(visits, std::memory_order_relaxed);
  for (size_t i = 0; i < visits; ++i) {
    Comm* comm = progress_ring_[(start + i) % n];
    if (comm == except) continue;
    std::unique_lock guard(comm->endpoint->mutex(), std::try_to_lock);
    if (guard.owns_lock()) comm->endpoint->progress();
  }
}

// The idle-progress thread's pass (idle_progress.h): runs only when no
// test() ran for a period, so it never competes with the caller's own polling.
void Plugin::progress_idle() {
  std::shared_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // init/fini/connect/close... run: next period
  for (Comm* comm : progress_ring_) {
    std::unique_lock guard(comm->endpoint->mutex(), std::try_to_lock);
    if (guard.owns_lock()) comm->endpoint->progress();
  }
}

}  // namespace nccom::ofi
