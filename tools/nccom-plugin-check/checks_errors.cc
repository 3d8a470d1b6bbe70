// Teardown — closing every comm, fini — and the robustness checks, error
// paths: a message larger than the receive buffer, a garbage handle, NULL
// arguments.
#include "checks.h"
#include "net/nccl_result.h"
#include "net_ops.h"
#include "plugin_log.h"

#include <cstring>
#include <functional>
#include <random>
#include <thread>

namespace nccom::plugin_check {
namespace {

constexpr int kSent = 4096;
constexpr int kCapacity = 1024;
constexpr unsigned char kUntouched = 0x5C;

// How the receive of kSent bytes into kCapacity bytes ended: "" when it
// completed claiming the whole message fit, else how it was reported.
Expected<std::string> receive_too_small(Context& ctx, const Link& link, Arena& arena) {
  void* mh = nullptr;
  auto ok = expect_ok(ctx.net->reg_mr(link.local, arena.data(), arena.size(), NCCL_PTR_HOST, &mh),
                      "regMr");
  if (!ok) return ok.take_error();
  void* data = arena.data();
  int size = kCapacity;
  int tag = ctx.tag;
  void* request = nullptr;
  const Deadline deadline = ctx.deadline();
  auto finished = [&](Expected<std::string> how) {
    take_last_warning();
    (void)ctx.net->dereg_mr(link.local, mh);
    return how;
  };
  while (request == nullptr) {
    const ncclResult_t rc = ctx.net->irecv(link.local, 1, &data, &size, &tag, &mh, &request);
    if (rc != ncclSuccess) return finished("irecv refused it: " + net::result_text(rc));
    if (request == nullptr && deadline.expired())
      return finished(timeout("irecv to accept the request"));
  }
  for (;;) {
    int done = 0, reported = -1;
    const ncclResult_t rc = ctx.net->test(request, &done, &reported);
    if (rc != ncclSuccess) return finished("test failed it: " + net::result_text(rc));
    if (done) {
      (void)finished(std::string());
      if (reported == kSent) return "test reported all " + std::to_string(kSent) + " bytes";
      if (reported == kCapacity) return std::string();  // silently truncated
      return fail("test reported " + std::to_string(reported) + " bytes received");
    }
    if (deadline.expired()) {
      arena.leak();
      return timeout("the receive into a too-small buffer to complete or fail");
    }
    std::this_thread::yield();
  }
}

Outcome check_recv_too_small(Context& ctx) {
  auto link = open_link(ctx, Direction::kInbound);
  if (!link) return failed(link.error());
  Plan send;
  send.messages = {{kSent, ctx.tag, kSent, 700}};
  auto started = ctx.peer->send("run " + std::to_string(link->remote) + " send " + encode(send));
  if (!started) return failed(started.error());
  guard::step("a receive into a buffer smaller than the message");
  Arena arena(8192);
  std::memset(arena.data(), kUntouched, arena.size());
  auto how = receive_too_small(ctx, *link, arena);
  auto sender = ctx.peer->reply();
  bool intact = true;
  for (std::size_t i = kCapacity; i < arena.size(); ++i)
    intact = intact && arena.data()[i] == kUntouched;
  auto closed = close_link(ctx, *link, Direction::kInbound);

  if (!intact)
    return failed("the plugin wrote past the end of the " + std::to_string(kCapacity) +
                  "-byte receive buffer");
  if (!how) return failed(how.error());
  if (how->empty()) {
    return failed("a " + std::to_string(kSent) + "-byte message into a " +
                  std::to_string(kCapacity) + "-byte buffer completed as a success of " +
                  std::to_string(kCapacity) + " bytes: silently truncated");
  }
  if (!sender && sender.error().timed_out) {
    return failed("the sender's request neither completed nor failed: " + sender.error().reason);
  }
  if (!closed) return failed("closing after the error: " + closed.error().reason);
  return passed("reported: " + *how +
                "; the sender: " + (sender ? "completed" : sender.error().reason));
}

Outcome check_garbage_handle(Context& ctx) {
  unsigned char random[NCCL_NET_HANDLE_MAXSIZE], ones[NCCL_NET_HANDLE_MAXSIZE];
  std::mt19937 generator(12345);
  for (unsigned char& b : random) b = static_cast<unsigned char>(generator());
  std::memset(ones, 0xFF, sizeof ones);
  std::string note;
  for (unsigned char* handle : {random, ones}) {
    const char* which = handle == random ? "random bytes" : "all 0xFF";
    guard::step(std::string("connect with a garbage handle (") + which + ")");
    const Deadline deadline(
        std::min<std::chrono::milliseconds>(ctx.options.timeout, std::chrono::seconds(10)));
    for (;;) {
      void* comm = nullptr;
      const ncclResult_t rc = ctx.net->connect(0, handle, &comm);
      if (rc != ncclSuccess) {
        take_last_warning();
        note += std::string(note.empty() ? "" : "; ") + which + ": " + net::result_text(rc);
        break;
      }
      if (comm != nullptr) {
        (void)ctx.net->close_send(comm);
        return failed(std::string("connect with a garbage handle (") + which +
                      ") handed out a send comm");
      }
      if (deadline.expired()) {
        return failed(std::string("connect with a garbage handle (") + which +
                      ") kept answering 'not yet' instead of failing");
      }
      std::this_thread::yield();
    }
  }
  return passed("refused: " + note);
}

Outcome check_null_args(Context& ctx) {
  net::Net& n = *ctx.net;
  unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  ncclNetProperties_v6_t props{};
  void* comm = nullptr;
  char byte = 0;
  void* data = &byte;
  int size = 1, tag = ctx.tag, done = 0;
  void* mh = nullptr;
  const int bad_dev = ctx.ndev;
  const std::pair<const char*, std::function<ncclResult_t()>> cases[] = {
      {"devices(NULL)", [&] { return n.devices(nullptr); }},
      {"getProperties(0, NULL)", [&] { return n.get_properties(0, nullptr); }},
      {"getProperties(ndev)", [&] { return n.get_properties(bad_dev, &props); }},
      {"getProperties(-1)", [&] { return n.get_properties(-1, &props); }},
      {"listen(0, NULL handle)", [&] { return n.listen(0, nullptr, &comm); }},
      {"listen(0, handle, NULL)", [&] { return n.listen(0, handle, nullptr); }},
      {"listen(ndev)", [&] { return n.listen(bad_dev, handle, &comm); }},
      {"connect(0, NULL handle)", [&] { return n.connect(0, nullptr, &comm); }},
      {"accept(NULL listen comm)", [&] { return n.accept(nullptr, &comm); }},
      {"isend(NULL comm)", [&] { return n.isend(nullptr, data, 1, tag, nullptr, &comm); }},
      {"irecv(NULL comm)", [&] { return n.irecv(nullptr, 1, &data, &size, &tag, &mh, &comm); }},
      {"test(NULL request)", [&] { return n.test(nullptr, &done, &size); }},
  };
  std::string accepted;
  for (const auto& [what, call] : cases) {
    guard::step(std::string("null-args: ") + what);
    comm = nullptr;
    if (call() == ncclSuccess) accepted += std::string(accepted.empty() ? "" : ", ") + what;
    take_last_warning();
  }
  if (!accepted.empty()) return failed("returned ncclSuccess instead of an error: " + accepted);
  return passed(std::to_string(std::size(cases)) + " calls refused");
}

Outcome check_close(Context& ctx) {
  if (ctx.outbound.local == nullptr && ctx.inbound.local == nullptr)
    return skipped("no connection is open");
  auto out = close_link(ctx, ctx.outbound, Direction::kOutbound);
  auto in = close_link(ctx, ctx.inbound, Direction::kInbound);
  if (!out) return failed(out.error());
  if (!in) return failed(in.error());
  return passed("closeSend, closeRecv, closeListen on both sides");
}

Outcome check_fini(Context& ctx) {
  if (!ctx.net->supports(net::kCapFini)) {
    return skipped("the table has no fini (ncclNet_v5/v4: the plugin cleans up at exit)");
  }
  if (ctx.options.two_process && ctx.peer != nullptr) {
    auto remote = ctx.peer->call("fini");
    if (!remote) return failed(remote.error());
  }
  guard::step("fini");
  auto ok = expect_ok(ctx.net->fini(), "fini");
  if (!ok) return failed(ok.error());
  return passed();
}

}  // namespace

std::vector<CheckDef> teardown_checks() {
  return {
      {"close", "close every comm", {"connect-then-accept", "accept-then-connect"}, check_close},
      {"fini", "fini after every comm is closed", {"close"}, check_fini},
  };
}

std::vector<CheckDef> robustness_checks() {
  // From single calls to a whole transfer.
  const Group group = Group::kRobustness;
  return {
      {"null-args",
       "NULL and out-of-range arguments are errors",
       {"devices"},
       check_null_args,
       group},
      {"garbage-handle",
       "connect with a garbage handle fails",
       {"devices"},
       check_garbage_handle,
       group},
      {"recv-too-small",
       "a message larger than the receive buffer fails or is reported",
       {"peer"},
       check_recv_too_small,
       group},
  };
}

}  // namespace nccom::plugin_check
