// The --plot chart (see plot_svg.h).
#include "plot_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nccom::nccomtest {
namespace {

constexpr double kWidth = 900, kPanelHeight = 320, kLeft = 80, kRight = 170, kTop = 50, kGap = 70;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string n2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string num_label(double v) {
  char buf[32];
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-2)) {
    std::snprintf(buf, sizeof buf, "%.0e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

std::string text(double x, double y, const std::string& s, const char* anchor, int size = 12,
                 const std::string& extra = "") {
  return "<text x=\"" + n2(x) + "\" y=\"" + n2(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\" font-family=\"sans-serif\"" + extra + ">" +
         esc(s) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const char* style) {
  return "<line x1=\"" + n2(x1) + "\" y1=\"" + n2(y1) + "\" x2=\"" + n2(x2) + "\" y2=\"" + n2(y2) +
         "\" " + style + "/>\n";
}

// One panel: frame, x ticks (sizes), y ticks, the series.
struct Panel {
  double top;
  std::string title, y_label;
  bool log_y;
  std::vector<double> y_ticks;
};

double plot_w() { return kWidth - kLeft - kRight; }

}  // namespace

std::vector<double> log_ticks(double lo, double hi, double base) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi >= lo) || !(base > 1)) return out;
  double t = std::pow(base, std::floor(std::log(lo) / std::log(base) + 1e-9));
  const double top = std::pow(base, std::ceil(std::log(hi) / std::log(base) - 1e-9));
  for (; t <= top * (1 + 1e-9) && out.size() < 200; t *= base) out.push_back(t);
  if (out.size() == 1) out.push_back(out[0] * base);
  return out;
}

std::vector<double> linear_ticks(double hi, int target) {
  if (!(hi > 0)) hi = 1;
  const double raw = hi / std::max(1, target);
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  std::vector<double> out;
  for (int i = 0; out.empty() || out.back() < hi - 1e-12; ++i) out.push_back(step * i);
  return out;
}

std::string size_label(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  if (bytes == std::floor(bytes)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, kUnits[u]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, kUnits[u]);
  }
  return buf;
}

