// The design decisions of docs/decisions/*.md are headings, and the tree cites
// them by title: in code and tests the file and the quoted title
// (docs/decisions/transport.md, "Selection order"), in Markdown a link to
// `decisions/X.md#anchor`. A number drifts when a decision
// is inserted, so no file cites a decision by number, and every citation by
// title names a file that exists and a heading it holds.
#include "build_paths.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
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

fs::path source_root() { return fs::path(nccom_test::source_dir()); }

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_markdown(const fs::path& p) { return p.extension() == ".md"; }

// The text files a citation may sit in.
bool is_scanned(const fs::path& p) {
  static const std::set<std::string> exts = {".md",  ".cc",   ".h",  ".c",  ".cpp", ".hpp",
                                             ".txt", ".toml", ".sh", ".py", ".awk", ".cmake"};
  return exts.count(p.extension().string()) > 0;
}

// The files of the tree that may cite a decision, relative to the root:
// README.md and every scanned file under the listed folders, minus build
// trees and hidden folders.
std::vector<fs::path> tree_files() {
  const fs::path root = source_root();
  std::vector<fs::path> out = {"README.md"};
  for (const char* top :
       {"host", "plugins", "sdk", "emu", "tools", "tests", "bench", "docs", "config", "scripts"}) {
    if (!fs::is_directory(root / top)) continue;
    auto it = fs::recursive_directory_iterator(root / top);
    for (; it != fs::recursive_directory_iterator(); ++it) {
      const std::string name = it->path().filename().string();
      if (it->is_directory() && (name.rfind("build", 0) == 0 || name.rfind('.', 0) == 0)) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && is_scanned(it->path()))
        out.push_back(fs::relative(it->path(), root));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file's lines joined into one text, each stripped of its indentation and of
// a leading comment marker, so that a citation split over two comment lines
// reads as one; `starts` gives where each line begins, for file:line.
struct Joined {
  std::string text;
  std::vector<size_t> starts;

  int line_at(size_t pos) const {
    return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), pos) - starts.begin());
  }
};

Joined join_lines(const std::string& file_text) {
  static const std::regex lead(R"(^\s*(//+|#+(?=\s)|\*(?=\s)|>)?\s*)");
  Joined j;
  std::istringstream lines(file_text);
  for (std::string line; std::getline(lines, line);) {
    if (!j.text.empty()) j.text += ' ';
    j.starts.push_back(j.text.size());
    j.text += std::regex_replace(line, lead, "", std::regex_constants::format_first_only);
  }
  return j;
}

struct Finding {
  int line;
  std::string what;
};

// Citations of a decision by number: the word "decision" or "decisions" and a
// number, and a decisions file followed by a bare number or a label such as
// S and a number.
std::vector<Finding> numbered_citations(const std::string& file_text) {
  static const std::regex by_word(R"(\b[Dd]ecisions? [0-9]+\b)");
  static const std::regex by_label(
      R"(decisions/[\w-]+\.md[`\])]*(\([^)\s]*\))?\)?,? +[A-Z]?[0-9]+\b)");
  const Joined j = join_lines(file_text);
  std::vector<Finding> out;
  for (const std::regex* re : {&by_word, &by_label}) {
    for (auto it = std::sregex_iterator(j.text.begin(), j.text.end(), *re);
         it != std::sregex_iterator(); ++it) {
      out.push_back({j.line_at(it->position()), it->str()});
    }
  }
  return out;
}

// GitHub's anchor of a heading: lower case, spaces to '-', every character
// but letters, digits, '-' and '_' dropped (the headings are ASCII but for
// symbols such as '→', which GitHub drops too).
std::string anchor_of(const std::string& title) {
  std::string out;
  for (unsigned char c : title) {
    if (c == ' ')
      out += '-';
    else if (c < 0x80 && (std::isalnum(c) || c == '-' || c == '_'))
      out += static_cast<char>(std::tolower(c));
  }
  return out;
}

