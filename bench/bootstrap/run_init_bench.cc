// nccom_bench_init — communicator init time, nccom (flat and hierarchical
// bootstrap) against Open MPI (MPI_Init + MPI_Allgather), as processes on this
// machine over loopback. See bench/RESULTS.md for what is and is not measured.
//
//   nccom_bench_init [--repeat R] [--json FILE] [--ranks 2,8,...]
//                    [--protocols flat,hierarchical] [--no-mpi] [--timeout S]
//                    [--rank-program P] [--mpi-program P] [--mpirun P]
#include "bootstrap/allgather.h"
#include "build_paths.h"
#include "init_runs.h"
#include "process_group.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nccom_bench::RunResult;

constexpr std::size_t kSliceBytes = 112;

struct Options {
  int repeat = 3;
  std::string json;
  std::vector<int> ranks = {2, 8, 32, 64, 128, 256};
  std::vector<std::string> protocols = {"flat", "hierarchical"};
  bool mpi = true;
  int timeout_s = 600;  // one run; 256 Open MPI ranks on 2 cores take ~2.5 min
  std::string rank_program = NCCOM_BENCH_RANK_PROGRAM;
  std::string mpi_program = NCCOM_BENCH_MPI_PROGRAM;  // "" when mpicc was not found
  std::string mpirun = NCCOM_BENCH_MPIRUN;
};

// Every run of one (ranks, variant) cell.
struct Cell {
  std::vector<double> ms;
  std::vector<double> skew_ms;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;  // runs whose figure stands, with a note
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "nccom_bench_init: %s\nusage: nccom_bench_init [--repeat R] [--json FILE] "
               "[--ranks 2,8,...] [--protocols flat,hierarchical] [--no-mpi] [--timeout S] "
               "[--rank-program P] [--mpi-program P] [--mpirun P]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--repeat")
      o.repeat = std::atoi(value().c_str());
    else if (a == "--json")
      o.json = value();
    else if (a == "--ranks") {
      o.ranks.clear();
      for (const auto& r : split(value())) o.ranks.push_back(std::atoi(r.c_str()));
    } else if (a == "--protocols")
      o.protocols = split(value());
    else if (a == "--no-mpi")
      o.mpi = false;
    else if (a == "--timeout")
      o.timeout_s = std::atoi(value().c_str());
    else if (a == "--rank-program")
      o.rank_program = value();
    else if (a == "--mpi-program")
      o.mpi_program = value();
    else if (a == "--mpirun")
      o.mpirun = value();
    else
      usage(("unknown option " + a).c_str());
  }
  if (o.repeat < 1 || o.timeout_s < 1) usage("--repeat and --timeout must be positive");
  for (int r : o.ranks) {
    if (r < 1) usage("--ranks must be positive");
  }
  return o;
}

// The 1-minute load average: the machine is shared, and a busy one makes
// every figure slower (both sides alike, since their runs are interleaved).
double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}

