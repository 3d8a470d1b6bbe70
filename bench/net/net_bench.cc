// nccom_bench_net: point-to-point bandwidth and latency of a net plugin
// between two processes on this host, through the plugin's ncclNet_v6 table.
//
//   nccom_bench_net --plugin PATH [--label NAME] [--device lo] [--quick] [--socks N --threads T]
//
// --socks / --threads: the socket plugin's data sockets per helper thread
// and helper threads per comm (NCCL_NSOCKS_PERTHREAD, NCCL_SOCKET_NTHREADS).
//
// The process forks+execs itself as the peer (side B) with one end of a
// socketpair for the handle exchange and the barriers; FI_PROVIDER and the
// rest of the environment are inherited. Prints one line per measurement:
//   result LABEL stream SIZE ITERS SECONDS MBPS
//   result LABEL pingpong SIZE ITERS SECONDS USEC_ONE_WAY MBPS
// (MB = 10^6 bytes; ping-pong MB/s counts both directions, as fi_pingpong
// does). bench/net/run.sh runs it next to iperf3 and fi_pingpong.
#include "bench_link.h"
#include "bench_measure.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace nccom::bench {
namespace {

struct Options {
  std::string plugin, label = "plugin", device = "lo";
  int peer_fd = -1;  // set only in side B
  bool quick = false;
  int socks = 0, threads = 0;  // the socket plugin's counts; 0 = its defaults
};

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kMaxSize = 64 * kMiB;
constexpr int kWindow = 16;

// 8 B .. 512 KiB in steps of 4, then 1, 4, 16, 64 MiB.
std::vector<size_t> stream_sizes(bool quick) {
  std::vector<size_t> sizes;
  for (size_t s = 8; s <= 512 * 1024; s *= 4) sizes.push_back(s);
  for (size_t s = kMiB; s <= kMaxSize; s *= 4) sizes.push_back(s);
  if (quick) sizes = {8, kMiB};
  return sizes;
}

std::vector<size_t> pingpong_sizes(bool quick) {
  if (quick) return {8};
  return {8, 64, 512, 4096, kMiB, kMaxSize};
}

// Enough bytes for a stable figure on a shared machine, bounded in time.
int stream_iters(size_t size, bool quick) {
  const size_t budget = (quick ? 16 : 256) * kMiB;
  return static_cast<int>(std::clamp<size_t>(budget / size, 8, quick ? 500 : 4000));
}

int pingpong_iters(size_t size, bool quick) {
  const size_t budget = (quick ? 4 : 128) * kMiB;
  return static_cast<int>(std::clamp<size_t>(budget / size, 4, quick ? 100 : 1000));
}

void run(const Options& o) {
  const bool side_a = o.peer_fd < 0;
  int fds[2] = {-1, -1};
  pid_t peer = -1;
  if (side_a) {
    // Only the peer's end crosses the exec, so either side sees EOF if the
    // other dies.
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0 ||
        fcntl(fds[1], F_SETFD, 0) != 0)
      throw std::runtime_error("socketpair");
    std::vector<std::string> args = {"/proc/self/exe", "--plugin",  o.plugin,
                                     "--label",        o.label,     "--device",
                                     o.device,         "--peer-fd", std::to_string(fds[1])};
    if (o.quick) args.push_back("--quick");
    for (const std::string& a : {std::string("--socks"), std::to_string(o.socks),
                                 std::string("--threads"), std::to_string(o.threads)})
      args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&peer, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("posix_spawn of the peer failed");
    close(fds[1]);
  }
  Link link({.plugin = o.plugin,
             .device = o.device,
             .oob_fd = side_a ? fds[0] : o.peer_fd,
             .buffer_bytes = kMaxSize,
             .nsocks_per_thread = o.socks,
             .nthreads = o.threads});
  if (side_a) {
    std::fprintf(stderr, "%s: plugin \"%s\", device %s\n", o.label.c_str(),
                 link.plugin_name().c_str(), link.device_name().c_str());
  }
  link.verify(side_a, 8);
  link.verify(side_a, kMaxSize);
  for (size_t size : stream_sizes(o.quick)) {
    const int iters = stream_iters(size, o.quick);
    stream_seconds(link, side_a, size, std::min(iters, 4), kWindow);  // warm-up
    const double t = stream_seconds(link, side_a, size, iters, kWindow);
    if (side_a) {
      std::printf("result %s stream %zu %d %.6f %.3f\n", o.label.c_str(), size, iters, t,
                  size * static_cast<double>(iters) / t / 1e6);
      std::fflush(stdout);
    }
  }
  for (size_t size : pingpong_sizes(o.quick)) {
    const int iters = pingpong_iters(size, o.quick);
    pingpong_seconds(link, side_a, size, std::min(iters, 4));  // warm-up
    const double t = pingpong_seconds(link, side_a, size, iters);
    if (side_a) {
      std::printf("result %s pingpong %zu %d %.6f %.3f %.3f\n", o.label.c_str(), size, iters, t,
                  t / (2.0 * iters) * 1e6, 2.0 * size * iters / t / 1e6);
      std::fflush(stdout);
    }
  }
  link.barrier();  // neither side closes while the other still measures
  if (side_a) {
    int status = 0;
    if (waitpid(peer, &status, 0) != peer || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error("the peer process failed");
  }
}

}  // namespace
}  // namespace nccom::bench

int main(int argc, char** argv) {
  nccom::bench::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nccom_bench_net: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--plugin")
      o.plugin = value();
    else if (arg == "--label")
      o.label = value();
    else if (arg == "--device")
      o.device = value();
    else if (arg == "--peer-fd")
      o.peer_fd = std::atoi(value().c_str());
    else if (arg == "--quick")
      o.quick = true;
    else if (arg == "--socks")
      o.socks = std::atoi(value().c_str());
    else if (arg == "--threads")
      o.threads = std::atoi(value().c_str());
    else {
      std::fprintf(stderr,
                   "usage: nccom_bench_net --plugin PATH [--label NAME] [--device lo] [--quick] "
                   "[--socks N --threads T]\n");
      return 2;
    }
  }
  if (o.plugin.empty()) {
    std::fprintf(stderr, "nccom_bench_net: --plugin is required\n");
    return 2;
  }
  try {
    nccom::bench::run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nccom_bench_net (%s, side %s): %s\n", o.label.c_str(),
                 o.peer_fd < 0 ? "A" : "B", e.what());
    return 1;
  }
  return 0;
}
