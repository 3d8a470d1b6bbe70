// scripts/skips.py on made-up ctest results: skips grouped by what the
// machine lacks pass; a skip for anything else, for a reason the helper does
// not know, or a disabled test fails the run, naming the test.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace {

using nccom_test::ChildResult;
using nccom_test::TempDir;

struct Case {
  std::string name;
  std::string status;  // "run", "notrun" (skipped) or "disabled"
  std::string out;
};

class ScriptsSkipsReport : public ::testing::Test {
 protected:
  ChildResult report(const std::vector<Case>& cases) {
    const std::string junit = dir_.path() + "/junit.xml";
    std::ofstream xml(junit);
    xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"x\" tests=\""
        << cases.size() << "\">\n";
    for (const Case& c : cases) {
      xml << "<testcase name=\"" << c.name << "\" classname=\"" << c.name << "\" status=\""
          << c.status << "\">";
      if (c.status == "notrun") xml << "<skipped message=\"SKIP_REGULAR_EXPRESSION_MATCHED\"/>";
      xml << "<system-out>" << c.out << "</system-out></testcase>\n";
    }
    xml << "</testsuite>\n";
    xml.close();
    return nccom_test::run_child("/usr/bin/env",
                                 {"python3", nccom_test::in_source("scripts/skips.py"), junit,
                                  nccom_test::in_source("tests/harness/machine.cc")},
                                 {});
  }
  static std::string output(const ChildResult& r) {
    return "stdout:\n" + r.out + "\nstderr:\n" + r.err;
  }

  TempDir dir_;
};

const char* kSkipped = "x.cc:3: Skipped\n";

TEST_F(ScriptsSkipsReport, NoSkipSaysSo) {
  const auto r = report({{"A.b", "run", "ok\n"}});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("skips: none"), std::string::npos) << output(r);
}

TEST_F(ScriptsSkipsReport, MachineSkipsAreGroupedByReason) {
  const auto r = report(
      {{"A.root1", "notrun", std::string(kSkipped) + "machine lacks root: the test needs root\n"},
       {"A.v6", "notrun",
        std::string(kSkipped) + "machine lacks ipv6-loopback: bind: EADDRNOTAVAIL\n"},
       {"A.root2", "notrun", std::string(kSkipped) + "machine lacks root: euid 1000\n"},
       {"A.ran", "run", "ok\n"}});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("3 test(s) skipped"), std::string::npos) << output(r);
  // One line per distinct detail, then the tests it holds for.
  EXPECT_NE(r.out.find("  root (2):\n    the test needs root\n      A.root1\n    euid 1000\n      "
                       "A.root2\n"),
            std::string::npos)
      << output(r);
  EXPECT_NE(r.out.find("  ipv6-loopback (1):\n    bind: EADDRNOTAVAIL\n      A.v6\n"),
            std::string::npos)
      << output(r);
}

TEST_F(ScriptsSkipsReport, TestsSkippedForTheSameCauseShareALine) {
  const std::string why = std::string(kSkipped) + "machine lacks program: dot is not on PATH\n";
  const auto r = report({{"Topo.Svg  # GetParam() = &quot;a&quot;", "notrun", why},
                         {"Topo.Png  # GetParam() = &quot;b&quot;", "notrun", why}});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("  program (2):\n    dot is not on PATH\n      Topo.Svg, Topo.Png\n"),
            std::string::npos)
      << output(r);
}

TEST_F(ScriptsSkipsReport, ASkipWithoutAMachineReasonFailsTheRun) {
  const auto r =
      report({{"A.ok", "notrun", std::string(kSkipped) + "machine lacks root: euid 1000\n"},
              {"Net.Plugin", "notrun",
               std::string(kSkipped) + "socket net plugin unavailable: no devices\n"}});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_NE(r.out.find("Net.Plugin: skipped without a machine reason"), std::string::npos)
      << output(r);
  EXPECT_NE(r.out.find("socket net plugin unavailable: no devices"), std::string::npos)
      << output(r);
}

TEST_F(ScriptsSkipsReport, AReasonTheHelperDoesNotKnowFailsTheRun) {
  const auto r =
      report({{"A.b", "notrun", std::string(kSkipped) + "machine lacks patience: too slow\n"}});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_NE(r.out.find("A.b: skipped for 'patience', not one of the machine reasons"),
            std::string::npos)
      << output(r);
}

TEST_F(ScriptsSkipsReport, ADisabledTestFailsTheRun) {
  const auto r = report({{"A.DISABLED_b", "disabled", ""}});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_NE(r.out.find("A.DISABLED_b: disabled"), std::string::npos) << output(r);
}

}  // namespace