namespace {

// The data's range: sizes (x) and, over every timing that ran, the largest
// busbw and the smallest and largest time. 1 when there is nothing.
struct Extent {
  double xmin = 0, xmax = 0, bwmax = 0, tmin = 0, tmax = 0;
};

Extent measure(const std::vector<PlotSeries>& series) {
  Extent e;
  for (const PlotSeries& s : series) {
    for (const Row& r : s.rows) {
      if (r.bytes == 0) continue;
      const double b = static_cast<double>(r.bytes);
      e.xmin = e.xmin == 0 ? b : std::min(e.xmin, b);
      e.xmax = std::max(e.xmax, b);
      for (const Timing* t : {&r.out_of_place, &r.in_place}) {
        if (!t->ran) continue;
        e.bwmax = std::max(e.bwmax, t->busbw);
        if (t->time_us > 0) {
          e.tmin = e.tmin == 0 ? t->time_us : std::min(e.tmin, t->time_us);
          e.tmax = std::max(e.tmax, t->time_us);
        }
      }
    }
  }
  if (e.xmin == 0) e.xmin = e.xmax = 1;
  if (e.tmin == 0) e.tmin = e.tmax = 1;
  return e;
}

// One panel (pi 0: busbw, 1: time): grid, ticks, frame, labels, one
// polyline per series and placement (out-of-place solid, in-place dashed).
template <class Px>
std::string render_panel(const Panel& p, int pi, const std::vector<double>& xt, Px px,
                         const std::vector<PlotSeries>& series) {
  const double y0 = p.log_y ? std::log10(p.y_ticks.front()) : 0;
  const double y1 = p.log_y ? std::log10(p.y_ticks.back()) : p.y_ticks.back();
  auto py = [&](double v) {
    const double u = p.log_y ? std::log10(v) : v;
    return p.top + kPanelHeight - (u - y0) / (y1 - y0) * kPanelHeight;
  };
  std::string svg = "<g class=\"panel\" id=\"" + std::string(pi == 0 ? "busbw" : "time") + "\">\n";
  svg += text(kLeft + plot_w() / 2, p.top - 10, p.title + (p.log_y ? " (log scale)" : ""), "middle",
              13);
  // Grid and ticks.
  const size_t stride = std::max<size_t>(1, (xt.size() + 11) / 12);
  for (size_t i = 0; i < xt.size(); ++i) {
    const double x = px(xt[i]);
    svg += line(x, p.top, x, p.top + kPanelHeight, "stroke=\"#e0e0e0\"");
    svg += line(x, p.top + kPanelHeight, x, p.top + kPanelHeight + 5, "stroke=\"black\"");
    // Every stride-th tick counted back from the largest is labelled.
    if ((xt.size() - 1 - i) % stride == 0)
      svg += text(x, p.top + kPanelHeight + 18, size_label(xt[i]), "middle", 11);
  }
  for (double v : p.y_ticks) {
    const double y = py(v);
    svg += line(kLeft, y, kLeft + plot_w(), y, "stroke=\"#e0e0e0\"");
    svg += line(kLeft - 5, y, kLeft, y, "stroke=\"black\"");
    svg += text(kLeft - 8, y + 4, num_label(v), "end", 11);
  }
  svg += "<rect x=\"" + n2(kLeft) + "\" y=\"" + n2(p.top) + "\" width=\"" + n2(plot_w()) +
         "\" height=\"" + n2(kPanelHeight) + "\" fill=\"none\" stroke=\"black\"/>\n";
  svg += text(kLeft + plot_w() / 2, p.top + kPanelHeight + 36, "message size (log scale)", "middle",
              12);
  svg += text(20, p.top + kPanelHeight / 2, p.y_label, "middle", 12,
              " transform=\"rotate(-90 20 " + n2(p.top + kPanelHeight / 2) + ")\"");
  for (size_t si = 0; si < series.size(); ++si) {
    const char* color = kColors[si % (sizeof kColors / sizeof kColors[0])];
    for (int placement = 0; placement < 2; ++placement) {
      std::string pts, marks;
      for (const Row& r : series[si].rows) {
        const Timing& t = placement == 0 ? r.out_of_place : r.in_place;
        const double v = pi == 0 ? t.busbw : t.time_us;
        if (r.bytes == 0 || !t.ran || (p.log_y && !(v > 0))) continue;
        const double x = px(static_cast<double>(r.bytes)), y = py(v);
        pts += (pts.empty() ? "" : " ") + n2(x) + "," + n2(y);
        if (placement == 0)
          marks += "<circle cx=\"" + n2(x) + "\" cy=\"" + n2(y) + "\" r=\"2.5\" fill=\"" + color +
                   "\"/>\n";
      }
      if (pts.empty()) continue;
      svg += "<polyline class=\"series\" data-series=\"" + esc(series[si].label) +
             "\" data-placement=\"" + (placement == 0 ? "out-of-place" : "in-place") +
             "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.8\"" +
             (placement == 1 ? " stroke-dasharray=\"5,4\"" : "") + " points=\"" + pts + "\"/>\n" +
             marks;
    }
  }
  return svg + "</g>\n";
}

// The legend: one colour per series, then the two line styles.
std::string render_legend(const std::vector<PlotSeries>& series) {
  const double lx = kWidth - kRight + 20;
  double ly = kTop + 10;
  std::string svg = "<g class=\"legend\">\n";
  for (size_t si = 0; si < series.size(); ++si) {
    const char* color = kColors[si % (sizeof kColors / sizeof kColors[0])];
    svg += line(lx, ly, lx + 24, ly,
                (std::string("stroke=\"") + color + "\" stroke-width=\"3\"").c_str());
    svg += text(lx + 30, ly + 4, series[si].label, "start", 12);
    ly += 20;
  }
  svg += line(lx, ly + 6, lx + 24, ly + 6, "stroke=\"black\" stroke-width=\"1.8\"");
  svg += text(lx + 30, ly + 10, "out-of-place", "start", 11);
  svg += line(lx, ly + 26, lx + 24, ly + 26,
              "stroke=\"black\" stroke-width=\"1.8\" stroke-dasharray=\"5,4\"");
  svg += text(lx + 30, ly + 30, "in-place", "start", 11);
  return svg + "</g>\n";
}

}  // namespace

std::string render_svg(const std::string& title, const std::vector<PlotSeries>& series) {
  const Extent e = measure(series);
  const std::vector<double> xt = log_ticks(e.xmin, e.xmax, 2);
  const double lx0 = std::log2(xt.front()), lx1 = std::log2(xt.back());
  auto px = [&](double b) { return kLeft + (std::log2(b) - lx0) / (lx1 - lx0) * plot_w(); };
  const Panel panels[2] = {
      {kTop, "Bus bandwidth", "busbw (GB/s)", false, linear_ticks(e.bwmax * 1.05, 6)},
      {kTop + kPanelHeight + kGap, "Time per iteration", "time (us)", true,
       log_ticks(e.tmin, e.tmax, 10)}};
  const double height = kTop + 2 * kPanelHeight + kGap + 60;
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + n2(kWidth) + "\" height=\"" +
         n2(height) + "\" viewBox=\"0 0 " + n2(kWidth) + " " + n2(height) + "\">\n";
  svg += "<rect x=\"0\" y=\"0\" width=\"" + n2(kWidth) + "\" height=\"" + n2(height) +
         "\" fill=\"white\"/>\n";
  svg += text(kWidth / 2, 24, title, "middle", 15, " font-weight=\"bold\"");
  for (int pi = 0; pi < 2; ++pi) svg += render_panel(panels[pi], pi, xt, px, series);
  svg += render_legend(series);
  return svg + "</svg>\n";
}

}  // namespace nccom::nccomtest
