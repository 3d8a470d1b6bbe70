#include "zero_net.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nccom::bench {
namespace {

constexpr uint64_t kMagic = 0x7a65726f6e657431ULL;  // "zeronet1"
constexpr uint32_t kRing = 1024;                    // pending sends per channel
constexpr uint32_t kMaxRequests = 256;  // per comm; > the transport's 128 slots + sidelink

ncclDebugLogger_t g_log = nullptr;
#ifdef NCCOM_ZERO_NET_PLUGIN
// As a plugin .so the bytes must arrive (the reference runtime's engine
// reads them), so it always copies.
ZeroNetOptions g_options{true};
#else
ZeroNetOptions g_options;
#endif

#define ZERO_WARN(...)                                                                 \
  do {                                                                                 \
    if (g_log != nullptr) g_log(NCCL_LOG_WARN, ~0UL, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

struct Channel {
  struct Entry {
    const void* data = nullptr;
    int size = 0;
  };
  Entry entries[kRing];
  alignas(64) std::atomic<uint64_t> sent{0};      // entries published by the sender
  alignas(64) std::atomic<uint64_t> consumed{0};  // in-order prefix the receiver matched
  std::atomic<int> refs{0};
  bool copy = false;

  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

struct Handle {
  uint64_t magic;
  Channel* channel;
};
static_assert(sizeof(Handle) <= NCCL_NET_HANDLE_MAXSIZE);

struct Comm;
struct Request {
  Comm* comm = nullptr;
  uint64_t seq = 0;
  int capacity = 0;  // send: the size sent; receive: the size posted
  void* data = nullptr;
};

// One side of a channel with its request pool.
struct Comm {
  enum Kind { kSend, kRecv } kind;
  Channel* ch;
  uint64_t seq = 0;  // next sequence number posted on this side
  std::vector<Request> pool;
  std::vector<Request*> free_list;
  // Receive side: which of the last kRing sequence numbers matched, to
  // advance the in-order prefix when tests come out of order.
  std::vector<uint8_t> matched;
  uint64_t prefix = 0;

  Comm(Kind k, Channel* c) : kind(k), ch(c), pool(kMaxRequests) {
    free_list.reserve(kMaxRequests);
    for (Request& r : pool) {
      r.comm = this;
      free_list.push_back(&r);
    }
    if (k == kRecv) matched.assign(kRing, 0);
    ch->refs.fetch_add(1, std::memory_order_relaxed);
  }
  ~Comm() { ch->release(); }
};

ncclResult_t z_init(ncclDebugLogger_t log) {
  g_log = log;
  return ncclSuccess;
}
ncclResult_t z_fini() { return ncclSuccess; }
ncclResult_t z_devices(int* n) {
  *n = 1;
  return ncclSuccess;
}

ncclResult_t z_properties(int dev, ncclNetProperties_v6_t* p) {
  if (dev != 0) {
    ZERO_WARN("zero net: device %d out of range (1 device)", dev);
    return ncclInvalidArgument;
  }
  std::memset(p, 0, sizeof *p);
  static char name[] = "zero";
  static char path[] = "";
  p->name = name;
  p->pciPath = path;
  p->ptrSupport = NCCL_PTR_HOST;
  p->speed = 400000;
  p->maxComms = 1 << 20;
  p->maxRecvs = 1;
  p->rma_supported = 0;  // two-sided only: no iread, no sidelink
  return ncclSuccess;
}

ncclResult_t z_listen(int dev, void* handle, void** listen_comm) {
  if (dev != 0) return ncclInvalidArgument;
  auto* ch = new Channel();
  ch->copy = g_options.copy;
  ch->refs = 1;  // the listen comm
  Handle h{kMagic, ch};
  std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
  std::memcpy(handle, &h, sizeof h);
  *listen_comm = ch;
  return ncclSuccess;
}

ncclResult_t z_connect(int dev, void* handle, void** send_comm) {
  Handle h;
  std::memcpy(&h, handle, sizeof h);
  if (dev != 0 || h.magic != kMagic || h.channel == nullptr) {
    ZERO_WARN("zero net: connect with a handle this net did not make (device %d)", dev);
    return ncclInvalidArgument;
  }
  *send_comm = new Comm(Comm::kSend, h.channel);
  return ncclSuccess;
}

ncclResult_t z_accept(void* listen_comm, void** recv_comm) {
  *recv_comm = new Comm(Comm::kRecv, static_cast<Channel*>(listen_comm));
  return ncclSuccess;
}

ncclResult_t z_close_listen(void* listen_comm) {
  static_cast<Channel*>(listen_comm)->release();
  return ncclSuccess;
}
ncclResult_t z_close(void* comm) {
  delete static_cast<Comm*>(comm);
  return ncclSuccess;
}

int g_mr_token;
ncclResult_t z_reg_mr(void*, void*, size_t, int type, void** mhandle) {
  if (type != NCCL_PTR_HOST) {
    ZERO_WARN("zero net: regMr of pointer type %d (host memory only)", type);
    return ncclInvalidArgument;
  }
  *mhandle = &g_mr_token;
  return ncclSuccess;
}
ncclResult_t z_reg_mr_dmabuf(void*, void*, size_t, int, uint64_t, int, void**) {
  ZERO_WARN("zero net: regMrDmaBuf is not implemented (host memory only)");
  return ncclInternalError;
}
ncclResult_t z_dereg_mr(void*, void*) { return ncclSuccess; }

Request* take(Comm* c) {
  if (c->free_list.empty()) return nullptr;
  Request* r = c->free_list.back();
  c->free_list.pop_back();
  return r;
}

ncclResult_t z_isend(void* comm, void* data, int size, int, void*, void** request) {
  auto* c = static_cast<Comm*>(comm);
  *request = nullptr;
  if (c->kind != Comm::kSend || size < 0) return ncclInvalidArgument;
  // Back-pressure: the receiver has not matched a ring's worth of sends yet.
  if (c->seq - c->ch->consumed.load(std::memory_order_acquire) >= kRing) return ncclSuccess;
  Request* r = take(c);
  if (r == nullptr) return ncclSuccess;
  r->seq = c->seq++;
  r->capacity = size;
  c->ch->entries[r->seq % kRing] = {data, size};
  c->ch->sent.store(c->seq, std::memory_order_release);
  *request = r;
  return ncclSuccess;
}

ncclResult_t z_irecv(void* comm, int n, void** data, int* sizes, int*, void**, void** request) {
  auto* c = static_cast<Comm*>(comm);
  *request = nullptr;
  if (c->kind != Comm::kRecv || n != 1 || sizes[0] < 0) return ncclInvalidArgument;
  Request* r = take(c);
  if (r == nullptr) return ncclSuccess;
  r->seq = c->seq++;
  r->capacity = sizes[0];
  r->data = data[0];
  *request = r;
  return ncclSuccess;
}

ncclResult_t z_test(void* request, int* done, int* sizes) {
  auto* r = static_cast<Request*>(request);
  Comm* c = r->comm;
  Channel* ch = c->ch;
  *done = 0;
  if (c->kind == Comm::kSend) {
    if (ch->copy && ch->consumed.load(std::memory_order_acquire) <= r->seq) return ncclSuccess;
    if (sizes != nullptr) *sizes = r->capacity;
  } else {
    if (ch->sent.load(std::memory_order_acquire) <= r->seq) return ncclSuccess;
    const Channel::Entry e = ch->entries[r->seq % kRing];
    if (e.size > r->capacity) {
      ZERO_WARN("zero net: message %llu of %d bytes is larger than its receive (%d bytes)",
                static_cast<unsigned long long>(r->seq), e.size, r->capacity);
      return ncclInvalidUsage;
    }
    if (ch->copy && e.size > 0) std::memcpy(r->data, e.data, static_cast<size_t>(e.size));
    if (sizes != nullptr) *sizes = e.size;
    c->matched[r->seq % kRing] = 1;
    while (c->matched[c->prefix % kRing] != 0) {
      c->matched[c->prefix % kRing] = 0;
      ++c->prefix;
    }
    ch->consumed.store(c->prefix, std::memory_order_release);
  }
  *done = 1;
  c->free_list.push_back(r);
  return ncclSuccess;
}

ncclResult_t z_iflush(void*, int, void**, int*, void**, void** request) {
  *request = nullptr;
  ZERO_WARN("zero net: iflush is not implemented (host memory needs none)");
  return ncclInternalError;
}

ncclResult_t z_no_rma(const char* what) {
  ZERO_WARN("zero net: %s is not supported (rma_supported = 0)", what);
  return ncclInternalError;
}
ncclResult_t z_get_mr_key(void*, uint64_t*) { return z_no_rma("getMrKey"); }
ncclResult_t z_iwrite(void*, void*, size_t, void*, uint64_t, uint64_t, void**) {
  return z_no_rma("iwrite");
}
ncclResult_t z_iwrite_inline(void*, void*, size_t, uint64_t, uint64_t, void**) {
  return z_no_rma("iwriteInline");
}
ncclResult_t z_iread(void*, void*, size_t, void*, uint64_t, uint64_t, void**) {
  return z_no_rma("iread");
}

#ifdef NCCOM_ZERO_NET_PLUGIN
}  // namespace
}  // namespace nccom::bench
// libnccom-net-zero.so: the same table under the symbol the host looks for.
extern "C" __attribute__((visibility("default")))
const ncclNet_v6_t ncclNetPlugin_v6 = {"zero-copy",
                                       nccom::bench::z_init,
                                       nccom::bench::z_fini,
                                       nccom::bench::z_devices,
                                       nccom::bench::z_properties,
                                       nccom::bench::z_listen,
                                       nccom::bench::z_connect,
                                       nccom::bench::z_accept,
                                       nccom::bench::z_reg_mr,
                                       nccom::bench::z_reg_mr_dmabuf,
                                       nccom::bench::z_dereg_mr,
                                       nccom::bench::z_isend,
                                       nccom::bench::z_irecv,
                                       nccom::bench::z_iflush,
                                       nccom::bench::z_test,
                                       nccom::bench::z_close,
                                       nccom::bench::z_close,
                                       nccom::bench::z_close_listen,
                                       nccom::bench::z_get_mr_key,
                                       nccom::bench::z_iwrite,
                                       nccom::bench::z_iwrite_inline,
                                       nccom::bench::z_iread};
namespace nccom::bench {
namespace {
#endif

const ncclNet_v6_t kTable = {
    "zero",       z_init,   z_fini,          z_devices,       z_properties, z_listen,
    z_connect,    z_accept, z_reg_mr,        z_reg_mr_dmabuf, z_dereg_mr,   z_isend,
    z_irecv,      z_iflush, z_test,          z_close,         z_close,      z_close_listen,
    z_get_mr_key, z_iwrite, z_iwrite_inline, z_iread};

}  // namespace

const ncclNet_v6_t* zero_net(ZeroNetOptions options) {
  g_options = options;
  return &kTable;
}

}  // namespace nccom::bench
