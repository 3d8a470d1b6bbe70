// Endpoint: resource setup, posting with -FI_EAGAIN deferral, completion
// harvest (as the original plugin's ofi_process_cq, in our own terms: -FI_EAVAIL
// must be followed by fi_cq_readerr before the next read).
#include "endpoint.h"

#include "shm_room.h"
#include "wire.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>

namespace nccom::ofi {
namespace {

static_assert(std::is_standard_layout_v<Request> && offsetof(Request, context) == 0,
              "the op context libfabric hands back must be the Request's address");

constexpr size_t kCqBatch = 16;
constexpr int kMaxCqReadsPerPass = 8;  // bounded: progress never spins forever

Status check(int rc, const char* what) {
  if (rc == 0) return ncclSuccess;
  OFI_WARN("NET/OFI %s failed: %s", what, fi_error_text(rc).c_str());
  return ncclSystemError;
}

// "fi_shm://nc<pid>.<n>" in hex (shm's string address format), n = a random
// 32-bit start + this process's endpoint count: unique per endpoint of the
// process and, unlike shm's default "<pid>:<i>:<j>", not the name a dead
// process with the same pid left in /dev/shm. At most 27 bytes with its NUL,
// so the address still fits the v4 table's 64-byte handle.
std::string shm_endpoint_name() {
  static std::atomic<uint32_t> counter{0};
  static const uint32_t start = [] { return static_cast<uint32_t>(std::random_device{}()); }();
  char text[48];
  std::snprintf(text, sizeof text, "fi_shm://nc%x.%x", static_cast<unsigned>(getpid()),
                static_cast<unsigned>(start + counter.fetch_add(1)));
  return text;
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::kSend: return "send";
    case Op::kRecv: return "receive";
    case Op::kRead: return "RMA read";
    case Op::kWrite: return "RMA write";
    case Op::kInjectWrite: return "inline RMA write";
    case Op::kLocal: return "local";
  }
  return "?";
}

Status Endpoint::open(const fi_info& info, const NicCaps& caps, std::unique_ptr<Endpoint>* out) {
  std::unique_ptr<Endpoint> e(new Endpoint(caps));
  fid_fabric* fabric = nullptr;
  if (Status s = check(fi_fabric(info.fabric_attr, &fabric, nullptr), "fi_fabric"); !s.ok())
    return s;
  e->fabric_.reset(fabric);
  fid_domain* domain = nullptr;
  if (Status s =
          check(fi_domain(fabric, const_cast<fi_info*>(&info), &domain, nullptr), "fi_domain");
      !s.ok()) {
    return s;
  }
  e->domain_.reset(domain);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.wait_obj = FI_WAIT_NONE;  // we poll; no wait fd
  fid_cq* cq = nullptr;
  if (Status s = check(fi_cq_open(domain, &cq_attr, &cq, nullptr), "fi_cq_open"); !s.ok()) return s;
  e->cq_.reset(cq);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = 4;
  fid_av* av = nullptr;
  if (Status s = check(fi_av_open(domain, &av_attr, &av, nullptr), "fi_av_open"); !s.ok()) return s;
  e->av_.reset(av);
  fid_ep* ep = nullptr;
  if (Status s =
          check(fi_endpoint(domain, const_cast<fi_info*>(&info), &ep, nullptr), "fi_endpoint");
      !s.ok()) {
    return s;
  }
  e->ep_.reset(ep);
  if (Status s = check(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind(av)"); !s.ok()) return s;
  if (Status s = check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
      !s.ok()) {
    return s;
  }
  const bool shm = info.fabric_attr != nullptr && info.fabric_attr->prov_name != nullptr &&
                   std::strcmp(info.fabric_attr->prov_name, "shm") == 0;
  std::string region;
  if (shm) {
    // shm names its endpoint "<pid>:<n>:<m>" by default, a file in /dev/shm
    // that a SIGKILLed process leaves behind: a later process that gets the
    // same pid then fails fi_enable with EBUSY. A name of our own, with 64
    // random bits, cannot collide with a stale one.
    const std::string own = shm_endpoint_name();
    if (Status s = check(fi_setname(&ep->fid, const_cast<char*>(own.c_str()), own.size() + 1),
                         "fi_setname(shm)");
        !s.ok()) {
      return s;
    }
    // The region lives in /dev/shm: room first, then reserved whole
    // (shm_room.h), so that a full /dev/shm is an error, never a SIGBUS.
    (void)shm_room::sweep_dead();
    if (Status s = shm_room::check_room(); !s.ok()) return s;
    region = shm_room::region_file(own);
  }
  if (Status s = check(fi_enable(ep), "fi_enable"); !s.ok()) return s;
  if (!region.empty()) {
    if (Status s = shm_room::reserve(region); !s.ok()) return s;
  }
  uint8_t name[256];
  size_t len = sizeof name;
  if (Status s = check(fi_getname(&ep->fid, name, &len), "fi_getname"); !s.ok()) return s;
  if (len == 0 || len > kMaxAddrLen) {
    OFI_WARN("NET/OFI Endpoint address of %zu bytes does not fit a handle (max %zu)", len,
             kMaxAddrLen);
    return ncclInternalError;
  }
  e->address_.assign(name, name + len);
  e->addr_format_ = info.addr_format;
  *out = std::move(e);
  return ncclSuccess;
}

Endpoint::~Endpoint() {
  // Endpoint first: after fi_close(ep) no completion refers to our requests.
  ep_.reset();
  av_.reset();
  cq_.reset();
  domain_.reset();
  fabric_.reset();
}

Status Endpoint::insert_peer(const std::vector<uint8_t>& addr, fi_addr_t* out) {
  fi_addr_t fi_addr = FI_ADDR_NOTAVAIL;
  int rc = fi_av_insert(av_.get(), addr.data(), 1, &fi_addr, 0, nullptr);
  if (rc != 1 || fi_addr == FI_ADDR_NOTAVAIL) {
    OFI_WARN("NET/OFI fi_av_insert of the peer address failed: %s",
             rc < 0 ? fi_error_text(rc).c_str() : "address rejected");
    return ncclSystemError;
  }
  *out = fi_addr;
  return ncclSuccess;
}

ssize_t Endpoint::issue(Request& r) {
  fid_ep* ep = ep_.get();
  switch (r.op) {
    case Op::kSend: return fi_tsend(ep, r.buf, r.len, r.desc, r.peer, r.tag, &r);
    case Op::kRecv: return fi_trecv(ep, r.buf, r.len, r.desc, FI_ADDR_UNSPEC, r.tag, 0, &r);
    case Op::kRead: return fi_read(ep, r.buf, r.len, r.desc, r.peer, r.remote_addr, r.key, &r);
    case Op::kWrite: return fi_write(ep, r.buf, r.len, r.desc, r.peer, r.remote_addr, r.key, &r);
    case Op::kInjectWrite: return fi_inject_write(ep, r.buf, r.len, r.peer, r.remote_addr, r.key);
    case Op::kLocal: return 0;
  }
  return -FI_EINVAL;
}

Status Endpoint::submit(Request& r) {
  ssize_t rc = -FI_EAGAIN;
  if (queued_.empty()) {
    rc = issue(r);
    if (rc == -FI_EAGAIN) {  // the provider is full: harvest once, try once more
      drain_completions();
      rc = issue(r);
    }
  }
  if (rc == -FI_EAGAIN) {
    r.state = RequestState::kQueued;
    queued_.push_back(&r);
    return ncclSuccess;
  }
  if (rc < 0) {
    OFI_WARN("NET/OFI Error posting %s request of %zu bytes: %s", op_name(r.op), r.len,
             fi_error_text(rc).c_str());
    return ncclSystemError;
  }
  mark_posted(r);
  return ncclSuccess;
}

Status Endpoint::try_submit(Request& r, bool* busy) {
  *busy = false;
  ssize_t rc = queued_.empty() ? issue(r) : -FI_EAGAIN;
  if (rc == -FI_EAGAIN) {  // full: one progress pass (harvest, drain the FIFO), one retry
    progress();
    rc = queued_.empty() ? issue(r) : -FI_EAGAIN;
  }
  if (rc == -FI_EAGAIN) {
    *busy = true;
    return ncclSuccess;
  }
  if (rc < 0) {
    OFI_WARN("NET/OFI Error posting %s request of %zu bytes: %s", op_name(r.op), r.len,
             fi_error_text(rc).c_str());
    return ncclSystemError;
  }
  mark_posted(r);
  return ncclSuccess;
}

void Endpoint::mark_posted(Request& r) {
  const bool immediate = r.op == Op::kInjectWrite || r.op == Op::kLocal;
  r.state = immediate ? RequestState::kDone : RequestState::kPosted;
  r.bytes = immediate ? r.len : 0;
}

void Endpoint::progress() {
  drain_completions();
  retry_queued();
}

void Endpoint::forget(Request& r) {
  queued_.erase(std::remove(queued_.begin(), queued_.end(), &r), queued_.end());
}

void Endpoint::drain_completions() {
  fi_cq_tagged_entry entries[kCqBatch];
  for (int round = 0; round < kMaxCqReadsPerPass; ++round) {
    ssize_t n = fi_cq_read(cq_.get(), entries, kCqBatch);
    if (n == -FI_EAGAIN) return;
    if (n == -FI_EAVAIL) {
      read_error_entry();
      continue;
    }
    if (n < 0) {
      OFI_WARN("NET/OFI Unable to read completion queue entries: %s", fi_error_text(n).c_str());
      return;
    }
    for (ssize_t i = 0; i < n; ++i) {
      auto* r = static_cast<Request*>(entries[i].op_context);
      if (r == nullptr || r->state != RequestState::kPosted) continue;
      r->bytes = r->op == Op::kRecv ? entries[i].len : r->len;
      r->state = RequestState::kDone;
    }
    if (static_cast<size_t>(n) < kCqBatch) return;
  }
}

void Endpoint::read_error_entry() {
  fi_cq_err_entry err{};
  ssize_t rc = fi_cq_readerr(cq_.get(), &err, 0);
  if (rc < 0) {
    if (rc != -FI_EAGAIN) OFI_WARN("NET/OFI fi_cq_readerr failed: %s", fi_error_text(rc).c_str());
    return;
  }
  char detail[256] = "";
  const char* text = fi_cq_strerror(cq_.get(), err.prov_errno, err.err_data, detail, sizeof detail);
  auto* r = static_cast<Request*>(err.op_context);
  const char* what = r != nullptr ? op_name(r->op) : "unknown";
  // Provider detail only when the provider gave one (prov_errno 0 yields noise).
  std::string provider = "";
  if (err.prov_errno != 0 && text != nullptr) {
    provider = " (provider error " + std::to_string(err.prov_errno) + ": " + text + ")";
  }
  const int code = err.err < 0 ? -err.err : err.err;  // shm reports it negated
  if (code == FI_ETRUNC) {
    OFI_WARN(
        "NET/OFI %s request failed: message truncated, the sender sent more than the "
        "posted %zu-byte buffer holds%s",
        what, r != nullptr ? r->len : 0, provider.c_str());
  } else {
    OFI_WARN("NET/OFI %s request failed: %s%s", what, fi_error_text(code).c_str(),
             provider.c_str());
  }
  if (r == nullptr || r->state != RequestState::kPosted) return;
  r->state = RequestState::kFailed;
  r->error = map_completion_error(code);
}

void Endpoint::retry_queued() {
  while (!queued_.empty()) {
    Request& r = *queued_.front();
    ssize_t rc = issue(r);
    if (rc == -FI_EAGAIN) return;  // still full; the next pass tries again
    queued_.pop_front();
    if (rc < 0) {
      OFI_WARN("NET/OFI Error posting deferred %s request of %zu bytes: %s", op_name(r.op), r.len,
               fi_error_text(rc).c_str());
      r.state = RequestState::kFailed;
      r.error = ncclSystemError;
      continue;
    }
    mark_posted(r);
  }
}

Status Endpoint::register_memory(void* buf, size_t len, uint64_t access, uint64_t requested_key,
                                 fid_mr** out) {
  iovec iov{buf, len};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = access;
  attr.requested_key = requested_key;
  attr.iface = FI_HMEM_SYSTEM;
  fid_mr* raw = nullptr;
  if (Status s = check(fi_mr_regattr(domain_.get(), &attr, 0, &raw), "fi_mr_regattr"); !s.ok()) {
    return s;
  }
  MrPtr mr(raw);
  if (caps_.mr_endpoint) {
    if (Status s = check(fi_mr_bind(raw, &ep_->fid, 0), "fi_mr_bind"); !s.ok()) return s;
    if (Status s = check(fi_mr_enable(raw), "fi_mr_enable"); !s.ok()) return s;
  }
  *out = mr.release();
  return ncclSuccess;
}

void* Endpoint::descriptor(fid_mr* mr) const {
  return (caps_.mr_local && mr != nullptr) ? fi_mr_desc(mr) : nullptr;
}

}  // namespace nccom::ofi
