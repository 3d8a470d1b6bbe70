// nccom_bench_chart, run as the benchmark scripts run it: one SVG per data
// file, every series in the legend and every point drawn in both panels; a
// malformed line is refused naming the file and line, and nothing is written.
#include "build_paths.h"
#include "child_process.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

const std::string kChart = NCCOM_BENCH_CHART;

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(BenchChart, EverySeriesAndPointIsDrawn) {
  nccom_test::TempDir dir;
  // Rows out of order and series interleaved, as a report may write them.
  const std::string data = write_file(dir.path() + "/t.csv",
                                      "# a comment\n"
                                      "nccom,1048576,2.5,420\n"
                                      "mpi-tcp,8,0.001,30\n"
                                      "nccom,8,0.002,25\n"
                                      "mpi-tcp,1048576,1.2,870\n"
                                      "gloo & co,4096,0.3,40\n");
  const std::string svg = dir.path() + "/t.svg";
  const auto r =
      nccom_test::run_child(kChart, {"--title", "all-reduce <4 ranks>", "--out", svg, data}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_file(svg);
  EXPECT_EQ(text.rfind("<?xml", 0), 0u) << text.substr(0, 200);
  EXPECT_NE(text.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(text.find("all-reduce &lt;4 ranks&gt;"), std::string::npos);
  for (const char* label : {">nccom<", ">mpi-tcp<", ">gloo &amp; co<"})
    EXPECT_NE(text.find(label), std::string::npos) << label;
  EXPECT_EQ(count(text, "<circle"), 2u * 5u) << "five points, each in the busbw and the time panel";
  EXPECT_NE(text.find("</svg>"), std::string::npos);
}

TEST(BenchChart, MalformedDataIsRefusedNamingTheLineAndWritesNothing) {
  nccom_test::TempDir dir;
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c :
       {Case{"nccom,8,0.1,3\nnccom,8,0.1\n", ":2: expected series,bytes,busbw_gbps,time_us"},
        Case{"nccom,8,fast,3\n", ":1: bytes, busbw and time must be numbers >= 0"},
        Case{"nccom,-8,0.1,3\n", ":1: bytes, busbw and time must be numbers >= 0"},
        Case{",8,0.1,3\n", ":1: expected series"}, Case{"# only a comment\n", ": no data lines"}}) {
    SCOPED_TRACE(c.body);
    const std::string data = write_file(dir.path() + "/bad.csv", c.body);
    const std::string svg = dir.path() + "/bad.svg";
    const auto r = nccom_test::run_child(kChart, {"--title", "t", "--out", svg, data}, {});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(data + c.says), std::string::npos) << r.err;
    EXPECT_FALSE(exists(svg));
  }
  const auto missing =
      nccom_test::run_child(kChart, {"--out", dir.path() + "/x.svg", dir.path() + "/none.csv"}, {});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("cannot open " + dir.path() + "/none.csv"), std::string::npos)
      << missing.err;
  const auto usage = nccom_test::run_child(kChart, {"--title", "no output named"}, {});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("usage: nccom_bench_chart"), std::string::npos) << usage.err;
}

}  // namespace
