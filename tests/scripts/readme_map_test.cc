// The module READMEs of host/ are maps a reader trusts: each file table names
// exactly the sources of its folder, and the "Includes from host/:" sentence
// names exactly the other host/ modules its sources include. A file added,
// renamed or removed, or an include of another module, fails here until the
// README says so.
#include "build_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

fs::path host_dir() { return nccom_test::in_source("host"); }

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_source(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".h" || ext == ".cc" || ext == ".c";
}

// The modules: host/'s folders that hold sources.
std::vector<std::string> modules() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(host_dir())) {
    if (!e.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(e.path())) {
      if (is_source(f.path())) {
        out.push_back(e.path().filename().string());
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> sources_of(const std::string& module) {
  std::set<std::string> out;
  for (const auto& f : fs::directory_iterator(host_dir() / module)) {
    if (f.is_regular_file() && is_source(f.path())) out.insert(f.path().filename().string());
  }
  return out;
}

// The backticked words of `text`.
std::vector<std::string> ticked(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex word("`([^`]+)`");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

// The files a README's tables name: the backticked file names in each row's
// first cell, with "name.{h,cc}" and "name.*" (every source of that stem)
// expanded against the folder.
std::set<std::string> files_named(const std::string& readme, const std::set<std::string>& present) {
  std::set<std::string> out;
  std::istringstream lines(readme);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| ", 0) != 0) continue;
    const std::string first = line.substr(2, line.find(" |", 1) - 2);
    for (const std::string& t : ticked(first)) {
      const size_t brace = t.find(".{");
      if (brace != std::string::npos && t.back() == '}') {
        std::stringstream exts(t.substr(brace + 2, t.size() - brace - 3));
        for (std::string ext; std::getline(exts, ext, ',');)
          out.insert(t.substr(0, brace + 1) + ext);
      } else if (t.size() > 2 && t.compare(t.size() - 2, 2, ".*") == 0) {
        const std::string stem = t.substr(0, t.size() - 1);
        for (const std::string& f : present) {
          if (f.rfind(stem, 0) == 0 && f.find('.', stem.size()) == std::string::npos) out.insert(f);
        }
      } else if (t.find('.') != std::string::npos && t.find(' ') == std::string::npos) {
        out.insert(t);
      }
    }
  }
  return out;
}

// The modules the README's "Includes from host/:" sentence names: its
// backticked words without a dot or a slash, outside parentheses (which say
// what of a module is used), up to the sentence's end (";" or ". " outside
// backticks and parentheses).
std::set<std::string> includes_named(const std::string& readme, bool* found) {
  std::set<std::string> out;
  const std::string marker = "Includes from host/:";
  const size_t start = readme.find(marker);
  *found = start != std::string::npos;
  if (!*found) return out;
  std::string sentence;
  bool in_ticks = false;
  int depth = 0;
  for (size_t i = start + marker.size(); i < readme.size(); ++i) {
    const char c = readme[i];
    if (c == '`') in_ticks = !in_ticks;
    if (!in_ticks && c == '(') ++depth;
    const bool outside = !in_ticks && depth == 0;
    if (outside && (c == ';' || (c == '.' && (i + 1 == readme.size() || readme[i + 1] == ' ' ||
                                              readme[i + 1] == '\n')))) {
      break;
    }
    if (depth == 0) sentence += c;
    if (!in_ticks && c == ')' && depth > 0) --depth;
  }
  for (const std::string& t : ticked(sentence)) {
    if (t.find('.') == std::string::npos && t.find('/') == std::string::npos) out.insert(t);
  }
  return out;
}

// The other host/ modules the folder's sources include ("X/..." with X a
// module), as the compiler sees them (host/ is on the include path).
std::set<std::string> includes_used(const std::string& module,
                                    const std::vector<std::string>& all) {
  std::set<std::string> out;
  static const std::regex include("#include \"([a-z_]+)/");
  for (const auto& f : fs::directory_iterator(host_dir() / module)) {
    if (!f.is_regular_file() || !is_source(f.path())) continue;
    const std::string text = read(f.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), include);
         it != std::sregex_iterator(); ++it) {
      const std::string other = (*it)[1];
      if (other != module && std::find(all.begin(), all.end(), other) != all.end())
        out.insert(other);
    }
  }
  return out;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? "(none)" : out;
}

TEST(ScriptsReadmeMap, EveryHostModuleHasAReadme) {
  const std::vector<std::string> all = modules();
  ASSERT_GE(all.size(), 10u) << "host/ was not found at " << host_dir();
  for (const std::string& m : all) {
    EXPECT_TRUE(fs::is_regular_file(host_dir() / m / "README.md"))
        << "host/" << m << " has no README.md";
  }
}

TEST(ScriptsReadmeMap, FileTablesNameExactlyTheFolderSources) {
  for (const std::string& m : modules()) {
    SCOPED_TRACE("host/" + m + "/README.md");
    const std::set<std::string> present = sources_of(m);
    const std::set<std::string> named = files_named(read(host_dir() / m / "README.md"), present);
    std::set<std::string> missing, extra;
    std::set_difference(present.begin(), present.end(), named.begin(), named.end(),
                        std::inserter(missing, missing.end()));
    std::set_difference(named.begin(), named.end(), present.begin(), present.end(),
                        std::inserter(extra, extra.end()));
    EXPECT_TRUE(missing.empty()) << "sources its file table does not name: " << joined(missing);
    EXPECT_TRUE(extra.empty()) << "names in its file table that the folder does not hold: "
                               << joined(extra);
  }
}

TEST(ScriptsReadmeMap, IncludesFromHostNameExactlyTheModulesIncluded) {
  const std::vector<std::string> all = modules();
  for (const std::string& m : all) {
    SCOPED_TRACE("host/" + m + "/README.md");
    bool found = false;
    const std::set<std::string> named = includes_named(read(host_dir() / m / "README.md"), &found);
    const std::set<std::string> used = includes_used(m, all);
    if (!found) {
      EXPECT_TRUE(used.empty()) << "no \"Includes from host/:\" sentence, but its sources include "
                                << joined(used);
      continue;
    }
    EXPECT_EQ(joined(named), joined(used))
        << "\"Includes from host/:\" names the first; the sources include the second";
  }
}

// The parsers on made-up text, so that a README the parsers misread cannot
// pass by accident.
TEST(ScriptsReadmeMap, TheParsersReadTheFormsTheReadmesUse) {
  const std::set<std::string> present = {"a.h", "a.cc", "b.h", "b.cc", "bc.cc", "c.cc"};
  const std::string table =
      "| file | what |\n|---|---|\n| `a.{h,cc}` | x |\n| `b.*` | y `not.me` |\n"
      "| `c.cc`, `d.h` | z |\n";
  EXPECT_EQ(joined(files_named(table, present)), "a.cc, a.h, b.cc, b.h, c.cc, d.h");
  bool found = false;
  const std::string text =
      "Depends on: x. Includes from host/: `log`, `health` (`state.h`; `Registry`), `config/`;\n"
      "from the SDK `nccom/knob.h`. Later `proxy`.";
  EXPECT_EQ(joined(includes_named(text, &found)), "health, log");
  EXPECT_TRUE(found);
  EXPECT_EQ(
      joined(includes_named("Includes from host/: `log` and `plugin`.\nThen `core`.", &found)),
      "log, plugin");
  includes_named("Nothing here.", &found);
  EXPECT_FALSE(found);
}

}  // namespace
