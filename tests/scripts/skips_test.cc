// Skips are for machines, failures are for the product: under tests/, only
// tests/harness/machine.h may spell gtest's skip macro, inside
// NCCOM_SKIP_MACHINE_LACKS; every other test skips through that macro, after
// asking the machine itself (tests/harness/machine.h says how).
#include "build_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

// Spelled in two pieces, so that this file does not contain it.
const std::string kSkipMacro = std::string("GTEST_") + "SKIP";

TEST(ScriptsSkips, OnlyTheMachineHelperSkips) {
  const fs::path tests = nccom_test::in_source("tests");
  const fs::path allowed = tests / "harness" / "machine.h";
  ASSERT_TRUE(fs::is_regular_file(allowed)) << allowed;
  std::string found;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tests)) {
    if (!entry.is_regular_file() || entry.path() == allowed) continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (line.find(kSkipMacro) != std::string::npos)
        found += fs::relative(entry.path(), tests.parent_path()).string() + ":" +
                 std::to_string(number) + ": " + line + "\n";
    }
  }
  EXPECT_GT(files, 100) << "the walk of " << tests << " found too little";
  EXPECT_EQ(found, "") << "skip only through NCCOM_SKIP_MACHINE_LACKS (tests/harness/machine.h), "
                          "after a probe of the machine; a failure of the code under test fails:\n"
                       << found;
}

}  // namespace
