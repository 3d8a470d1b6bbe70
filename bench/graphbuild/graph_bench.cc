// nccom_bench_graph: graph build time and peak memory of whole simulated
// clusters (host/graphbuild/simulate.h through the real topology plugins),
// Trn2 at LNC=2 (64 ranks a node), OLD vs NEW search.
//
// Every configuration runs in a child process of its own, so its peak RSS
// (ru_maxrss from wait4) is that configuration's alone. The child measures
// with CLOCK_MONOTONIC:
//   cluster  simulate_cluster: every node's system XML, search and fragments
//   rank0    simulate_rank(0): the all-gathers answered, postset, MLA cycles
//   sample   simulate_rank for 7 more ranks spread over the cluster (mean)
// and writes one line "cluster_ms rank0_ms sample_ms channels" to a pipe.
//
//   nccom_bench_graph [--nodes 1,16,64,256] [--algorithms old,new] [--repeat N] [--json FILE]
#include "log/log.h"
#include "topo_tool.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace tt = nccom::topotool;

struct Sample {
  double cluster_ms = 0, rank0_ms = 0, sample_ms = 0;
  int channels = 0;
  long maxrss_kib = 0;
  std::string error;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The child's work; returns the line to report.
std::string measure(const std::string& argv0, int nodes, const std::string& algorithm) {
  // Silent: the OLD search's rings trip the MLA-contiguity WARN on every
  // rank, and printing it is not what is measured.
  (void)nccom::log::configure(nccom::log::Settings{});
  auto context = tt::load_context(tt::tool_dir(argv0), {});
  if (!context) return "error " + context.error().message;
  auto backends = tt::Backends::load(std::move(*context));
  if (!backends) return "error " + backends.error().message;
  auto p = tt::choose_platform(**backends, "trn2", 16, 2);
  if (!p) return "error " + p.error().message;
  nccom::graphbuild::GraphSettings settings;
  settings.new_algorithm = algorithm == "new" ? 1 : 0;
  const auto req = tt::cluster_request(*p, nodes, p->node.n_vcores(), settings);
  auto t0 = std::chrono::steady_clock::now();
  auto cluster = nccom::graphbuild::simulate_cluster((*backends)->list(), req);
  const double cluster_ms = ms_since(t0);
  if (!cluster) return "error " + cluster.error().message;
  t0 = std::chrono::steady_clock::now();
  auto s = nccom::graphbuild::simulate_rank(*cluster, 0);
  const double rank0_ms = ms_since(t0);
  if (!s) return "error " + s.error().message;
  const int n = cluster->layout.n_ranks;
  std::vector<int> sample;
  for (int k = 1; k <= 7; ++k) sample.push_back(static_cast<int>(static_cast<long>(n - 1) * k / 7));
  t0 = std::chrono::steady_clock::now();
  for (int r : sample) {
    auto x = nccom::graphbuild::simulate_rank(*cluster, r);
    if (!x) return "error " + x.error().message;
  }
  const double sample_ms = ms_since(t0) / static_cast<double>(sample.size());
  char line[160];
  std::snprintf(line, sizeof line, "%.3f %.3f %.3f %d", cluster_ms, rank0_ms, sample_ms,
                s->rings.nChannels);
  return line;
}

Sample run_child(const std::string& argv0, int nodes, const std::string& algorithm) {
  Sample out;
  int fds[2];
  if (pipe(fds) != 0) {
    out.error = "pipe failed";
    return out;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string line = measure(argv0, nodes, algorithm) + "\n";
    (void)!write(fds[1], line.data(), line.size());
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t k; (k = read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(k));
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status)) {
    out.error = "child failed";
    return out;
  }
  out.maxrss_kib = ru.ru_maxrss;
  std::istringstream in(text);
  if (text.rfind("error ", 0) == 0) {
    out.error = text.substr(6, text.size() - 7);
  } else if (!(in >> out.cluster_ms >> out.rank0_ms >> out.sample_ms >> out.channels)) {
    out.error = "unreadable child report: " + text;
  }
  return out;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) v.push_back(x);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> nodes = {1, 16, 64, 256};
  std::vector<std::string> algorithms = {"old", "new"};
  int repeat = 3;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "nccom_bench_graph: %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--nodes") {
      nodes.clear();
      for (const auto& x : split(v)) nodes.push_back(std::atoi(x.c_str()));
    } else if (a == "--algorithms") {
      algorithms = split(v);
    } else if (a == "--repeat") {
      repeat = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--json") {
      json = v;
    } else {
      std::fprintf(stderr, "nccom_bench_graph: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::printf(
      "graph build, trn2 LNC=2 (64 ranks a node), median of %d runs, one child process each\n",
      repeat);
  std::printf("%6s %7s %4s %12s %10s %12s %12s\n", "nodes", "ranks", "alg", "cluster ms",
              "rank0 ms", "per-rank ms", "peak RSS MiB");
  std::string js = "[";
  int failures = 0;
  for (int n : nodes) {
    for (const std::string& alg : algorithms) {
      std::vector<Sample> runs;
      for (int k = 0; k < repeat; ++k) runs.push_back(run_child(argv[0], n, alg));
      if (!runs.front().error.empty()) {
        std::printf("%6d %7d %4s  error: %s\n", n, n * 64, alg.c_str(), runs.front().error.c_str());
        ++failures;
        continue;
      }
      std::sort(runs.begin(), runs.end(),
                [](const Sample& a, const Sample& b) { return a.cluster_ms < b.cluster_ms; });
      const Sample& m = runs[runs.size() / 2];
      long rss = 0;
      for (const Sample& s : runs) rss = std::max(rss, s.maxrss_kib);
      std::printf("%6d %7d %4s %12.1f %10.1f %12.1f %12.1f\n", n, n * 64, alg.c_str(), m.cluster_ms,
                  m.rank0_ms, m.sample_ms, static_cast<double>(rss) / 1024.0);
      std::fflush(stdout);
      char obj[320];
      std::snprintf(
          obj, sizeof obj,
          "%s{\"nodes\": %d, \"ranks\": %d, \"algorithm\": \"%s\", \"cluster_ms\": %.3f, "
          "\"rank0_ms\": %.3f, \"per_rank_ms\": %.3f, \"channels\": %d, \"peak_rss_kib\": %ld}",
          js.size() > 1 ? ",\n " : "", n, n * 64, alg.c_str(), m.cluster_ms, m.rank0_ms,
          m.sample_ms, m.channels, rss);
      js += obj;
    }
  }
  js += "]\n";
  if (!json.empty()) std::ofstream(json) << js;
  return failures == 0 ? 0 : 1;
}
