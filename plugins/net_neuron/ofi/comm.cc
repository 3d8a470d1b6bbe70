// Comms: the request pool, teardown, and the non-blocking connection setup
// (listen posts a control receive; connect sends one control message; accept
// waits for it and takes the listener's endpoint over).
#include "comm.h"

#include <atomic>
#include <cstdio>

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

// A malformed or unmatched connect message is ignored: listen again.
Status ignore_connect_message(Comm& listen) {
  OFI_WARN("NET/OFI accept: ignoring a malformed connect message on listen comm %u", listen.id);
  listen.have_sender = false;
  listen.sender = PeerAddress{};
  return post_connect_receive(listen);
}

}  // namespace

std::string comm_label(const Comm& comm) {
  const char* kind = comm.kind == CommKind::kListen ? "listen"
                     : comm.kind == CommKind::kSend ? "send"
                                                    : "recv";
  char text[96];
  std::snprintf(text, sizeof text, "%s comm %u (%p)", kind, comm.id,
                static_cast<const void*>(&comm));
  return text;
}

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
  // Last: the data already handed to the provider is on its way before the
  // peer hears the goodbye.
  watch.close_gracefully();
  liveness_listener.reset();
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

void Comm::abandon_request(Request* r) {
  if (r->state == RequestState::kQueued && endpoint) endpoint->forget(*r);
  r->state = RequestState::kAbandoned;
}

void Comm::release_request(Request* r) {
  if (r->state == RequestState::kFree || r->state == RequestState::kAbandoned) return;
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
  if (liveness_config().enabled) {
    // Failing to open it (logged) costs this connection its liveness, not the
    // connection: the handle then says "none" and both sides go without.
    const Endpoint& ep = *comm->endpoint;
    (void)LivenessListener::open(ep.addr_format(), ep.address(), &comm->liveness_listener);
  }
  *out = std::move(comm);
  return ncclSuccess;
}

Status open_send_comm(const Device& device, int dev, const PeerAddress& listener,
                      std::unique_ptr<Comm>* out) {
  auto comm = std::make_unique<Comm>(CommKind::kSend, dev, listener.listen_id);
  if (Status s = Endpoint::open(pick_rail(device), device.caps, &comm->endpoint); !s.ok()) return s;
  Endpoint& ep = *comm->endpoint;
  if (Status s = ep.insert_peer(listener.addr, &comm->peer); !s.ok()) return s;
  // Liveness only when both sides want it: the listener says so in its handle.
  const bool liveness = liveness_config().enabled &&
                        listener.liveness.kind != static_cast<uint8_t>(LivenessKind::kNone);
  const uint64_t nonce = liveness ? make_nonce() : 0;
  comm->watch.name(comm_label(*comm), describe_address(listener.addr));
  if (liveness) {
    if (Status s = comm->watch.start_connect(listener, nonce); !s.ok()) return s;
  }
  comm->control_message = make_connect_message(listener.listen_id, ep.address(), nonce);
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
  *connected = false;
  send.endpoint->progress();
  // Failed: already logged with the provider's reason.
  if (send.control.state == RequestState::kFailed) return send.control.error;
  bool link_ready = false;
  if (Status s = send.watch.poll_connect(&link_ready); !s.ok()) return s;
  if (send.control.state != RequestState::kDone || !link_ready) return ncclSuccess;
  close_control_mr(send);
  send.control = Request{};
  *connected = true;
  return ncclSuccess;
}

Status poll_accept(Comm& listen, std::unique_ptr<Comm>* recv) {
  if (listen.accepted) {
    OFI_WARN(
        "NET/OFI accept: listen comm %u already accepted its connection (one connection "
        "per listen comm)",
        listen.id);
    return ncclInvalidUsage;
  }
  if (!listen.have_sender) {
    listen.endpoint->progress();
    const RequestState state = listen.control.state;
    if (state != RequestState::kDone && state != RequestState::kFailed) return ncclSuccess;
    PeerAddress sender;
    if (state == RequestState::kFailed ||
        !read_connect_message(listen.control_message, listen.control.bytes, &sender) ||
        sender.listen_id != listen.id ||
        (sender.liveness_nonce != 0 && !listen.liveness_listener)) {
      // Not a connect message of ours (or one that failed): ignore it, keep listening.
      return ignore_connect_message(listen);
    }
    listen.sender = std::move(sender);
    listen.have_sender = true;
  }
  SocketFd link;
  if (listen.sender.liveness_nonce != 0) {
    link = listen.liveness_listener->take(listen.id, listen.sender.liveness_nonce);
    if (!link.valid()) return ncclSuccess;  // its hello has not arrived yet
  }
  auto comm = std::make_unique<Comm>(CommKind::kRecv, listen.dev, listen.id);
  if (Status s = listen.endpoint->insert_peer(listen.sender.addr, &comm->peer); !s.ok()) return s;
  comm->watch.name(comm_label(*comm), describe_address(listen.sender.addr));
  if (link.valid()) comm->watch.adopt(std::move(link));
  close_control_mr(listen);  // it lives in the domain we are handing over
  listen.control = Request{};
  comm->endpoint = std::move(listen.endpoint);
  listen.liveness_listener.reset();  // one connection per listen comm
  listen.accepted = true;
  *recv = std::move(comm);
  return ncclSuccess;
}

}  // namespace nccom::ofi
