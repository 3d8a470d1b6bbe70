// The shape of the built files, read back with readelf and nm exactly as an
// operator would:
//   libnccom.so -> libnccom.so.2 -> libnccom.so.2.31.24, SONAME libnccom.so.2,
//   DT_NEEDED libnrt.so.1, VERNEED NRT_2.0.0 only, the 20 imports bound
//   @NRT_2.0.0, exactly the 37 neuron* functions exported unversioned, no
//   version definitions; libnrt.so.1 defines the 20 in NRT_2.0.0.
#include "build_paths.h"

#include <nccom/nrt_abi.h>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kLibDir = nccom_test::in_build("lib");
const std::string kNccom = kLibDir + "/libnccom.so.2.31.24";
const std::string kNrt = kLibDir + "/libnrt.so.1";

const std::set<std::string> kExports = {
#define ABI_NAME(name) #name,
    NCCOM_FOR_EACH_EXPORT(ABI_NAME)};
const std::set<std::string> kImports = {NCCOM_FOR_EACH_IMPORT(ABI_NAME)
#undef ABI_NAME
};

std::string run(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) ADD_FAILURE() << "popen " << command;
  std::string out;
  char buf[4096];
  size_t n;
  while (pipe != nullptr && (n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pipe != nullptr ? pclose(pipe) : -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << out;
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

struct DynSym {
  std::string type, bind, visibility, section, name, version;
  bool default_version = false;  // name@@VERSION (a definition's own node)
  bool defined() const { return section != "UND"; }
};

// `readelf -W --dyn-syms`, entry 0 (the null symbol) left out.
std::vector<DynSym> dynamic_symbols(const std::string& file) {
  std::vector<DynSym> symbols;
  for (const std::string& line : lines_of(run("readelf -W --dyn-syms " + file))) {
    const auto w = words_of(line);
    if (w.size() < 8 || w[0].back() != ':' || w[0] == "Num:") continue;
    DynSym s{w[3], w[4], w[5], w[6], w[7], "", false};
    if (const size_t at = s.name.find('@'); at != std::string::npos) {
      s.default_version = s.name.compare(at, 2, "@@") == 0;
      s.version = s.name.substr(at + (s.default_version ? 2 : 1));
      s.name.resize(at);
    }
    symbols.push_back(s);
  }
  return symbols;
}

// `readelf -W -d`: values of one tag, e.g. NEEDED or SONAME.
std::vector<std::string> dynamic_tag(const std::string& file, const std::string& tag) {
  std::vector<std::string> values;
  for (const std::string& line : lines_of(run("readelf -W -d " + file))) {
    if (line.find("(" + tag + ")") == std::string::npos) continue;
    const size_t open = line.find('['), close = line.rfind(']');
    if (open != std::string::npos && close > open)
      values.push_back(line.substr(open + 1, close - open - 1));
  }
  return values;
}

struct VersionSections {
  std::map<std::string, std::set<std::string>> needs;  // file -> version names
  std::set<std::string> definitions;
  bool has_definition_section = false;
};

// `readelf -W -V`.
VersionSections versions(const std::string& file) {
  VersionSections v;
  enum { kOther, kDefs, kNeeds } section = kOther;
  std::string current_file;
  for (const std::string& line : lines_of(run("readelf -W -V " + file))) {
    if (line.rfind("Version definition section", 0) == 0) {
      section = kDefs;
      v.has_definition_section = true;
      continue;
    }
    if (line.rfind("Version needs section", 0) == 0) {
      section = kNeeds;
      continue;
    }
    if (line.rfind("Version symbols section", 0) == 0) {
      section = kOther;
      continue;
    }
    const auto w = words_of(line);
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      if (section == kNeeds && w[i] == "File:") current_file = w[i + 1];
      if (section == kNeeds && w[i] == "Name:") v.needs[current_file].insert(w[i + 1]);
      if (section == kDefs && w[i] == "Name:") v.definitions.insert(w[i + 1]);
    }
  }
  return v;
}

TEST(AbiShape, LibnccomSymlinkChain) {
  ASSERT_TRUE(fs::is_symlink(kLibDir + "/libnccom.so"));
  EXPECT_EQ(fs::read_symlink(kLibDir + "/libnccom.so"), "libnccom.so.2");
  ASSERT_TRUE(fs::is_symlink(kLibDir + "/libnccom.so.2"));
  EXPECT_EQ(fs::read_symlink(kLibDir + "/libnccom.so.2"), "libnccom.so.2.31.24");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(kNccom)));
}

