// The figures of the verification loop live in one place: docs/testing.md,
// written by scripts/testing-times.py from real runs. The other pages that a
// newcomer reads point there instead of stating durations of their own, the
// suite size it states is this build's within a tenth, and the reasons a test
// may skip for are the ones tests/harness/machine.cc knows.
#include "build_paths.h"
#include "child_process.h"
#include "machine.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string read(const std::string& relative) {
  std::ifstream in(nccom_test::in_source(relative.c_str()));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ScriptsDocsFigures, OnlyTheTestingPageStatesHowLongTheLoopTakes) {
  // A duration on a line about building, testing, linting or CI.
  const std::regex duration(R"((\d[\d,.–-]*\s*(minutes?|min|hours?)\b))");
  const std::regex about(R"(\b(build|builds|suite|tests|lint|CI|test\.sh|quickstart|fresh)\b)");
  for (const char* page : {"README.md", "docs/user-guide.md", "docs/code-style.md",
                           "docs/decisions.md", "scripts/fresh-machine.sh"}) {
    std::istringstream lines(read(page));
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
      ++n;
      if (std::regex_search(line, duration) && std::regex_search(line, about))
        ADD_FAILURE() << page << ":" << n << " states a duration of the loop; docs/testing.md "
                      << "holds those (scripts/testing-times.py): " << line;
    }
  }
}

TEST(ScriptsDocsFigures, TheStatedSuiteSizeIsThisBuilds) {
  const std::string doc = read("docs/testing.md");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(doc, m, std::regex(R"(the default suite holds (\d+) tests)")))
      << "docs/testing.md states no suite size";
  const long stated = std::stol(m[1]);
  const auto r = nccom_test::run_child(CMAKE_CTEST_COMMAND,
                                       {"--test-dir", NCCOM_BUILD_DIR, "-N", "-LE", "long"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch total;
  ASSERT_TRUE(std::regex_search(r.out, total, std::regex(R"(Total Tests: (\d+))"))) << r.out;
  const long actual = std::stol(total[1]);
  EXPECT_LE(std::abs(actual - stated) * 10, actual)
      << "docs/testing.md says the default suite holds " << stated << " tests; it holds " << actual
      << ": run scripts/testing-times.py after a CI run";
}

TEST(ScriptsDocsFigures, TheSkipReasonsAreTheHelpers) {
  const std::string doc = read("docs/testing.md");
  std::set<std::string> documented;
  const std::regex row(R"(\n\| `([a-z0-9-]+)` \|)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator();
       ++it)
    documented.insert((*it)[1]);
  std::size_t count = 0;
  const std::string_view* names = nccom_test::machine::all_names(&count);
  std::set<std::string> known;
  for (std::size_t i = 0; i < count; ++i) known.insert(std::string(names[i]));
  EXPECT_EQ(documented, known) << "docs/testing.md's table of skip reasons and "
                                  "tests/harness/machine.cc's kNames differ";
}

}  // namespace
