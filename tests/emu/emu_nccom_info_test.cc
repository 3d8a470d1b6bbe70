// nccom-info, run as an operator would: a child process per case.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

using nccom_test::run_child;

namespace {

TEST(EmuNccomInfo, ReportsLibraryEntryPointsNetAndPlatform) {
  const auto r = run_child(NCCOM_INFO, {}, {});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("  file          " + std::string(NCCOM_LIBRARY_DIR) + "/libnccom.so -> "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  version       2.31.24.0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  compat id     89 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nlibnccom-net.so\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  instance      arch emu, family 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  devices       2\n"), std::string::npos) << r.out;

  // One row per slot, in order, each resolving into the libnccom just loaded.
  const std::regex row(R"(^ +(\d+)  (neuron\w+) +0x[0-9a-f]+ +(\S.*)$)");
  std::istringstream lines(r.out);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    EXPECT_EQ(std::stoi(m[1]), rows) << line;
    EXPECT_EQ(m[3].str(), std::string(NCCOM_LIBRARY_DIR) + "/libnccom.so") << line;
    ++rows;
  }
  EXPECT_EQ(rows, 37) << r.out;
}

TEST(EmuNccomInfo, ExitsOneWithTheLoadersExactMessage) {
  const auto r = run_child(NCCOM_INFO, {}, {{"LD_LIBRARY_PATH", COMPAT88_DIR}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(
      r.err,
      "Incompatible version of aws-neuronx-collectives.  Compatibility id: 88, expected: 89\n");
  EXPECT_NE(r.out.find("  compat id     88 "), std::string::npos) << r.out;
}

TEST(EmuNccomInfo, HelpAndBadArguments) {
  const auto help = run_child(NCCOM_INFO, {"--help"}, {});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.rfind("usage: nccom-info", 0), 0u) << help.out;
  const auto bad = run_child(NCCOM_INFO, {"--bogus"}, {});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown argument '--bogus'"), std::string::npos) << bad.err;
}

}  // namespace
