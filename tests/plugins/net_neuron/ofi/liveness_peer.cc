// net_ofi_liveness_peer: the other process of the NetOfiProvider.*Killed*
// cases. It loads libnccom-net.so like the tests (FI_PROVIDER comes from the
// environment), sets up one side of a connection, says so on stdout, then
// idles until the test SIGKILLs it.
//
//   net_ofi_liveness_peer connect <hex handle>   → "connected"
//   net_ofi_liveness_peer listen                 → "handle=<hex>", then "accepted"
//
// It never outlives a crashed test by long: it exits on its own after 60 s.
// Exit codes: 0 after the idle period, 2 usage, 3 plugin, 4 connection setup.
#include "build_paths.h"
#include "handle_hex.h"

#include <nccom/net_v6.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {

using net_ofi_wire::from_hex;
using net_ofi_wire::quiet_logger;
using net_ofi_wire::say;
using net_ofi_wire::to_hex;

// Calls step until it yields a comm or fails; 20 s at most.
template <class Step>
bool until_ready(void** comm, Step step) {
  return net_ofi_wire::until_ready(comm, std::chrono::seconds(20), step);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 2 ? argv[1] : "";
  if (!(mode == "connect" && argc == 3) && !(mode == "listen" && argc == 2)) {
    std::fprintf(stderr, "usage: %s connect <hex handle> | listen\n", argv[0]);
    return 2;
  }
  void* library = dlopen(NET_OFI_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  const auto* net =
      library == nullptr
          ? nullptr
          : static_cast<const ncclNet_v6_t*>(dlsym(library, NCCL_NET_PLUGIN_SYMBOL_V6));
  if (net == nullptr || net->init(quiet_logger) != ncclSuccess) {
    std::fprintf(stderr, "cannot load or init %s\n", NET_OFI_PLUGIN);
    return 3;
  }
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* comm = nullptr;
  if (mode == "connect") {
    if (!from_hex(argv[2], handle, sizeof handle)) return 2;
    if (!until_ready(&comm, [&] { return net->connect(0, handle, &comm); })) return 4;
    say("connected");
  } else {
    void* listen = nullptr;
    if (net->listen(0, handle, &listen) != ncclSuccess) return 4;
    say("handle=" + to_hex(handle, sizeof handle));
    if (!until_ready(&comm, [&] { return net->accept(listen, &comm); })) return 4;
    say("accepted");
  }
  // Idle, not synchronisation: the test kills this process at a moment of
  // its choosing; the deadline only keeps an orphan from lingering.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}
