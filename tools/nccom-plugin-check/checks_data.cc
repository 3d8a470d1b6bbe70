// Data checks over the two connections: sizes in both directions, receive
// buffers larger than the message, many outstanding requests, tag matching,
// iflush and iread.
#include "checks.h"
#include "net_ops.h"

#include <cstdio>
#include <cstring>

namespace nccom::plugin_check {
namespace {

Outcome outcome_of(Expected<std::string> result, const char* direction = "") {
  if (!result) return failed(std::string(direction) + result.error().reason);
  return passed(*result);
}

Outcome check_sizes(Context& ctx) {
  const int sizes[] = {0, 1, 8, 4096, 1 << 20, 64 << 20};
  for (Direction d : {Direction::kOutbound, Direction::kInbound}) {
    Plan recv;
    for (int size : sizes) {
      const auto key =
          static_cast<uint32_t>(recv.messages.size() + (d == Direction::kInbound ? 100 : 0));
      recv.messages.push_back({size, ctx.tag, size, key});
    }
    const bool out = d == Direction::kOutbound;
    auto moved = transfer(ctx, out ? ctx.outbound : ctx.inbound, d, sender_plan(recv), recv);
    if (!moved) return outcome_of(moved, out ? "this side -> peer: " : "peer -> this side: ");
  }
  return passed("0 B, 1 B, 8 B, 4 KiB, 1 MiB, 64 MiB each way");
}

Outcome check_larger_buffer(Context& ctx) {
  Plan recv;
  recv.messages = {{1, ctx.tag, 4096, 200},
                   {4096, ctx.tag, 65536, 201},
                   {100000, ctx.tag, 1 << 20, 202},
                   {0, ctx.tag, 64, 203}};
  return outcome_of(transfer(ctx, ctx.outbound, Direction::kOutbound, sender_plan(recv), recv));
}

Outcome check_many_outstanding(Context& ctx) {
  // Both sides try to keep more than the ABI's 128 in flight: past its own
  // cap a plugin answers NULL, which must be retried.
  Plan recv;
  recv.window = NCCL_NET_MAX_REQUESTS + 32;
  for (int i = 0; i < 4 * NCCL_NET_MAX_REQUESTS; ++i) {
    const int size = 1 + (i * 97) % 4096;
    recv.messages.push_back({size, ctx.tag, size, static_cast<uint32_t>(300 + i)});
  }
  auto moved = transfer(ctx, ctx.outbound, Direction::kOutbound, sender_plan(recv), recv);
  if (!moved) return outcome_of(moved);
  return passed("512 messages, up to 160 posted per side" +
                (moved->empty() ? std::string() : "; " + *moved));
}

// The sender interleaves tags; the receiver posts them grouped, in the
// reverse tag order. Each tag's messages must arrive in order (their sizes
// and data differ).
Outcome check_tags(Context& ctx) {
  if (!ctx.net->supports(net::kCapTags))
    return skipped("the plugin's table has no tags (ncclNet_v4)");
  const int tags[] = {1, 2, 3, 42};
  const int per_tag = 6;
  Plan send, recv;
  for (int k = 0; k < per_tag; ++k) {
    for (int tag : tags) {
      const int size = 100 * (k + 1) + tag;
      send.messages.push_back({size, tag, size, static_cast<uint32_t>(1000 + tag * 100 + k)});
    }
  }
  for (int t = 3; t >= 0; --t) {
    for (int k = 0; k < per_tag; ++k) {
      const int size = 100 * (k + 1) + tags[t];
      recv.messages.push_back(
          {size, tags[t], size, static_cast<uint32_t>(1000 + tags[t] * 100 + k)});
    }
  }
  return outcome_of(transfer(ctx, ctx.outbound, Direction::kOutbound, send, recv));
}

Outcome check_iflush(Context& ctx) {
  if (!ctx.net->supports(net::kCapFlush)) return skipped("the plugin's table has no iflush");
  Plan recv;
  recv.flush = true;
  recv.messages = {{4096, ctx.tag, 4096, 500}, {1 << 20, ctx.tag, 1 << 20, 501}};
  return outcome_of(transfer(ctx, ctx.inbound, Direction::kInbound, sender_plan(recv), recv));
}

// Reads [offset, offset + size) of the peer's exposed buffer into `local`.
Expected<> read_remote(Context& ctx, unsigned char* local, void* local_mh, uint64_t address,
                       uint64_t mr_key, std::size_t offset, std::size_t size, uint32_t key) {
  const std::string what =
      "iread of " + std::to_string(size) + " bytes at +" + std::to_string(offset);
  std::memset(local, 0, size);
  auto request = post_retrying(
      [&](void** req) {
        return ctx.net->iread(ctx.inbound.local, local, size, local_mh, address + offset, mr_key,
                              req);
      },
      ctx.deadline(), what);
  if (!request) return request.take_error();
  auto reported = wait_request(*ctx.net, *request, ctx.deadline(), what);
  if (!reported) return reported.take_error();
  if (*reported != -1 && *reported != static_cast<int>(size)) {
    return fail("test of the " + what + " reported " + std::to_string(*reported) + " bytes");
  }
  std::vector<unsigned char> expected(offset + size);
  fill_pattern(expected.data(), expected.size(), key);
  if (std::memcmp(local, expected.data() + offset, size) != 0) {
    return fail(what + " did not read the peer's bytes");
  }
  return {};
}

// Receives the peer's pump (peer_server.cc) until its closing 8-byte message.
Expected<> drain_pump(Context& ctx) {
  Arena arena(4096);
  void* mh = nullptr;
  void* link = ctx.inbound.local;
  auto ok =
      expect_ok(ctx.net->reg_mr(link, arena.data(), arena.size(), NCCL_PTR_HOST, &mh), "regMr");
  if (!ok) return ok;
  const Deadline deadline = ctx.deadline();
  for (int size = 0; size != 8;) {
    void* data = arena.data();
    int capacity = 8, tag = ctx.tag;
    auto request = post_retrying(
        [&](void** req) { return ctx.net->irecv(link, 1, &data, &capacity, &tag, &mh, req); },
        deadline, "irecv of the peer's progress messages");
    if (!request) return request.take_error();
    auto received = wait_request(*ctx.net, *request, deadline, "a progress message from the peer");
    if (!received) {
      arena.leak();
      return received.take_error();
    }
    size = *received;
    if (size != 4 && size != 8)
      return fail("a progress message arrived with " + std::to_string(size) + " bytes");
  }
  return expect_ok(ctx.net->dereg_mr(link, mh), "deregMr");
}

// The peer registers a buffer on its send comm and hands over address and
// key; this side reads it through its recv comm. Meanwhile the peer keeps
// its send comm busy ("pump"): manual-progress providers move an RMA only
// while the target is being progressed.
Outcome check_iread(Context& ctx) {
  if (!ctx.props.rma_supported) return skipped("device 0 reports rma_supported = 0");
  if (!ctx.net->supports(net::kCapRma)) return skipped("the plugin's table has no getMrKey/iread");
  constexpr std::size_t kSize = 1 << 20;
  constexpr uint32_t kKey = 600;
  const std::string remote = std::to_string(ctx.inbound.remote);
  guard::step("iread: the peer exposes a buffer");
  auto exposed =
      ctx.peer->call("expose " + remote + " " + std::to_string(kSize) + " " + std::to_string(kKey));
  if (!exposed) return failed(exposed.error());
  int id = 0;
  unsigned long long address = 0, mr_key = 0;
  if (std::sscanf(exposed->c_str(), "%d %llu %llu", &id, &address, &mr_key) != 3) {
    return failed("the peer answered '" + *exposed + "' to expose");
  }
  auto ok = ctx.peer->send("pump " + remote + " " + std::to_string(ctx.tag));
  const bool pumping = static_cast<bool>(ok);
  Arena local(kSize);
  void* mh = nullptr;
  if (ok) {
    ok = expect_ok(ctx.net->reg_mr(ctx.inbound.local, local.data(), kSize, NCCL_PTR_HOST, &mh),
                   "regMr of the iread destination");
  }
  const std::pair<std::size_t, std::size_t> reads[] = {{0, kSize}, {12344, 4}, {4096, 8}};
  for (const auto& [offset, size] : reads) {
    if (ok) ok = read_remote(ctx, local.data(), mh, address, mr_key, offset, size, kKey);
  }
  if (!ok) local.leak();
  if (ok) ok = expect_ok(ctx.net->dereg_mr(ctx.inbound.local, mh), "deregMr");
  Expected<> drained;
  Expected<std::string> pumped = std::string();
  if (pumping) {
    drained = ctx.peer->signal("stop");
    if (drained) drained = drain_pump(ctx);
    pumped = ctx.peer->reply();
  }
  auto released = ctx.peer->call("unexpose " + std::to_string(id));
  for (const Failure* f :
       {ok ? nullptr : &ok.error(), drained ? nullptr : &drained.error(),
        pumped ? nullptr : &pumped.error(), released ? nullptr : &released.error()}) {
    if (f != nullptr) return failed(*f);
  }
  return passed("1 MiB, 4 B and 8 B reads");
}

}  // namespace

std::vector<CheckDef> data_checks() {
  const std::vector<const char*> both = {"connect-then-accept", "accept-then-connect"};
  return {
      {"sizes", "isend/irecv/test of 0 B .. 64 MiB, both ways, data verified", both, check_sizes},
      {"larger-recv-buffer",
       "a receive buffer larger than the message",
       {"connect-then-accept"},
       check_larger_buffer},
      {"many-outstanding",
       "more than 128 requests posted; NULL = back-pressure, retried",
       {"connect-then-accept"},
       check_many_outstanding},
      {"tags", "interleaved tags matched in order", {"connect-then-accept"}, check_tags},
      {"iflush", "iflush after receives", {"accept-then-connect"}, check_iflush},
      {"iread",
       "iread of the peer's registered buffer",
       {"accept-then-connect", "properties"},
       check_iread},
  };
}

}  // namespace nccom::plugin_check
