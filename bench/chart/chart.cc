// nccom_bench_chart — an SVG chart per benchmark table, drawn the way
// nccom-test --plot draws its own runs (bus bandwidth and time against
// message size, one series per implementation).
//
//   nccom_bench_chart --title TEXT --out FILE.svg [DATA.csv]   (stdin without DATA)
//
// DATA: lines "series,bytes,busbw_gbps,time_us" (no header; '#' starts a
// comment). Series keep the order of their first line; rows of one series
// may come in any order and are drawn by size. A malformed line is an error
// naming the line, and no file is written.
#include "plot_svg.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nccom::nccomtest::PlotSeries;
using nccom::nccomtest::Row;

bool parse_number(const std::string& field, double* out) {
  if (field.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  if (errno != 0 || end == field.c_str() || *end != '\0' || !(v >= 0)) return false;
  *out = v;
  return true;
}

// "" on success, else why not (with the line number).
std::string read_series(std::istream& in, const std::string& source,
                        std::vector<PlotSeries>* series) {
  std::map<std::string, size_t> index;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream fs(line);
    for (std::string f; std::getline(fs, f, ',');) fields.push_back(f);
    double bytes = 0, busbw = 0, time_us = 0;
    const std::string where = source + ":" + std::to_string(number) + ": ";
    if (fields.size() != 4 || fields[0].empty())
      return where + "expected series,bytes,busbw_gbps,time_us, got \"" + line + "\"";
    if (!parse_number(fields[1], &bytes) || !parse_number(fields[2], &busbw) ||
        !parse_number(fields[3], &time_us))
      return where + "bytes, busbw and time must be numbers >= 0, got \"" + line + "\"";
    auto [it, added] = index.emplace(fields[0], series->size());
    if (added) series->push_back({fields[0], {}});
    Row row;
    row.bytes = static_cast<uint64_t>(bytes);
    row.out_of_place.busbw = busbw;
    row.out_of_place.algbw = busbw;
    row.out_of_place.time_us = time_us;
    row.in_place.ran = false;
    (*series)[it->second].rows.push_back(row);
  }
  if (in.bad()) return source + ": read error";
  if (series->empty()) return source + ": no data lines";
  for (PlotSeries& s : *series)
    std::sort(s.rows.begin(), s.rows.end(),
              [](const Row& a, const Row& b) { return a.bytes < b.bytes; });
  return "";
}

int usage() {
  std::fprintf(stderr, "usage: nccom_bench_chart --title TEXT --out FILE.svg [DATA.csv]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string title, out, data;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--title" || arg == "--out") && i + 1 < argc) {
      (arg == "--title" ? title : out) = argv[++i];
    } else if (!arg.empty() && arg[0] != '-' && data.empty()) {
      data = arg;
    } else {
      return usage();
    }
  }
  if (out.empty()) return usage();
  std::vector<PlotSeries> series;
  std::string why;
  if (data.empty()) {
    why = read_series(std::cin, "stdin", &series);
  } else {
    std::ifstream in(data);
    if (!in) {
      std::fprintf(stderr, "nccom_bench_chart: cannot open %s: %s\n", data.c_str(),
                   std::strerror(errno));
      return 1;
    }
    why = read_series(in, data, &series);
  }
  if (!why.empty()) {
    std::fprintf(stderr, "nccom_bench_chart: %s\n", why.c_str());
    return 1;
  }
  const std::string svg = nccom::nccomtest::render_svg(title, series);
  std::ofstream file(out, std::ios::trunc);
  if (!file || !(file << svg) || !file.flush()) {
    std::fprintf(stderr, "nccom_bench_chart: cannot write %s: %s\n", out.c_str(),
                 std::strerror(errno));
    return 1;
  }
  return 0;
}
