// --plot's SVG: well-formed XML (parsed back with a small checker), one
// series per operation in both panels, log-scale ticks, legend, escaping.
#include "plot_svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace nccom::nccomtest {
namespace {

// Checks XML well-formedness enough for our output: one root element,
// balanced and properly nested tags, quoted attributes, known entities,
// no stray '<' or '&'. Collects element names in document order.
bool well_formed(const std::string& x, std::vector<std::string>* elements, std::string* why) {
  std::vector<std::string> stack;
  size_t i = 0;
  int roots = 0;
  auto fail = [&](const std::string& w) {
    *why = w + " at offset " + std::to_string(i);
    return false;
  };
  auto check_text = [&](const std::string& t) {
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k] == '&') {
        const size_t semi = t.find(';', k);
        if (semi == std::string::npos) return false;
        const std::string ent = t.substr(k, semi - k + 1);
        if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
          return false;
      }
    }
    return true;
  };
  while (i < x.size()) {
    const size_t lt = x.find('<', i);
    const std::string text = x.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    if (!check_text(text)) return fail("bad entity in text");
    if (lt == std::string::npos) break;
    if (stack.empty() && text.find_first_not_of(" \t\r\n") != std::string::npos)
      return fail("text outside the root");
    i = lt;
    if (x.compare(i, 5, "<?xml") == 0) {
      const size_t end = x.find("?>", i);
      if (end == std::string::npos || i != 0) return fail("bad XML declaration");
      i = end + 2;
      continue;
    }
    const size_t gt = x.find('>', i);
    if (gt == std::string::npos) return fail("unclosed tag");
    std::string tag = x.substr(i + 1, gt - i - 1);
    i = gt + 1;
    if (!tag.empty() && tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1))
        return fail("mismatched </" + tag.substr(1) + ">");
      stack.pop_back();
      continue;
    }
    const bool self_closing = !tag.empty() && tag.back() == '/';
    if (self_closing) tag.pop_back();
    const size_t name_end = tag.find_first_of(" \t\n");
    const std::string name = tag.substr(0, name_end);
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0])))
      return fail("bad element name");
    // Attributes: name="value" pairs.
    size_t k = name_end == std::string::npos ? tag.size() : name_end;
    while (k < tag.size()) {
      k = tag.find_first_not_of(" \t\n", k);
      if (k == std::string::npos) break;
      const size_t eq = tag.find('=', k);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"')
        return fail("unquoted attribute");
      const size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos) return fail("unterminated attribute");
      const std::string value = tag.substr(eq + 2, close - eq - 2);
      if (value.find('<') != std::string::npos || !check_text(value))
        return fail("bad attribute value");
      k = close + 1;
    }
    if (stack.empty() && ++roots > 1) return fail("second root element");
    elements->push_back(name);
    if (!self_closing) stack.push_back(name);
  }
  if (!stack.empty()) return fail("unclosed <" + stack.back() + ">");
  if (roots != 1) return fail("no root element");
  return true;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::vector<PlotSeries> two_series() {
  std::vector<PlotSeries> out;
  for (const char* label : {"allr", "allg"}) {
    PlotSeries s{label, {}};
    for (uint64_t b = 8; b <= (64u << 20); b *= 2) {
      Row r;
      r.bytes = b;
      r.count = b / 4;
      const double t = 10 + static_cast<double>(b) / 1000;
      r.out_of_place = make_timing(Op::AllReduce, 4, b, t, 0);
      r.in_place = make_timing(Op::AllReduce, 4, b, t * 1.1, 0);
      s.rows.push_back(r);
    }
    out.push_back(s);
  }
  return out;
}

