// Setup checks: binding, init, devices and properties, the peer, the two
// connection orders, memory registration.
#include "checks.h"
#include "net/nccl_result.h"
#include "net/plugin_answers.h"
#include "net_ops.h"
#include "plugin_log.h"
#include "watched_net.h"

#include <cstdio>
#include <cstring>

namespace nccom::plugin_check {
namespace {

std::string capability_names(unsigned caps) {
  std::string names;
  const std::pair<unsigned, const char*> all[] = {
      {net::kCapFini, "fini"},
      {net::kCapTags, "tags"},
      {net::kCapNonBlockingConnect, "non-blocking-connect"},
      {net::kCapDmaBuf, "dma-buf"},
      {net::kCapRma, "rma"},
      {net::kCapFlush, "iflush"}};
  for (const auto& [bit, name] : all) {
    if (caps & bit) names += (names.empty() ? "" : " ") + std::string(name);
  }
  return names.empty() ? "none" : names;
}

Outcome check_bind(Context& ctx) {
  guard::step("loading the plugin (dlopen) and binding its table");
  Expected<std::unique_ptr<net::Net>> net = fail("");
  {
    guard::PluginCall call("constructors (dlopen)");
    net = bind_plugin(ctx.options.plugin, ctx.options.layout);
  }
  if (!net) return failed(net.error());
  ctx.net = watched(std::move(net).value());
  return passed(net::describe(ctx.net->info()) +
                "; capabilities: " + capability_names(ctx.net->capabilities()));
}

Outcome check_init(Context& ctx) {
  auto ok = expect_ok(ctx.net->init(plugin_logger()), "init");
  if (!ok) return failed(ok.error());
  ctx.tag = ctx.net->supports(net::kCapTags) ? 7 : 0;
  return passed();
}

Outcome check_devices(Context& ctx) {
  int ndev = -1;
  auto ok = expect_ok(ctx.net->devices(&ndev), "devices");
  if (!ok) return failed(ok.error());
  if (ndev < 1)
    return failed("devices reported " + std::to_string(ndev) + " devices; at least 1 is needed");
  if (ndev > net::kMaxNetDevices) {
    return failed("devices reported " + std::to_string(ndev) + " devices, more than the " +
                  std::to_string(net::kMaxNetDevices) +
                  " nccom accepts; libnccom refuses this plugin");
  }
  ctx.ndev = ndev;
  return passed(std::to_string(ndev) + " device(s)");
}

Outcome check_properties(Context& ctx) {
  std::string problems, note;
  for (int dev = 0; dev < ctx.ndev; ++dev) {
    guard::step("getProperties(" + std::to_string(dev) + ")");
    ncclNetProperties_v6_t p{};
    auto ok =
        expect_ok(ctx.net->get_properties(dev, &p), "getProperties(" + std::to_string(dev) + ")");
    if (!ok) return failed(ok.error());
    const std::string who = "device " + std::to_string(dev) + ": ";
    if (p.name == nullptr) problems += who + "name is NULL; ";
    if (p.name != nullptr && strnlen(p.name, net::kMaxNetNameBytes + 1) > net::kMaxNetNameBytes) {
      problems += who + "name is not NUL-terminated within " +
                  std::to_string(net::kMaxNetNameBytes) + " bytes; ";
    }
    if (p.maxRecvs < 1 || p.maxRecvs > net::kMaxNetRecvs) {
      problems += who + "maxRecvs " + std::to_string(p.maxRecvs) + " is outside 1.." +
                  std::to_string(net::kMaxNetRecvs) + "; ";
    }
    if ((p.ptrSupport & NCCL_PTR_HOST) == 0) {
      problems += who + "ptrSupport " + std::to_string(p.ptrSupport) + " lacks NCCL_PTR_HOST; ";
    }
    if (p.speed <= 0)
      problems += who + "speed " + std::to_string(p.speed) + " Mbps is not positive; ";
    if (dev == 0) {
      ctx.props = p;
      char text[200];
      const std::string name =
          p.name != nullptr ? net::bounded_text(p.name, net::kMaxNetNameBytes) : "(null)";
      std::snprintf(text, sizeof text,
                    "device 0 \"%s\": %d Mbps, ptrSupport 0x%x, maxRecvs %d, rma %d", name.c_str(),
                    p.speed, p.ptrSupport, p.maxRecvs, p.rma_supported);
      note = text;
    }
  }
  if (!problems.empty()) return failed(problems.substr(0, problems.size() - 2));
  return passed(note);
}

Outcome check_peer(Context& ctx) {
  Expected<std::unique_ptr<Peer>> peer = fail("");
  if (ctx.options.two_process) {
    char timeout[32];
    std::snprintf(timeout, sizeof timeout, "%.3f", ctx.options.timeout.count() / 1000.0);
    std::vector<std::string> args{"--layout", net::to_string(ctx.options.layout), "--timeout",
                                  timeout};
    if (ctx.options.verbose) args.push_back("--verbose");
    args.push_back(ctx.options.plugin);
    peer = Peer::start_process(args, ctx.options.timeout);
  } else {
    peer = Peer::start_thread(*ctx.net, ctx.options.timeout);
  }
  if (!peer) return failed(peer.error());
  ctx.peer = std::move(peer).value();
  return passed("the peer is " + ctx.peer->description());
}

Outcome check_outbound(Context& ctx) {
  auto link = open_link(ctx, Direction::kOutbound);
  if (!link) return failed(link.error());
  ctx.outbound = *link;
  return passed(link->observed);
}

Outcome check_inbound(Context& ctx) {
  auto link = open_link(ctx, Direction::kInbound);
  if (!link) return failed(link.error());
  ctx.inbound = *link;
  return passed(link->observed);
}

// regMr/deregMr of host memory on a send and a recv comm, including two
// overlapping registrations of one buffer (the host registers per use).
Outcome check_reg_mr(Context& ctx) {
  const std::size_t sizes[] = {1, 4096, 1 << 20, 64 << 20};
  Arena arena(64 << 20);
  for (void* comm : {ctx.outbound.local, ctx.inbound.local}) {
    const char* which = comm == ctx.outbound.local ? "send comm" : "recv comm";
    for (std::size_t size : sizes) {
      guard::step(std::string("regMr on the ") + which);
      const std::string what = std::to_string(size) + " bytes on the " + which;
      void* first = nullptr;
      void* second = nullptr;
      auto ok = expect_ok(ctx.net->reg_mr(comm, arena.data(), size, NCCL_PTR_HOST, &first),
                          "regMr of " + what);
      if (ok) {
        ok = expect_ok(ctx.net->reg_mr(comm, arena.data(), size, NCCL_PTR_HOST, &second),
                       "a second regMr of the same " + what);
      }
      if (ok) ok = expect_ok(ctx.net->dereg_mr(comm, second), "deregMr of the second " + what);
      if (ok) ok = expect_ok(ctx.net->dereg_mr(comm, first), "deregMr of " + what);
      if (!ok) {
        arena.leak();
        return failed(ok.error());
      }
    }
  }
  return passed();
}

}  // namespace

std::vector<CheckDef> setup_checks() {
  return {
      {"bind", "the host binds the plugin (bind_library)", {}, check_bind},
      {"init", "init with the host's logger", {"bind"}, check_init},
      {"devices", "devices reports at least one", {"init"}, check_devices},
      {"properties", "getProperties of every device is sane", {"devices"}, check_properties},
      {"peer", "start the second endpoint", {"devices"}, check_peer},
      {"connect-then-accept", "connect before the peer accepts", {"peer"}, check_outbound},
      {"accept-then-connect", "accept polled before the peer connects", {"peer"}, check_inbound},
      {"reg-mr",
       "regMr/deregMr of host memory",
       {"connect-then-accept", "accept-then-connect"},
       check_reg_mr},
  };
}

}  // namespace nccom::plugin_check
