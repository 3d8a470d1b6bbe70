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
#include <nccom/net_v6.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {

void quiet_logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  if (level == NCCL_LOG_WARN) std::fprintf(stderr, "peer WARN: %s\n", fmt);
}

std::string to_hex(const char* bytes, size_t len) {
  std::string hex;
  char two[3];
  for (size_t i = 0; i < len; ++i) {
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned char>(bytes[i]));
    hex += two;
  }
  return hex;
}

bool from_hex(const std::string& hex, char* out, size_t len) {
  if (hex.size() != 2 * len) return false;
  for (size_t i = 0; i < len; ++i) {
    unsigned value = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &value) != 1) return false;
    out[i] = static_cast<char>(value);
  }
  return true;
}

// Calls step until it yields a comm or fails; 20 s at most.
template <class Step>
bool until_ready(void** comm, Step step) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (*comm == nullptr && std::chrono::steady_clock::now() < deadline) {
    if (step() != ncclSuccess) return false;
  }
  return *comm != nullptr;
}

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 2 ? argv[1] : "";
  if (!(mode == "connect" && argc == 3) && !(mode == "listen" && argc == 2)) {
    std::fprintf(stderr, "usage: %s connect <hex handle> | listen\n", argv[0]);
    return 2;
  }
  void* library = dlopen(NET_OFI_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  const auto* net = library == nullptr ? nullptr
                                       : static_cast<const ncclNet_v6_t*>(
                                             dlsym(library, NCCL_NET_PLUGIN_SYMBOL_V6));
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