TEST(NccomTestSvg, LogTicks) {
  const auto t = log_ticks(8, 64.0 * 1024 * 1024, 2);
  ASSERT_EQ(t.size(), 24u);
  EXPECT_EQ(t.front(), 8);
  EXPECT_EQ(t.back(), 64.0 * 1024 * 1024);
  EXPECT_EQ(log_ticks(3, 900, 10), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(log_ticks(10, 10, 10), (std::vector<double>{10, 100}));  // one decade at least
  EXPECT_TRUE(log_ticks(0, 10, 10).empty());
  EXPECT_TRUE(log_ticks(10, 1, 10).empty());
}

TEST(NccomTestSvg, LinearTicks) {
  EXPECT_EQ(linear_ticks(9.5, 6), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(linear_ticks(0, 6), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  const auto t = linear_ticks(123, 5);  // raw step 24.6 -> 50
  EXPECT_EQ(t, (std::vector<double>{0, 50, 100, 150}));
}

TEST(NccomTestSvg, SizeLabels) {
  EXPECT_EQ(size_label(8), "8 B");
  EXPECT_EQ(size_label(1023), "1023 B");
  EXPECT_EQ(size_label(1024), "1 KiB");
  EXPECT_EQ(size_label(1536), "1.5 KiB");
  EXPECT_EQ(size_label(64.0 * 1024 * 1024), "64 MiB");
  EXPECT_EQ(size_label(4.0 * 1024 * 1024 * 1024), "4 GiB");
}

TEST(NccomTestSvg, WellFormedWithEverySeriesInBothPanels) {
  const std::string svg = render_svg("nccom-test: 4 ranks", two_series());
  std::vector<std::string> elements;
  std::string why;
  ASSERT_TRUE(well_formed(svg, &elements, &why)) << why;
  ASSERT_FALSE(elements.empty());
  EXPECT_EQ(elements.front(), "svg");
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  // Two panels × (out-of-place + in-place) per series.
  EXPECT_EQ(count(svg, "data-series=\"allr\""), 4u);
  EXPECT_EQ(count(svg, "data-series=\"allg\""), 4u);
  EXPECT_EQ(count(svg, "stroke-dasharray"), 4u + 1u);  // in-place lines + the legend's sample
  EXPECT_EQ(count(svg, "<circle"), 2u * 2u * 24u);     // out-of-place points, both panels
  // Log x ticks labelled in binary units; log y decades on the time panel.
  EXPECT_NE(svg.find(">16 B</text>"), std::string::npos);  // 24 ticks: every 2nd from the top
  EXPECT_EQ(svg.find(">8 B</text>"), std::string::npos);
  EXPECT_NE(svg.find(">64 MiB</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1 KiB</text>"), std::string::npos);
  EXPECT_NE(svg.find(">10</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1e+05</text>"), std::string::npos);
  EXPECT_NE(svg.find("Time per iteration (log scale)"), std::string::npos);
  EXPECT_NE(svg.find("message size (log scale)"), std::string::npos);
  EXPECT_NE(svg.find("busbw (GB/s)"), std::string::npos);
  EXPECT_NE(svg.find("time (us)"), std::string::npos);
  // The legend names each series once more.
  EXPECT_NE(svg.find(">allr</text>"), std::string::npos);
  EXPECT_NE(svg.find(">allg</text>"), std::string::npos);
  EXPECT_NE(svg.find(">out-of-place</text>"), std::string::npos);
  EXPECT_NE(svg.find(">in-place</text>"), std::string::npos);
  // Nothing outside the file: no scripts, links or external references.
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
}

TEST(NccomTestSvg, PointsRiseWithSizeOnALogAxis) {
  // Equal steps in log2(size) are equal steps in x.
  const std::string svg = render_svg("t", two_series());
  const size_t at = svg.find("points=\"");
  ASSERT_NE(at, std::string::npos);
  const std::string pts = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  std::vector<double> xs;
  for (size_t p = 0; p < pts.size();) {
    xs.push_back(std::stod(pts.substr(p)));
    const size_t sp = pts.find(' ', p);
    if (sp == std::string::npos) break;
    p = sp + 1;
  }
  ASSERT_EQ(xs.size(), 24u);
  for (size_t k = 2; k < xs.size(); ++k) EXPECT_NEAR(xs[k] - xs[k - 1], xs[1] - xs[0], 0.11);
}

TEST(NccomTestSvg, EscapesLabelsAndSurvivesEmptyOrZeroSeries) {
  std::vector<PlotSeries> s = {{"a<b&\"c\"", {}}, {"zero", {Row{}}}};
  const std::string svg = render_svg("title & <more>", s);
  std::vector<std::string> elements;
  std::string why;
  ASSERT_TRUE(well_formed(svg, &elements, &why)) << why;
  EXPECT_NE(svg.find("a&lt;b&amp;&quot;c&quot;"), std::string::npos);
  EXPECT_NE(svg.find("title &amp; &lt;more&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(NccomTestSvg, CheckerRejectsBrokenXml) {
  std::vector<std::string> e;
  std::string why;
  for (const char* bad :
       {"<svg><g></svg>", "<svg a=b/>", "<svg>&bogus;</svg>", "<svg/><svg/>", "<svg>", "x<svg/>"}) {
    e.clear();
    EXPECT_FALSE(well_formed(bad, &e, &why)) << bad;
  }
  EXPECT_TRUE(well_formed("<?xml version=\"1.0\"?>\n<svg a=\"1\"><g/>&amp;</svg>\n", &e, &why))
      << why;
}

}  // namespace
}  // namespace nccom::nccomtest
