// Running the configurations of nccom_bench_proxy and printing their tables.
#pragma once

#include "bench_world.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::bench {

struct Options {
  bool share = false;  // the "share" mode (timed net), else "rate"
  std::vector<std::string> nets;
  std::vector<std::string> paths = {"transport", "scheduler"};
  std::vector<uint64_t> blocks;
  uint64_t bytes = 4096;
  uint64_t slices = 200000;  // slices each rank sends per repetition
  uint64_t repeat = 3;
  bool threaded = false;
  std::string json;
};

// One repetition of one configuration, both ranks summed.
struct Sample {
  uint64_t wall_ns = 0;
  uint64_t slices = 0;  // slices sent (= received), both ranks
  uint64_t progress_ns = 0;
  uint64_t progress_calls = 0;
  CallTimes net;
  uint64_t bench_thread_cpu_ns = 0;
  uint64_t process_cpu_ns = 0;
};

struct Row {
  std::string net, path;
  uint32_t block = 0;
  uint64_t bytes = 0;
  bool threaded = false;
  Sample s;  // the median repetition (by proxy time per slice)
  // Derived, clock cost removed (README "Timer cost").
  double proxy_ns_per_slice = 0;   // rate: all time inside the proxy calls
  double total_ns_per_slice = 0;   // share: inside the proxy calls
  double plugin_ns_per_slice = 0;  // share: inside the net table's calls
  double other_ns_per_slice = 0;   // share: total - plugin
};

class Report {
 public:
  explicit Report(const Options& o);
  // Runs one configuration (warm-up + `repeat` repetitions); false (and a
  // message on stderr) when it failed.
  bool measure(const std::string& net_name, const ncclNet_v6_t* net, const std::string& path,
               uint32_t block);
  void print() const;
  bool write_json(const std::string& file) const;

 private:
  Options o_;
  double clock_ns_ = 0;  // cost of one now_ns()
  std::vector<Row> rows_;
};

}  // namespace nccom::bench