TEST(AbiShape, LibnccomSonameAndNeeded) {
  EXPECT_EQ(dynamic_tag(kNccom, "SONAME"), std::vector<std::string>{"libnccom.so.2"});
  const auto needed = dynamic_tag(kNccom, "NEEDED");
  EXPECT_NE(std::find(needed.begin(), needed.end(), "libnrt.so.1"), needed.end());
}

TEST(AbiShape, LibnccomNeedsOnlyNrt200AndDefinesNoVersion) {
  const VersionSections v = versions(kNccom);
  EXPECT_FALSE(v.has_definition_section) << "libnccom must define no version node";
  ASSERT_TRUE(v.needs.count("libnrt.so.1")) << "no VERNEED entry for libnrt.so.1";
  EXPECT_EQ(v.needs.at("libnrt.so.1"), std::set<std::string>{"NRT_2.0.0"});
  for (const auto& [file, names] : v.needs) EXPECT_FALSE(names.count("NRT_3.0.0")) << file;
}

TEST(AbiShape, LibnccomImportsExactlyThe20AtNrt200) {
  std::set<std::string> bound;
  for (const DynSym& s : dynamic_symbols(kNccom)) {
    if (s.defined()) continue;
    if (s.version == "NRT_2.0.0") bound.insert(s.name);
    EXPECT_NE(s.version, "NRT_3.0.0") << s.name;
    if (s.name.rfind("nec_", 0) == 0 || s.name.rfind("nrt_", 0) == 0) {
      EXPECT_EQ(s.version, "NRT_2.0.0") << s.name << " is imported without NRT_2.0.0";
    }
  }
  for (const std::string& name : kImports) {
    EXPECT_TRUE(bound.count(name)) << name << " is not imported @NRT_2.0.0";
  }
  for (const std::string& name : bound) {
    EXPECT_TRUE(kImports.count(name)) << name << " is imported @NRT_2.0.0 but is not one of the 20";
  }
}

TEST(AbiShape, LibnccomExportsExactlyThe37Unversioned) {
  std::set<std::string> exported;
  for (const DynSym& s : dynamic_symbols(kNccom)) {
    if (!s.defined()) continue;
    EXPECT_TRUE(kExports.count(s.name)) << "unexpected export " << s.name << " (" << s.type << ")";
    EXPECT_EQ(s.type, "FUNC") << s.name;
    EXPECT_EQ(s.bind, "GLOBAL") << s.name;
    EXPECT_EQ(s.visibility, "DEFAULT") << s.name;
    EXPECT_EQ(s.version, "") << s.name << " must be unversioned";
    exported.insert(s.name);
  }
  EXPECT_EQ(exported, kExports);
}

TEST(AbiShape, NmAgreesOnTheExports) {
  std::set<std::string> text;
  for (const std::string& line : lines_of(run("nm -D --defined-only " + kNccom))) {
    const auto w = words_of(line);
    ASSERT_EQ(w.size(), 3u) << line;
    EXPECT_EQ(w[1], "T") << line;
    text.insert(w[2]);
  }
  EXPECT_EQ(text, kExports);
}

TEST(AbiShape, LibnrtDefinesThe20InNrt200) {
  EXPECT_EQ(dynamic_tag(kNrt, "SONAME"), std::vector<std::string>{"libnrt.so.1"});
  const VersionSections v = versions(kNrt);
  EXPECT_TRUE(v.definitions.count("NRT_2.0.0"));
  EXPECT_TRUE(v.definitions.count("NRT_EMU_1.0"));
  EXPECT_FALSE(v.definitions.count("NRT_3.0.0"));
  std::set<std::string> nrt200, emu, other;
  for (const DynSym& s : dynamic_symbols(kNrt)) {
    if (!s.defined()) continue;
    if (s.section == "ABS" && v.definitions.count(s.name)) continue;  // a version node's own symbol
    if (s.version == "NRT_2.0.0" && s.default_version && s.type == "FUNC") {
      nrt200.insert(s.name);
    } else if (s.version == "NRT_EMU_1.0" && s.default_version &&
               s.name.rfind("nrt_emu_", 0) == 0) {
      emu.insert(s.name);
    } else {
      other.insert(s.name + "@" + s.version);
    }
  }
  EXPECT_EQ(nrt200, kImports);
  EXPECT_FALSE(emu.empty());
  for (const std::string& name : other) ADD_FAILURE() << "unexpected export " << name;
}

}  // namespace
