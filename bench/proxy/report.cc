#include "report.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace nccom::bench {
namespace {

uint64_t process_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// The cost of one now_ns(): a timed interval holds about one of them, and
// every timed call costs two.
double calibrate_clock() {
  double best = 1e9;
  for (int round = 0; round < 5; ++round) {
    constexpr int kCalls = 200000;
    const uint64_t t0 = now_ns();
    uint64_t sink = 0;
    for (int i = 0; i < kCalls; ++i) sink += now_ns();
    const uint64_t t1 = now_ns();
    if (sink == 1) std::printf(" ");  // keeps the loop
    best = std::min(best, static_cast<double>(t1 - t0) / kCalls);
  }
  return best;
}

double per(double v, uint64_t n) { return n == 0 ? 0 : v / static_cast<double>(n); }

}  // namespace

Report::Report(const Options& o) : o_(o), clock_ns_(calibrate_clock()) {}

bool Report::measure(const std::string& net_name, const ncclNet_v6_t* net, const std::string& path,
                     uint32_t block) {
  WorldConfig cfg;
  cfg.net = o_.share ? timed_net(net) : net;
  cfg.slices = block;
  cfg.slice_bytes = o_.bytes;
  cfg.scheduler = path == "scheduler";
  cfg.check_data = net_name != "zero" && o_.bytes >= 16;
  cfg.yield_when_idle = o_.threaded;
  const std::string what = net_name + "/" + path + "/block " + std::to_string(block);
  World world(cfg);
  if (!world.ok()) {
    std::fprintf(stderr, "%s: %s\n", what.c_str(), world.error().c_str());
    return false;
  }
  const uint64_t executions = (o_.slices + block - 1) / block;
  const double budget_s = 300;
  std::array<RankStats, 2> st;
  // Warm-up: connections' first messages, page faults, caches.
  if (!world.run(std::max<uint64_t>(1, executions / 10), o_.threaded, budget_s, &st)) {
    std::fprintf(stderr, "%s (warm-up): %s\n", what.c_str(), world.error().c_str());
    return false;
  }
  std::vector<Sample> samples;
  for (uint64_t rep = 0; rep < o_.repeat; ++rep) {
    const uint64_t cpu0 = process_cpu_ns();
    const uint64_t t0 = now_ns();
    const bool good = world.run(executions, o_.threaded, budget_s, &st);
    Sample s;
    s.wall_ns = now_ns() - t0;
    s.process_cpu_ns = process_cpu_ns() - cpu0;
    if (!good) {
      std::fprintf(stderr, "%s: %s\n", what.c_str(), world.error().c_str());
      return false;
    }
    for (const RankStats& r : st) {
      s.slices += r.slices_sent;
      s.progress_ns += r.progress_ns;
      s.progress_calls += r.progress_calls;
      s.net.add(r.net);
      s.bench_thread_cpu_ns += r.thread_cpu_ns;
    }
    samples.push_back(s);
  }
  auto key = [](const Sample& s) { return per(double(s.progress_ns), s.slices); };
  std::sort(samples.begin(), samples.end(),
            [&](const Sample& a, const Sample& b) { return key(a) < key(b); });
  Row row;
  row.net = net_name;
  row.path = path;
  row.block = block;
  row.bytes = o_.bytes;
  row.threaded = o_.threaded;
  row.s = samples[samples.size() / 2];
  const Sample& s = row.s;
  uint64_t net_calls = 0;
  for (uint64_t c : s.net.calls) net_calls += c;
  const double c = clock_ns_;
  const double prog = double(s.progress_ns) - double(s.progress_calls) * c;
  const double plugin = double(s.net.total_ns()) - double(net_calls) * c;
  row.proxy_ns_per_slice = per(prog, s.slices);
  row.total_ns_per_slice = per(prog - 2.0 * double(net_calls) * c, s.slices);
  row.plugin_ns_per_slice = per(plugin, s.slices);
  row.other_ns_per_slice = row.total_ns_per_slice - row.plugin_ns_per_slice;
  rows_.push_back(row);
  return true;
}

