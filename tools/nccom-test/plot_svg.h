// --plot: a self-contained SVG chart (no scripts, fonts or files outside
// it) of bus bandwidth and time per iteration against message size, one
// series per operation (or run): log2 x axis, linear busbw, log10 time.
#pragma once

#include "report.h"

#include <string>
#include <vector>

namespace nccom::nccomtest {

struct PlotSeries {
  std::string label;  // legend text, e.g. "allr"
  std::vector<Row> rows;
};

// The whole SVG document. Rows of size 0 (or time ≤ 0) have no place on a
// log axis and are left out; a series without points is still in the legend.
std::string render_svg(const std::string& title, const std::vector<PlotSeries>& series);

// Axis helpers (exposed for tests).
// Powers of `base` from the largest ≤ lo to the smallest ≥ hi (lo, hi > 0).
std::vector<double> log_ticks(double lo, double hi, double base);
// About `target` round steps (1, 2, 5 × 10^k) from 0 covering hi (hi ≥ 0).
std::vector<double> linear_ticks(double hi, int target);
// "8 B", "4 KiB", "64 MiB", "1 GiB" (powers of two shown exactly; others
// with one decimal).
std::string size_label(double bytes);

}  // namespace nccom::nccomtest
