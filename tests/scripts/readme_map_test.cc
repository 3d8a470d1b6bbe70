// The READMEs are maps a reader trusts. Every folder of the tree that holds
// sources and a README.md: its file table names every source of the folder,
// and every file it names exists. The module READMEs of host/: their
// "Includes from host/:" sentence names exactly the other host/ modules
// their sources include, and host/README.md's module map gives every module
// its floor and its includes. A file added, renamed or removed, or an
// include of another module, fails here until the README says so. Every
// README but the top-level one fits on a screen (60 lines); longer method
// and results pages sit beside it and are linked.
#include "build_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

fs::path host_dir() { return nccom_test::in_source("host"); }
fs::path source_dir() { return nccom_test::in_source(""); }

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

// Every folder (outside build trees and .git) that holds a README.md and
// sources of its own.
std::vector<fs::path> mapped_folders() {
  std::vector<fs::path> out;
  const fs::path root = source_dir();
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (!it->is_directory()) continue;
    const std::string name = it->path().filename().string();
    if (name.rfind("build", 0) == 0 || name.rfind('.', 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    if (!fs::is_regular_file(it->path() / "README.md")) continue;
    for (const auto& f : fs::directory_iterator(it->path())) {
      if (f.is_regular_file() && is_source(f.path())) {
        out.push_back(it->path());
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> files_of(const fs::path& folder) {
  std::set<std::string> out;
  for (const auto& f : fs::directory_iterator(folder)) {
    if (f.is_regular_file() && f.path().filename() != "README.md")
      out.insert(f.path().filename().string());
  }
  return out;
}

// A name a file table gives that is meant as a file (a knob key such as
// "plugins.hello.greeting" is not).
bool looks_like_file(const std::string& name) {
  static const std::set<std::string> kinds = {".h",  ".cc",  ".c",    ".sh",  ".map",  ".txt",
                                              ".py", ".awk", ".toml", ".xml", ".json", ".in"};
  return kinds.count(fs::path(name).extension().string()) != 0;
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

TEST(ScriptsReadmeMap, FileTablesNameEverySourceAndOnlyFilesThatExist) {
  const std::vector<fs::path> folders = mapped_folders();
  ASSERT_GE(folders.size(), 30u) << "the tree was not found at " << source_dir();
  for (const fs::path& folder : folders) {
    const std::string where = fs::relative(folder, source_dir()).string() + "/README.md";
    SCOPED_TRACE(where);
    const std::set<std::string> present = files_of(folder);
    const std::set<std::string> named = files_named(read(folder / "README.md"), present);
    std::set<std::string> missing, extra;
    for (const std::string& f : present) {
      if (is_source(f) && named.count(f) == 0) missing.insert(f);
    }
    for (const std::string& n : named) {
      if (looks_like_file(n) && !fs::is_regular_file(folder / n)) extra.insert(n);
    }
    EXPECT_TRUE(missing.empty()) << "sources its file table does not name: " << joined(missing);
    EXPECT_TRUE(extra.empty()) << "names in its file table that the folder does not hold: "
                               << joined(extra);
  }
}

// Every README.md of the tree (outside build trees and dot folders) but the
// top-level one.
std::vector<fs::path> folder_readmes() {
  std::vector<fs::path> out;
  const fs::path root = source_dir();
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory()) {
      if (name.rfind("build", 0) == 0 || name.rfind('.', 0) == 0) it.disable_recursion_pending();
      continue;
    }
    if (name == "README.md" && fs::relative(it->path(), root) != "README.md")
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t line_count(const std::string& text) {
  std::size_t n = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

TEST(ScriptsReadmeMap, EveryFolderReadmeFitsOnAScreen) {
  constexpr std::size_t kMaxLines = 60;
  const std::vector<fs::path> readmes = folder_readmes();
  ASSERT_GE(readmes.size(), 30u) << "the tree was not found at " << source_dir();
  std::string over;
  for (const fs::path& readme : readmes) {
    const std::size_t n = line_count(read(readme));
    if (n > kMaxLines)
      over += "\n  " + fs::relative(readme, source_dir()).string() + ": " + std::to_string(n);
  }
  EXPECT_TRUE(over.empty()) << "READMEs longer than " << kMaxLines
                            << " lines (docs/code-style.md; move method and results to a page "
                               "beside it and link it):"
                            << over;
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

// One row of host/README.md's module map.
struct MapRow {
  int floor = -1;
  std::set<std::string> includes;
};

// The rows of the table whose header's first cell is "module": the
// backticked module, its floor, the backticked modules it includes.
std::map<std::string, MapRow> module_map(const std::string& readme) {
  std::map<std::string, MapRow> out;
  std::istringstream lines(readme);
  bool in_map = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| module |", 0) == 0) {
      in_map = true;
      continue;
    }
    if (line.rfind("|", 0) != 0) {
      in_map = false;
      continue;
    }
    if (!in_map || line.rfind("|---", 0) == 0) continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell);
    if (cells.size() < 3 || ticked(cells[0]).size() != 1) continue;
    MapRow r;
    r.floor = std::atoi(cells[1].c_str());
    for (const std::string& m : ticked(cells[2])) r.includes.insert(m);
    out[ticked(cells[0])[0]] = r;
  }
  return out;
}

TEST(ScriptsReadmeMap, TheHostModuleMapGivesEveryModuleItsFloorAndIncludes) {
  const std::vector<std::string> all = modules();
  const std::map<std::string, MapRow> map = module_map(read(host_dir() / "README.md"));
  std::set<std::string> listed;
  for (const auto& [m, row] : map) listed.insert(m);
  EXPECT_EQ(joined(listed), joined(std::set<std::string>(all.begin(), all.end())))
      << "host/README.md's map lists the first; host/ holds the second";
  // Floors from the sources: one above the highest module included. A cycle
  // would never settle; 2 * modules rounds is more than a chain can need.
  std::map<std::string, std::set<std::string>> used;
  for (const std::string& m : all) used[m] = includes_used(m, all);
  std::map<std::string, int> floor;
  for (std::size_t round = 0; round < 2 * all.size(); ++round) {
    for (const std::string& m : all) {
      int f = 0;
      for (const std::string& o : used[m]) f = std::max(f, floor[o] + 1);
      floor[m] = f;
    }
  }
  for (const std::string& m : all) {
    SCOPED_TRACE("host/" + m);
    const auto row = map.find(m);
    if (row == map.end()) continue;
    EXPECT_EQ(joined(row->second.includes), joined(used[m]))
        << "the map's includes are the first; the sources include the second";
    EXPECT_EQ(row->second.floor, floor[m]) << "the map's floor is wrong";
    for (const std::string& o : used[m])
      EXPECT_LT(floor[o], floor[m]) << m << " includes " << o << ", not on a lower floor";
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
