// Connections between this side and the peer (checks.h): opening them in
// either order, closing them, and moving a plan across one.
#include "checks.h"
#include "net/setup_calls.h"
#include "net_ops.h"

#include <cstdlib>
#include <sstream>

namespace nccom::plugin_check {
namespace {

Expected<int> parse_id(const std::string& text) {
  std::istringstream in(text);
  int id = 0;
  if (!(in >> id)) return fail("the peer answered '" + text + "' where a comm id was due");
  return id;
}

// The failure of one end, or of both: a timeout here is usually explained
// by the peer's error, so both are told.
template <class A, class B>
Failure either(const Expected<A>& here, const Expected<B>& there) {
  if (here.ok()) return there.error();
  if (there.ok()) return here.error();
  Failure both = here.error();
  both.reason += "; " + there.error().reason;
  return both;
}

// How a blocking connect/accept is reported: not a failure, the host copes.
constexpr const char* kCopes = " (nccom copes: connect/accept run on helper threads)";

// This side connects to the peer's listener: connect is called once before
// the peer starts accepting, then both poll.
Expected<Link> open_outbound(Context& ctx) {
  auto listened = ctx.peer->call("listen 0");
  if (!listened) return listened.take_error();
  std::istringstream in(*listened);
  Link link;
  std::string hex;
  in >> link.remote_listen >> hex;
  unsigned char handle[NCCL_NET_HANDLE_MAXSIZE];
  if (!from_hex(hex, handle, sizeof handle)) return fail("the peer sent a malformed handle");

  // The first connect runs before the peer accepts; a plugin may block
  // there until it does (its helper thread stays inside), which the host
  // copes with and the report says.
  void* comm = nullptr;
  const ncclResult_t rc = ctx.net->setup_calls().connect(0, handle, &comm);
  if (rc != ncclSuccess) return nccl_failure("connect (called before the peer accepts)", rc);
  if (comm == nullptr && ctx.observe && stays_inside(*ctx.net, handle)) {
    link.observed = "connect blocks until the peer accepts" + std::string(kCopes);
  }
  auto accepting = ctx.peer->send("accept " + std::to_string(link.remote_listen));
  if (!accepting) return accepting.take_error();
  if (comm == nullptr) {
    auto connected = poll_connect(*ctx.net, 0, handle, ctx.deadline());
    auto accepted = ctx.peer->reply();  // collected either way
    if (!connected || !accepted) return either(connected, accepted);
    link.local = *connected;
    auto id = parse_id(*accepted);
    if (!id) return id.take_error();
    link.remote = *id;
    return link;
  }
  auto accepted = ctx.peer->reply();
  if (!accepted) return accepted.take_error();
  auto id = parse_id(*accepted);
  if (!id) return id.take_error();
  link.local = comm;
  link.remote = *id;
  return link;
}

// The peer connects to this side's listener, which has already been polled
// with accept (and must have answered "not yet": nobody had connected).
Expected<Link> open_inbound(Context& ctx) {
  unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  Link link;
  auto ok = expect_ok(ctx.net->listen(0, handle, &link.local_listen), "listen");
  if (!ok) return ok.take_error();
  if (link.local_listen == nullptr) return fail("listen succeeded but handed out no listen comm");
  void* early = nullptr;
  ok = expect_ok(ctx.net->setup_calls().accept(link.local_listen, &early),
                 "accept (before anyone connected)");
  if (!ok) return ok.take_error();
  if (early != nullptr) return fail("accept handed out a recv comm before anyone connected");
  if (ctx.observe && stays_inside(*ctx.net, link.local_listen))
    link.observed = "accept blocks until a peer connects" + std::string(kCopes);
  auto connecting = ctx.peer->send("connect 0 " + to_hex(handle, sizeof handle));
  if (!connecting) return connecting.take_error();
  auto accepted = poll_accept(*ctx.net, link.local_listen, ctx.deadline());
  auto connected = ctx.peer->reply();
  if (!accepted || !connected) return either(accepted, connected);
  link.local = *accepted;
  auto id = parse_id(*connected);
  if (!id) return id.take_error();
  link.remote = *id;
  return link;
}

}  // namespace

Expected<Link> open_link(Context& ctx, Direction direction) {
  guard::step(direction == Direction::kOutbound ? "connect/accept (this side connects)"
                                                : "connect/accept (this side accepts)");
  return direction == Direction::kOutbound ? open_outbound(ctx) : open_inbound(ctx);
}

Expected<> close_link(Context& ctx, Link& link, Direction direction) {
  guard::step("closing a connection");
  Expected<> first;
  auto note = [&first](Expected<> r) {
    if (first && !r) first = std::move(r);
  };
  if (link.local != nullptr) {
    note(direction == Direction::kOutbound
             ? expect_ok(ctx.net->close_send(link.local), "closeSend")
             : expect_ok(ctx.net->close_recv(link.local), "closeRecv"));
  }
  if (link.local_listen != nullptr) {
    note(expect_ok(ctx.net->setup_calls().close_listen(link.local_listen), "closeListen"));
  }
  for (int id : {link.remote, link.remote_listen}) {
    if (id == 0) continue;
    auto closed = ctx.peer->call("close " + std::to_string(id));
    if (!closed) note(closed.take_error());
  }
  link = Link{};
  return first;
}

Plan sender_plan(const Plan& recv_plan) {
  Plan plan = recv_plan;
  plan.flush = false;
  for (Message& m : plan.messages) m.capacity = m.size;
  return plan;
}

Expected<std::string> transfer(Context& ctx, const Link& link, Direction direction,
                               const Plan& send_plan, const Plan& recv_plan) {
  const bool local_sends = direction == Direction::kOutbound;
  guard::step(local_sends ? "data from this side to the peer" : "data from the peer to this side");
  auto started =
      ctx.peer->send("run " + std::to_string(link.remote) +
                     (local_sends ? " recv " + encode(recv_plan) : " send " + encode(send_plan)));
  if (!started) return started.take_error();
  auto local = run_plan(*ctx.net, link.local, local_sends ? Role::kSend : Role::kRecv,
                        local_sends ? send_plan : recv_plan, ctx.deadline());
  auto remote = ctx.peer->reply();
  if (!local || !remote) return either(local, remote);
  const int here = local->back_pressure;
  const int there = std::atoi(remote->c_str());
  if (here + there == 0) return std::string();
  return "back-pressure (NULL request, retried): " + std::to_string(local_sends ? here : there) +
         " on isend, " + std::to_string(local_sends ? there : here) + " on irecv";
}

}  // namespace nccom::plugin_check
