// nccom_bench_proxy — the proxy's overhead.
//
//   nccom_bench_proxy rate  [--nets zero,zero-copy] [--blocks 1,64,512] [--bytes 4096]
//                           [--paths transport,scheduler] [--slices 200000] [--repeat 3]
//                           [--threads] [--json FILE]
//   nccom_bench_proxy share [--nets socket,ofi] [--bytes 1048576] [--blocks 16]
//                           [--paths transport,scheduler] [--slices 1024] [--repeat 3]
//                           [--single-thread] [--json FILE]
//   --transport PLUGIN.so: another build of the NET_NEURON transport (A/B runs).
//
// rate:  slices per second through the NET_NEURON proxy primitives over a
//        zero-cost net, and the proxy's cost per slice.
// share: a stream of (by default 1 MiB) slices between two ranks over a real
//        net; time inside the net table's data-path calls vs the rest of the
//        time inside the proxy calls.
// See README.md for what exactly is timed and how to read the tables.
#include "bench_world.h"
#include "build_paths.h"
#include "report.h"
#include "zero_net.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nb = nccom::bench;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string item =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool parse_u64(const std::string& s, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || s[0] == '-') return false;
  *out = v;
  return true;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "nccom_bench_proxy: %s\n"
               "usage: nccom_bench_proxy rate|share [--nets a,b] [--blocks 1,64,512] "
               "[--bytes N] [--paths transport,scheduler] [--slices N] [--repeat R] "
               "[--threads|--single-thread] [--transport PLUGIN.so] [--json FILE]\n",
               why);
  return 2;
}

// The net table a name stands for, initialised (NULL and *why otherwise).
const ncclNet_v6_t* net_named(const std::string& name, std::string* why) {
  static const ncclNet_v6_t* socket = nullptr;
  static const ncclNet_v6_t* ofi = nullptr;
  if (name == "zero" || name == "zero-copy") {
    const ncclNet_v6_t* net = nb::zero_net(nb::ZeroNetOptions{name == "zero-copy"});
    return nb::init_net(net, why) ? net : nullptr;
  }
  if (name == "socket") {
    if (socket == nullptr) socket = nb::load_net(NCCOM_BENCH_SOCKET_PLUGIN, nullptr, why);
    return socket;
  }
  if (name == "ofi") {
#ifdef NCCOM_BENCH_OFI_PLUGIN
    if (ofi == nullptr) ofi = nb::load_net(NCCOM_BENCH_OFI_PLUGIN, "tcp;ofi_rxm", why);
    return ofi;
#else
    *why = "libnccom-net (net_neuron) was not built";
    return nullptr;
#endif
  }
  *why = "unknown net '" + name + "' (zero, zero-copy, socket, ofi)";
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("missing the mode");
  const std::string mode = argv[1];
  if (mode != "rate" && mode != "share") return usage(("unknown mode '" + mode + "'").c_str());
  const bool share = mode == "share";
  nb::Options o;
  o.share = share;
  o.nets = share ? std::vector<std::string>{"socket", "ofi"}
                 : std::vector<std::string>{"zero", "zero-copy"};
  o.blocks = share ? std::vector<uint64_t>{16} : std::vector<uint64_t>{1, 64, 512};
  o.bytes = share ? (1u << 20) : 4096;
  o.slices = share ? 1024 : 200000;
  o.threaded = share;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--threads") {
      o.threaded = true;
    } else if (a == "--single-thread") {
      o.threaded = false;
    } else if (a == "--nets" && value(&v)) {
      o.nets = split(v);
    } else if (a == "--paths" && value(&v)) {
      o.paths = split(v);
      for (const std::string& p : o.paths) {
        if (p != "transport" && p != "scheduler") return usage(("unknown path " + p).c_str());
      }
    } else if (a == "--blocks" && value(&v)) {
      o.blocks.clear();
      for (const std::string& b : split(v)) {
        uint64_t n = 0;
        if (!parse_u64(b, &n) || n == 0 || n > 100000) return usage("bad --blocks");
        o.blocks.push_back(n);
      }
    } else if (a == "--bytes" && value(&v)) {
      if (!parse_u64(v, &o.bytes) || o.bytes > 0x7FFFFFFF) return usage("bad --bytes");
    } else if (a == "--slices" && value(&v)) {
      if (!parse_u64(v, &o.slices) || o.slices == 0) return usage("bad --slices");
    } else if (a == "--repeat" && value(&v)) {
      if (!parse_u64(v, &o.repeat) || o.repeat == 0 || o.repeat > 100) return usage("bad --repeat");
    } else if (a == "--json" && value(&v)) {
      o.json = v;
    } else if (a == "--transport" && value(&v)) {
      nb::set_transport_path(v);
    } else {
      return usage(("unknown or incomplete argument " + a).c_str());
    }
  }
  if (o.nets.empty() || o.blocks.empty() || o.paths.empty()) return usage("empty list");

  nb::Report report(o);
  bool all_ok = true;
  for (const std::string& name : o.nets) {
    std::string why;
    const ncclNet_v6_t* net = net_named(name, &why);
    if (net == nullptr) {
      std::fprintf(stderr, "skipping net %s: %s\n", name.c_str(), why.c_str());
      all_ok = false;
      continue;
    }
    for (const std::string& path : o.paths) {
      for (uint64_t block : o.blocks) {
        if (!report.measure(name, net, path, static_cast<uint32_t>(block))) all_ok = false;
      }
    }
  }
  report.print();
  if (!o.json.empty() && !report.write_json(o.json)) all_ok = false;
  return all_ok ? 0 : 1;
}
