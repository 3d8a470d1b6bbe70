// net_ofi_rma_target_peer: the other process of
// NetOfiRmaTarget.ReadCompletesWhileTargetPollsAnotherComm. It is the
// *target* of an RMA read and, like the NET_NEURON transport's sending proxy
// once its sends are done, never tests the comm being read: it only polls a
// receive posted on a different comm.
//
//   net_ofi_rma_target_peer <hex listen handle of the test> [idle <file>]
//     1. connects to the test's handle → send comm S (the test's recv comm
//        reads from S's registered region);
//     2. listens → "handle=<hex>"; the test connects → recv comm R2;
//     3. registers a 64 KiB pattern on S → "region=<hex addr> key=<hex key>";
//     4. posts one receive on R2 and tests only that request until it
//        completes (the test sends once its read completed, or gave up)
//        → "released <first byte>".
//     With "idle <file>", step 4 calls no plugin function at all — the
//     process's own work is done, as a rank waiting in a barrier elsewhere —
//     until <file> exists (the test creates it) → "released file".
//
// Exit codes: 0 released, 2 usage, 3 plugin, 4 connection setup, 5 data path,
// 6 not released within 60 s.
#include "build_paths.h"
#include "handle_hex.h"

#include <nccom/net_v6.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

using net_ofi_wire::from_hex;
using net_ofi_wire::quiet_logger;
using net_ofi_wire::say;
using net_ofi_wire::to_hex;

// Calls step until it yields a comm or fails; 30 s at most.
template <class Step>
bool until_ready(void** comm, Step step) {
  return net_ofi_wire::until_ready(comm, std::chrono::seconds(30), step);
}

int poll_other_comm(const ncclNet_v6_t* net, void* recv);

}  // namespace

int main(int argc, char** argv) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  const bool idle = argc == 4 && std::strcmp(argv[2], "idle") == 0;
  if ((argc != 2 && !idle) || !from_hex(argv[1], handle, sizeof handle)) {
    std::fprintf(stderr, "usage: %s <hex listen handle> [idle <file>]\n", argv[0]);
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
  void* send = nullptr;
  if (!until_ready(&send, [&] { return net->connect(0, handle, &send); })) return 4;

  char own_handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  if (net->listen(0, own_handle, &listen) != ncclSuccess) return 4;
  say("handle=" + to_hex(own_handle, sizeof own_handle));
  void* recv = nullptr;
  if (!until_ready(&recv, [&] { return net->accept(listen, &recv); })) return 4;

  std::vector<uint8_t> region(64 << 10);
  for (size_t i = 0; i < region.size(); ++i) region[i] = static_cast<uint8_t>(i * 7 + 3);
  void* region_mh = nullptr;
  uint64_t key = 0;
  if (net->regMr(send, region.data(), region.size(), NCCL_PTR_HOST, &region_mh) != ncclSuccess ||
      net->getMrKey(region_mh, &key) != ncclSuccess) {
    return 5;
  }
  char line[96];
  std::snprintf(line, sizeof line, "region=%" PRIx64 " key=%" PRIx64,
                static_cast<uint64_t>(reinterpret_cast<uintptr_t>(region.data())), key);
  say(line);

  if (idle) {
    // No plugin call until the file appears. The sleep is the idleness
    // being tested, not a synchronisation: the test creates the file after
    // its reads finished (or gave up).
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (access(argv[3], F_OK) != 0) {
      if (Clock::now() > deadline) return 6;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    say("released file");
  } else if (int rc = poll_other_comm(net, recv); rc != 0) {
    return rc;
  }
  // The region stays registered until here: the plugin may still be serving
  // a read from it, so it is deregistered before it goes away.
  (void)net->deregMr(send, region_mh);
  (void)net->closeRecv(recv);
  (void)net->closeListen(listen);
  (void)net->closeSend(send);
  (void)net->fini();
  return 0;
}

namespace {

// Only R2's receive is tested — never S, the read's target.
int poll_other_comm(const ncclNet_v6_t* net, void* recv) {
  uint8_t release = 0;
  void* data = &release;
  int size = sizeof release;
  int tag = 1;
  void* request = nullptr;
  if (net->irecv(recv, 1, &data, &size, &tag, nullptr, &request) != ncclSuccess ||
      request == nullptr) {
    return 5;
  }
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  int done = 0;
  while (done == 0 && Clock::now() < deadline) {
    if (net->test(request, &done, nullptr) != ncclSuccess) return 5;
  }
  if (done == 0) return 6;
  say("released " + std::to_string(release));
  return 0;
}

}  // namespace