// A title as code quotes it: without backticks, blanks collapsed.
std::string plain_title(const std::string& title) {
  std::string out;
  for (char c : title) {
    if (c == '`') continue;
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The titles of a decisions file's "## " and "### " headings.
std::vector<std::string> headings_of(const std::string& md) {
  std::vector<std::string> out;
  std::istringstream lines(md);
  static const std::regex heading(R"(^#{2,3} +(.*?)\s*$)");
  std::smatch m;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, m, heading)) out.push_back(m[1]);
  }
  return out;
}

// Whether `cited` (a quoted title) names one of `headings`: the whole title,
// or the part before its first ':' ("Doubled half" for "Doubled half:
// identical copy").
bool title_matches(const std::string& cited, const std::vector<std::string>& headings) {
  const std::string want = plain_title(cited);
  for (const std::string& h : headings) {
    const std::string have = plain_title(h);
    if (have == want) return true;
    const size_t colon = have.find(':');
    if (colon != std::string::npos && have.substr(0, colon) == want) return true;
  }
  return false;
}

bool anchor_matches(const std::string& anchor, const std::vector<std::string>& headings) {
  return std::any_of(headings.begin(), headings.end(),
                     [&](const std::string& h) { return anchor_of(h) == anchor; });
}

// What a file's citations by title get wrong. `file` is relative to `root`;
// `decisions_dir` is the folder of the decision files, relative to `root`.
std::vector<Finding> broken_title_citations(const fs::path& root, const fs::path& file,
                                            const std::string& file_text) {
  static const fs::path decisions_dir = fs::path("docs") / "decisions";
  std::vector<Finding> out;
  std::map<fs::path, std::vector<std::string>> cache;
  auto headings = [&](const fs::path& rel) -> const std::vector<std::string>* {
    if (!fs::is_regular_file(root / rel)) return nullptr;
    auto it = cache.find(rel);
    if (it == cache.end()) it = cache.emplace(rel, headings_of(read(root / rel))).first;
    return &it->second;
  };
  const Joined j = join_lines(file_text);

  // docs/decisions/transport.md, "Selection order", also with the path in
  // backticks or as a Markdown link: [`docs/decisions/transport.md`](...),
  // "Selection order".
  static const std::regex quoted(R"re(docs/decisions/([\w-]+\.md)`?(\]\([^)\s]*\))?, "([^"]+)")re");
  for (auto it = std::sregex_iterator(j.text.begin(), j.text.end(), quoted);
       it != std::sregex_iterator(); ++it) {
    const fs::path rel = decisions_dir / (*it)[1].str();
    const std::vector<std::string>* h = headings(rel);
    const int line = j.line_at(it->position());
    if (h == nullptr)
      out.push_back({line, it->str() + " (no file " + rel.string() + ")"});
    else if (!title_matches((*it)[3], *h))
      out.push_back({line, it->str() + " (no such heading in " + rel.string() + ")"});
  }

  if (!is_markdown(file)) return out;
  // Markdown links with an anchor into a decisions file: any relative path
  // whose text names decisions/X.md, and, inside docs/decisions/, X.md#a and
  // #a.
  const bool in_decisions = file.parent_path() == decisions_dir;
  static const std::regex link(R"(\]\(([^)\s#]*)#([^)\s]+)\))");
  for (auto it = std::sregex_iterator(j.text.begin(), j.text.end(), link);
       it != std::sregex_iterator(); ++it) {
    const std::string target = (*it)[1];
    const bool names_decisions = target.find("decisions/") != std::string::npos;
    if (!names_decisions && !in_decisions) continue;
    const fs::path rel = target.empty() ? file : (file.parent_path() / target).lexically_normal();
    if (!names_decisions && rel.parent_path() != decisions_dir) continue;
    const std::vector<std::string>* h = headings(rel);
    const int line = j.line_at(it->position());
    if (h == nullptr)
      out.push_back({line, it->str() + " (no file " + rel.string() + ")"});
    else if (!anchor_matches((*it)[2], *h))
      out.push_back({line, it->str() + " (no heading with that anchor in " + rel.string() + ")"});
  }
  return out;
}

TEST(DecisionRefs, NoFileCitesADecisionByNumber) {
  const std::vector<fs::path> files = tree_files();
  ASSERT_GT(files.size(), 100u) << "the tree walk found almost nothing under "
                                << source_root().string();
  for (const fs::path& f : files) {
    for (const Finding& bad : numbered_citations(read(source_root() / f))) {
      ADD_FAILURE() << f.string() << ":" << bad.line << ": cites a decision by number: \""
                    << bad.what << "\"; cite it by title: docs/decisions/X.md, \"Title\" (code)"
                    << " or [Title](decisions/X.md#anchor) (Markdown)";
    }
  }
}

TEST(DecisionRefs, EveryCitationByTitleNamesAHeading) {
  int citations = 0;
  for (const fs::path& f : tree_files()) {
    const std::string text = read(source_root() / f);
    if (text.find("decisions/") == std::string::npos && text.find("](#") == std::string::npos)
      continue;
    ++citations;
    for (const Finding& bad : broken_title_citations(source_root(), f, text)) {
      ADD_FAILURE() << f.string() << ":" << bad.line << ": " << bad.what;
    }
  }
  EXPECT_GT(citations, 10) << "no file cites docs/decisions/: is the tree walk broken?";
}

// The parsers on made-up text, so that a checker that silently accepts
// everything fails here. The samples are spliced so that this file's own
// text cites nothing.
TEST(DecisionRefs, TheCheckersCatchWhatTheyLookFor) {
  const std::string by_number = std::string("// (docs/decisions/p2p.md, decision") + " 2)\n" +
                                "// and docs/decisions/topo-nccl.md," + "\n// S7.\n";
  const std::vector<Finding> numbered = numbered_citations(by_number);
  ASSERT_EQ(numbered.size(), 2u);
  EXPECT_EQ(numbered[0].line, 1);
  EXPECT_EQ(numbered[1].line, 2);
  EXPECT_TRUE(numbered_citations("// docs/decisions/p2p.md, \"What is exchanged\"\n").empty());

  const fs::path root = fs::temp_directory_path() / ("decision_refs_" + std::to_string(getpid()));
  fs::create_directories(root / "docs" / "decisions");
  std::ofstream(root / "docs" / "decisions" / "x.md")
      << "# Decisions: x\n\n## A group\n\n### The P2P policy is the host's\n\ntext\n\n"
      << "### Doubled half: identical copy\n\nsee [here](#a-group), [gone](#gone)\n";
  const std::string q = " \"";  // spliced in, so that this file cites nothing
  const std::string code = "// docs/decisions/x.md," + q + "The P2P policy is the\n" +
                           "// host's\"; docs/decisions/x.md," + q + "Doubled half\"\n" +
                           "// docs/decisions/x.md," + q + "Gone\", docs/decisions/y.md," + q +
                           "A group\"\n";
  std::vector<Finding> bad = broken_title_citations(root, "host/a.cc", code);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0].line, 3);
  EXPECT_NE(bad[0].what.find("Gone"), std::string::npos) << bad[0].what;
  EXPECT_NE(bad[1].what.find("no file"), std::string::npos) << bad[1].what;

  const std::string md =
      std::string("[P2P](../docs/decisions/x.md#the-p2p-policy-is-the-hosts),\n") +
      "[Half](../docs/decisions/x.md#doubled-half-identical-copy), " +
      "[No](../docs/decisions/x.md#no)\n[Far](decisions/x.md#a-group)\n";
  bad = broken_title_citations(root, "host/README.md", md);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0].line, 2);
  EXPECT_NE(bad[0].what.find("#no)"), std::string::npos) << bad[0].what;
  EXPECT_NE(bad[1].what.find("no file host/decisions/x.md"), std::string::npos) << bad[1].what;

  bad = broken_title_citations(root, "docs/decisions/x.md", read(root / "docs/decisions/x.md"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].what.find("#gone"), std::string::npos) << bad[0].what;
  fs::remove_all(root);
}

}  // namespace