int hosts_for(int nranks) { return std::min(32, std::max(1, nranks / 8)); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string algorithm_of(int nranks) {
  using namespace nccom::bootstrap;
  const AllGatherAlgorithm a = choose_algorithm(nranks, kSliceBytes);
  const int rounds = algorithm_rounds(a, nranks);
  return std::string(algorithm_name(a)) + ", " + std::to_string(rounds) +
         (rounds == 1 ? " round" : " rounds");
}

// "12.3" for a cell whose runs all succeeded, "FAIL k/R" otherwise.
std::string figure(const Cell& c, int repeat) {
  if (!c.errors.empty() || c.ms.empty()) {
    return "FAIL " + std::to_string(c.errors.size()) + "/" + std::to_string(repeat);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%s", median(c.ms), c.warnings.empty() ? "" : "*");
  return buf;
}

std::string ratio(const Cell& a, const Cell& b) {
  if (!a.errors.empty() || !b.errors.empty() || a.ms.empty() || b.ms.empty()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", median(a.ms) / median(b.ms));
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    out += c;
  }
  return out + "\"";
}

std::string json_cell(const Cell& c) {
  std::ostringstream o;
  o << "{\"runs_ms\": [";
  for (std::size_t i = 0; i < c.ms.size(); ++i) o << (i ? ", " : "") << c.ms[i];
  o << "], \"median_ms\": ";
  if (c.errors.empty() && !c.ms.empty())
    o << median(c.ms);
  else
    o << "null";
  if (!c.skew_ms.empty()) o << ", \"median_start_skew_ms\": " << median(c.skew_ms);
  o << ", \"failures\": [";
  for (std::size_t i = 0; i < c.errors.size(); ++i)
    o << (i ? ", " : "") << json_string(c.errors[i]);
  o << "], \"warnings\": [";
  for (std::size_t i = 0; i < c.warnings.size(); ++i) {
    o << (i ? ", " : "") << json_string(c.warnings[i]);
  }
  return o.str() + "]}";
}

void record(Cell& cell, const RunResult& r, const std::string& label) {
  if (r.ok) {
    cell.ms.push_back(r.ms);
    if (r.start_skew_ms > 0) cell.skew_ms.push_back(r.start_skew_ms);
    std::fprintf(stderr, "  %-22s %9.1f ms\n", label.c_str(), r.ms);
    if (!r.warning.empty()) {
      cell.warnings.push_back(r.warning);
      std::fprintf(stderr, "  %-22s warning: %s\n", "", r.warning.c_str());
    }
  } else {
    cell.errors.push_back(r.error);
    std::fprintf(stderr, "  %-22s FAILED: %s\n", label.c_str(), r.error.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);  // a rank that died must not take the runner with it
  const long fd_limit = nccom_bench::raise_fd_limit();
  const bool mpi = o.mpi && !o.mpi_program.empty() && !o.mpirun.empty();
  std::fprintf(stderr, "nccom_bench_init: %d repeats, RLIMIT_NOFILE %ld, ranks program %s\n",
               o.repeat, fd_limit, o.rank_program.c_str());
  if (o.mpi && !mpi) {
    std::fprintf(stderr,
                 "nccom_bench_init: Open MPI part skipped: mpicc/mpirun were not found "
                 "when the build was configured (apt-get install openmpi-bin "
                 "libopenmpi-dev, then reconfigure)\n");
  }

  std::map<int, std::map<std::string, Cell>> cells;  // ranks -> variant -> runs
  std::map<int, double> load;                        // ranks -> load average before
  for (int nranks : o.ranks) {
    const int hosts = hosts_for(nranks);
    load[nranks] = load_average();
    for (int rep = 0; rep < o.repeat; ++rep) {  // variants interleaved, so drift hits all alike
      std::fprintf(stderr, "%d ranks on %d hosts, run %d/%d\n", nranks, hosts, rep + 1, o.repeat);
      for (const auto& protocol : o.protocols) {
        const nccom_bench::NccomRun run{o.rank_program, nranks, hosts, protocol,
                                        std::chrono::seconds(o.timeout_s)};
        record(cells[nranks][protocol], nccom_bench::run_nccom_once(run), "nccom " + protocol);
      }
      if (mpi) {
        const nccom_bench::MpiRun run{o.mpirun, o.mpi_program, nranks,
                                      std::chrono::seconds(o.timeout_s)};
        record(cells[nranks]["openmpi"], nccom_bench::run_mpi_once(run), "openmpi");
      }
    }
  }

  // The table: medians in ms, and nccom / Open MPI.
  std::printf("\ncommunicator init + one %zu-byte all-gather, median of %d (ms)\n", kSliceBytes,
              o.repeat);
  std::printf("%6s %5s  %-26s", "ranks", "hosts", "nccom all-gather");
  for (const auto& p : o.protocols) std::printf(" %13s", ("nccom " + p.substr(0, 4)).c_str());
  if (mpi) {
    std::printf(" %10s", "OpenMPI");
    for (const auto& p : o.protocols) std::printf(" %10s", (p.substr(0, 4) + "/MPI").c_str());
    std::printf(" %14s", "MPI start skew");
  }
  std::printf(" %6s\n", "load1");
  for (int nranks : o.ranks) {
    auto& row = cells[nranks];
    std::printf("%6d %5d  %-26s", nranks, hosts_for(nranks), algorithm_of(nranks).c_str());
    for (const auto& p : o.protocols) std::printf(" %13s", figure(row[p], o.repeat).c_str());
    if (mpi) {
      std::printf(" %10s", figure(row["openmpi"], o.repeat).c_str());
      for (const auto& p : o.protocols) std::printf(" %10s", ratio(row[p], row["openmpi"]).c_str());
      const auto& skew = row["openmpi"].skew_ms;
      std::printf(" %14.1f", skew.empty() ? 0.0 : median(skew));
    }
    std::printf(" %6.1f\n", load[nranks]);
  }
  bool failed = false;
  for (auto& [nranks, row] : cells) {
    for (auto& [variant, cell] : row) {
      for (const auto& e : cell.errors) {
        std::printf("FAILED %d ranks %s: %s\n", nranks, variant.c_str(), e.c_str());
        failed = true;
      }
      for (const auto& w : cell.warnings) {
        std::printf("* %d ranks %s: %s\n", nranks, variant.c_str(), w.c_str());
      }
    }
  }

  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << "{\n  \"benchmark\": \"bootstrap_init\",\n  \"slice_bytes\": " << kSliceBytes
        << ",\n  \"repeat\": " << o.repeat << ",\n  \"openmpi\": " << (mpi ? "true" : "false")
        << ",\n  \"results\": [";
    bool first = true;
    for (int nranks : o.ranks) {
      using namespace nccom::bootstrap;
      const AllGatherAlgorithm a = choose_algorithm(nranks, kSliceBytes);
      out << (first ? "\n" : ",\n") << "    {\"ranks\": " << nranks
          << ", \"hosts\": " << hosts_for(nranks)
          << ", \"algorithm\": " << json_string(algorithm_name(a))
          << ", \"rounds\": " << algorithm_rounds(a, nranks)
          << ", \"load_average_before\": " << load[nranks];
      for (auto& [variant, cell] : cells[nranks]) {
        out << ",\n     " << json_string(variant) << ": " << json_cell(cell);
      }
      out << "}";
      first = false;
    }
    out << "\n  ]\n}\n";
    if (!out) {
      std::fprintf(stderr, "nccom_bench_init: cannot write %s\n", o.json.c_str());
      return 1;
    }
  }
  return failed ? 1 : 0;
}
