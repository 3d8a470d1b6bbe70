// Comms: the request pool, teardown, and the non-blocking connection setup
// (listen posts a control receive; connect sends one control message; accept
// waits for it and takes the listener's endpoint over).
#include "comm.h"

#include <atomic>

namespace nccom::ofi {
namespace {

std::atomic<uint64_t> g_rail_cursor{0};

const fi_info& pick_rail(const Device& device) {
  return *device.rails[g_rail_cursor.fetch_add(1, std::memory_order_relaxed) % device.rails.size()];
}

// The control message needs a descriptor when the provider wants local
// buffers registered (FI_MR_LOCAL).
Status prepare_control(Comm& comm) {
  Endpoint& ep = *comm.endpoint;
  if (!ep.caps().mr_local) return ncclSuccess;
  const uint16_t key = ep.caps().prov_key ? 0 : comm.keys.take();
  if (Status s = ep.register_memory(&comm.control_message, sizeof comm.control_message,
                                    FI_SEND | FI_RECV, key, &comm.control_mr);
      !s.ok()) {
    return s;
  }
  comm.control.desc = ep.descriptor(comm.control_mr);
  return ncclSuccess;
}

void close_control_mr(Comm& comm) {
  if (comm.control_mr != nullptr) (void)fi_close(&comm.control_mr->fid);
  comm.control_mr = nullptr;
  comm.control.desc = nullptr;
}

Status post_connect_receive(Comm& listen) {
  Request& r = listen.control;
  void* desc = r.desc;
  r = Request{};
  r.op = Op::kRecv;
  r.state = RequestState::kNew;
  r.buf = &listen.control_message;
  r.len = sizeof listen.control_message;
  r.desc = desc;
  r.tag = control_tag(listen.id);
  return listen.endpoint->submit(r);
}

}  // namespace

uint16_t KeyPool::take() {
  if (!free_.empty()) {
    uint16_t id = free_.back();
    free_.pop_back();
    return id;
  }
  return next_ == 0 ? 0 : next_++;  // next_ wraps to 0 after 65535 ids: exhausted
}

void KeyPool::give_back(uint16_t id) {
  if (id != 0) free_.push_back(id);
}

Comm::~Comm() { close_resources(); }

void Comm::close_resources() {
  // The endpoint goes first, so nothing in flight still uses an MR or points
  // into our requests — except under FI_MR_ENDPOINT, where bound MRs hold a
  // reference on the endpoint and must be closed before it.
  if (endpoint && !endpoint->caps().mr_endpoint) endpoint->shutdown();
  regions.clear();
  close_control_mr(*this);
  endpoint.reset();  // endpoint (if still open), AV, CQ, domain, fabric
}

Request* Comm::allocate_request(Op op) {
  if (requests_in_use >= kMaxRequests) return nullptr;
  for (Request& r : requests) {
    if (r.state != RequestState::kFree) continue;
    r = Request{};
    r.op = op;
    r.state = RequestState::kNew;
    ++requests_in_use;
    return &r;
  }
  return nullptr;
}

void Comm::release_request(Request* r) {
  if (r->state == RequestState::kFree) return;
  if (r->state == RequestState::kQueued && endpoint) endpoint->forget(*r);
  *r = Request{};
  --requests_in_use;
}

bool Comm::owns_request(const Request* r) const {
  return r >= requests.data() && r < requests.data() + requests.size();
}

MemoryRegion* Comm::find_region(const void* mhandle) const {
  for (const auto& region : regions) {
    if (region.get() == mhandle) return region.get();
  }
  return nullptr;
}

Status open_listen_comm(const Device& device, int dev, uint32_t id, std::unique_ptr<Comm>* out) {
  auto comm = std::make_unique<Comm>(CommKind::kListen, dev, id);
  if (Status s = Endpoint::open(pick_rail(device), device.caps, &comm->endpoint); !s.ok()) return s;
  if (Status s = prepare_control(*comm); !s.ok()) return s;
  if (Status s = post_connect_receive(*comm); !s.ok()) return s;
  *out = std::move(comm);
  return ncclSuccess;
}

Status open_send_comm(const Device& device, int dev, const PeerAddress& listener,
                      std::unique_ptr<Comm>* out) {
  auto comm = std::make_unique<Comm>(CommKind::kSend, dev, listener.listen_id);
  if (Status s = Endpoint::open(pick_rail(device), device.caps, &comm->endpoint); !s.ok()) return s;
  Endpoint& ep = *comm->endpoint;
  if (Status s = ep.insert_peer(listener.addr, &comm->peer); !s.ok()) return s;
  comm->control_message = make_connect_message(listener.listen_id, ep.address());
  if (Status s = prepare_control(*comm); !s.ok()) return s;
  Request& r = comm->control;
  r.op = Op::kSend;
  r.state = RequestState::kNew;
  r.buf = &comm->control_message;
  r.len = sizeof comm->control_message;
  r.peer = comm->peer;
  r.tag = control_tag(listener.listen_id);
  if (Status s = ep.submit(r); !s.ok()) return s;
  *out = std::move(comm);
  return ncclSuccess;
}

Status poll_connect(Comm& send, bool* connected) {
  send.endpoint->progress();
  switch (send.control.state) {
    case RequestState::kDone:
      close_control_mr(send);
      send.control = Request{};
      *connected = true;
      return ncclSuccess;
    case RequestState::kFailed:  // already logged with the provider's reason
      return send.control.error;
    default:
      *connected = false;
      return ncclSuccess;
  }
}

Status poll_accept(Comm& listen, std::unique_ptr<Comm>* recv) {
  if (listen.accepted) {
    OFI_WARN("NET/OFI accept: listen comm %u already accepted its connection (one connection "
             "per listen comm)", listen.id);
    return ncclInvalidUsage;
  }
  listen.endpoint->progress();
  const RequestState state = listen.control.state;
  if (state != RequestState::kDone && state != RequestState::kFailed) return ncclSuccess;
  PeerAddress sender;
  if (state == RequestState::kFailed ||
      !read_connect_message(listen.control_message, listen.control.bytes, &sender) ||
      sender.listen_id != listen.id) {
    // Not a connect message of ours (or one that failed): ignore it, keep listening.
    OFI_WARN("NET/OFI accept: ignoring a malformed connect message on listen comm %u", listen.id);
    return post_connect_receive(listen);
  }
  auto comm = std::make_unique<Comm>(CommKind::kRecv, listen.dev, listen.id);
  if (Status s = listen.endpoint->insert_peer(sender.addr, &comm->peer); !s.ok()) return s;
  close_control_mr(listen);  // it lives in the domain we are handing over
  listen.control = Request{};
  comm->endpoint = std::move(listen.endpoint);
  listen.accepted = true;
  *recv = std::move(comm);
  return ncclSuccess;
}

}  // namespace nccom::ofi
