// nccom-info, run as an operator would: a child process per case.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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

namespace {

// The runtime's variables: every NEURON_RT_ variable the runtime's sources
// read is listed, a set one with its value.
TEST(EmuNccomInfo, ListsEveryVariableTheRuntimeReads) {
  const auto r = run_child(NCCOM_INFO, {}, {{"NEURON_RT_EMU_SPIN_US", "5"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\nreference runtime variables"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  NEURON_RT_EMU_SPIN_US                5 (set; default 20)\n"),
            std::string::npos)
      << r.out;
  const std::regex read(R"re("(NEURON_RT_[A-Z0-9_]+)")re");
  int names = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(NCCOM_SOURCE_DIR) + "/emu")) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::sregex_iterator m(text.begin(), text.end(), read), end; m != end; ++m) {
      ++names;
      EXPECT_NE(r.out.find("  " + (*m)[1].str() + " "), std::string::npos)
          << (*m)[1] << " (read in " << entry.path() << ") is not listed by nccom-info";
    }
  }
  EXPECT_GE(names, 16);
}

}  // namespace