void Report::print() const {
  std::printf(
      "# nccom_bench_proxy %s: 2 ranks in one process, %s; clock read = %.1f ns "
      "(removed from the figures, README \"Timer cost\"); median of %llu\n",
      o_.share ? "share" : "rate",
      o_.threaded ? "one thread per rank" : "one thread ticking both ranks", clock_ns_,
      static_cast<unsigned long long>(o_.repeat));
  if (!o_.share) {
    std::printf(
        "| net | path | slices/block | slice B | slices | wall ms | slices/s (wall) | "
        "proxy ns/slice | proxy calls/slice | slices/s (proxy only) |\n");
    std::printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (const Row& r : rows_) {
      const Sample& s = r.s;
      std::printf("| %s | %s | %u | %llu | %llu | %.1f | %.0f | %.1f | %.3f | %.0f |\n",
                  r.net.c_str(), r.path.c_str(), r.block, static_cast<unsigned long long>(r.bytes),
                  static_cast<unsigned long long>(s.slices), double(s.wall_ns) / 1e6,
                  double(s.slices) * 1e9 / double(s.wall_ns), r.proxy_ns_per_slice,
                  per(double(s.progress_calls), s.slices),
                  r.proxy_ns_per_slice > 0 ? 1e9 / r.proxy_ns_per_slice : 0.0);
    }
    return;
  }
  std::printf(
      "| net | path | slices/block | slice B | slices | wall ms | GB/s | "
      "in proxy calls µs/slice | in plugin µs/slice | in proxy µs/slice | plugin %% | "
      "proxy %% | net calls/slice | timer cost removed µs/slice | "
      "other threads CPU µs/slice |\n");
  std::printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const Row& r : rows_) {
    const Sample& s = r.s;
    uint64_t net_calls = 0;
    for (uint64_t c : s.net.calls) net_calls += c;
    const double other_cpu =
        double(s.process_cpu_ns) - double(std::min(s.process_cpu_ns, s.bench_thread_cpu_ns));
    const double timer = (double(s.progress_calls) + 2.0 * double(net_calls)) * clock_ns_;
    std::printf(
        "| %s | %s | %u | %llu | %llu | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | "
        "%.1f | %.1f | %.1f |\n",
        r.net.c_str(), r.path.c_str(), r.block, static_cast<unsigned long long>(r.bytes),
        static_cast<unsigned long long>(s.slices), double(s.wall_ns) / 1e6,
        double(s.slices) * double(r.bytes) / double(s.wall_ns), r.total_ns_per_slice / 1e3,
        r.plugin_ns_per_slice / 1e3, r.other_ns_per_slice / 1e3,
        100.0 * r.plugin_ns_per_slice / std::max(1e-9, r.total_ns_per_slice),
        100.0 * r.other_ns_per_slice / std::max(1e-9, r.total_ns_per_slice),
        per(double(net_calls), s.slices), per(timer, s.slices) / 1e3,
        per(other_cpu, s.slices) / 1e3);
  }
}

bool Report::write_json(const std::string& file) const {
  FILE* f = std::fopen(file.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", file.c_str());
    return false;
  }
  std::fprintf(f, "{\"mode\": \"%s\", \"clock_ns\": %.2f, \"threaded\": %s, \"rows\": [\n",
               o_.share ? "share" : "rate", clock_ns_, o_.threaded ? "true" : "false");
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    const Sample& s = r.s;
    std::fprintf(f,
                 "  {\"net\": \"%s\", \"path\": \"%s\", \"block\": %u, \"bytes\": %llu, "
                 "\"slices\": %llu, \"wall_ns\": %llu, \"progress_ns\": %llu, "
                 "\"progress_calls\": %llu, \"net_ns\": [%llu, %llu, %llu, %llu], "
                 "\"net_calls\": [%llu, %llu, %llu, %llu], \"bench_thread_cpu_ns\": %llu, "
                 "\"process_cpu_ns\": %llu, \"proxy_ns_per_slice\": %.1f, "
                 "\"total_ns_per_slice\": %.1f, \"plugin_ns_per_slice\": %.1f, "
                 "\"other_ns_per_slice\": %.1f}%s\n",
                 r.net.c_str(), r.path.c_str(), r.block, (unsigned long long)r.bytes,
                 (unsigned long long)s.slices, (unsigned long long)s.wall_ns,
                 (unsigned long long)s.progress_ns, (unsigned long long)s.progress_calls,
                 (unsigned long long)s.net.ns[0], (unsigned long long)s.net.ns[1],
                 (unsigned long long)s.net.ns[2], (unsigned long long)s.net.ns[3],
                 (unsigned long long)s.net.calls[0], (unsigned long long)s.net.calls[1],
                 (unsigned long long)s.net.calls[2], (unsigned long long)s.net.calls[3],
                 (unsigned long long)s.bench_thread_cpu_ns, (unsigned long long)s.process_cpu_ns,
                 r.proxy_ns_per_slice, r.total_ns_per_slice, r.plugin_ns_per_slice,
                 r.other_ns_per_slice, i + 1 < rows_.size() ? "," : "");
  }
  std::fprintf(f, "]}\n");
  return std::fclose(f) == 0;
}

}  // namespace nccom::bench
