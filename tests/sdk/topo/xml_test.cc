// TopoXml: the DOM, the parser's limits and error messages, the writer's
// layout, the read -> write -> read round trip, and writing files (whole or
// not at all, on a full filesystem too).
#include "child_process.h"
#include "machine.h"
#include "topo_test_util.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

namespace nccom::topo::test {
namespace {

TEST(TopoXml, ParsesElementsAttributesAndChildrenInOrder) {
  auto doc = mustParse(
      "<system version=\"1\">\n  <cpu numaid='0' arch=\"x86_64\">\n    <pci "
      "busid=\"0000:10:00.0\"/>\n"
      "    <nic/>\n  </cpu>\n</system>\n");
  ASSERT_TRUE(doc.root);
  const XmlNode& root = *doc.root;
  EXPECT_EQ(root.name(), "system");
  EXPECT_EQ(root.parent(), nullptr);
  ASSERT_EQ(root.children().size(), 1u);
  const XmlNode& cpu = *root.children()[0];
  EXPECT_EQ(cpu.parent(), &root);
  ASSERT_EQ(cpu.attributes().size(), 2u);
  EXPECT_EQ(cpu.attributes()[0].key, "numaid");
  EXPECT_EQ(cpu.attributes()[0].value, "0");
  EXPECT_EQ(cpu.attributes()[1].key, "arch");
  ASSERT_EQ(cpu.children().size(), 2u);
  EXPECT_EQ(cpu.children()[0]->name(), "pci");
  EXPECT_EQ(cpu.children()[1]->name(), "nic");
  EXPECT_EQ(cpu.line(), 2);
  EXPECT_EQ(cpu.column(), 3);
  EXPECT_EQ(cpu.findChild("nic"), cpu.children()[1].get());
  EXPECT_EQ(cpu.findChild("gpu"), nullptr);
  EXPECT_EQ(doc.countNodes(), 4);
}

TEST(TopoXml, SkipsPrologCommentsAndDecodesEntities) {
  auto doc = mustParse(
      "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- a <comment> -->\n"
      "<a v=\"&lt;&gt;&amp;&quot;&apos;\" w='say \"hi\"'><!-- inside --><b/></a><!-- after -->\n");
  ASSERT_TRUE(doc.root);
  EXPECT_EQ(*doc.root->attribute("v"), "<>&\"'");
  EXPECT_EQ(*doc.root->attribute("w"), "say \"hi\"");
  EXPECT_EQ(doc.root->children().size(), 1u);
}

TEST(TopoXml, WriterUsesNcclDumpLayout) {
  auto doc = mustParse(
      "<system version='1'><cpu numaid='0'><pci busid='0000:10:00.0'><gpu dev='0' rank='0'/></pci>"
      "</cpu><cpu numaid='1'/></system>");
  const std::string expected =
      "<system version=\"1\">\n"
      "  <cpu numaid=\"0\">\n"
      "    <pci busid=\"0000:10:00.0\">\n"
      "      <gpu dev=\"0\" rank=\"0\"/>\n"
      "    </pci>\n"
      "  </cpu>\n"
      "  <cpu numaid=\"1\"/>\n"
      "</system>\n";
  EXPECT_EQ(writeXml(*doc.root), expected);
}

TEST(TopoXml, WriterEscapesAndRoundTripsSpecialCharacters) {
  XmlNode n("a");
  ASSERT_TRUE(n.setAttribute("v", "<&>\"' \t"));
  EXPECT_EQ(writeXml(n), "<a v=\"&lt;&amp;&gt;&quot;' \t\"/>\n");
  auto back = mustParse(writeXml(n));
  EXPECT_EQ(*back.root->attribute("v"), "<&>\"' \t");
}

// Structural equality of two trees: names, attributes in order, children.
void expectSameTree(const XmlNode& a, const XmlNode& b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.attributes().size(), b.attributes().size()) << a.name();
  for (std::size_t i = 0; i < a.attributes().size(); ++i) {
    EXPECT_EQ(a.attributes()[i].key, b.attributes()[i].key);
    EXPECT_EQ(a.attributes()[i].value, b.attributes()[i].value);
  }
  ASSERT_EQ(a.children().size(), b.children().size()) << a.name();
  for (std::size_t i = 0; i < a.children().size(); ++i) {
    EXPECT_EQ(b.children()[i]->parent(), &b);
    expectSameTree(*a.children()[i], *b.children()[i]);
  }
}

TEST(TopoXml, RoundTripOfTheHostFileIsLossless) {
  auto first = parseXmlFile(dataPath("pcie_host.xml"));
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::string written = writeXml(*first->root);
  auto second = parseXml(written);
  ASSERT_TRUE(second.ok()) << second.error().message;
  expectSameTree(*first->root, *second->root);
  EXPECT_EQ(writeXml(*second->root), written);  // deterministic
  // system + per NUMA node: cpu, root switch, 2 x (leaf switch + 2 x (pci + gpu)), pci + nic + net.
  EXPECT_EQ(first->countNodes(), 1 + 2 * (2 + 2 * (1 + 2 * 2) + 3));
}

TEST(TopoXml, FileRoundTripAndFileErrorsNameThePath) {
  const std::string path = ::testing::TempDir() + "topo_xml_roundtrip.xml";
  auto doc = mustParse("<graphs version=\"1\"><graph id=\"0\"/></graphs>");
  ASSERT_TRUE(writeXmlFile(*doc.root, path));
  auto back = parseXmlFile(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  expectSameTree(*doc.root, *back->root);
  EXPECT_EQ(back->source, path);

  std::ofstream(path) << "<a>\n  <b x='1' x='2'/>\n</a>\n";
  EXPECT_EQ(errorOf(parseXmlFile(path)), path + ":2:12: XML error: duplicate attribute 'x' on <b>");
  EXPECT_EQ(errorOf(parseXmlFile(path + ".missing")),
            "cannot read XML file '" + path + ".missing': No such file or directory");
  std::remove(path.c_str());
}

// The text of a file ("" when it cannot be read).
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The names in a directory, sorted and joined with spaces.
std::string listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

// A topology of `cpus` elements of about 280 bytes each in writeXml's layout.
XmlDocument bigTopology(int cpus) {
  std::string text = "<system version=\"1\">";
  for (int i = 0; i < cpus; ++i) {
    text += "<cpu numaid=\"" + std::to_string(i) + "\" a=\"" + std::string(60, 'a') + "\" b=\"" +
            std::string(60, 'b') + "\" c=\"" + std::string(60, 'c') + "\" d=\"" +
            std::string(60, 'd') + "\"/>";
  }
  return mustParse(text + "</system>");
}

// The file is replaced whole: the old content until the rename, no
// temporary left beside it, the old file's permissions kept, a symbolic
// link kept and the file it names replaced.
TEST(TopoXml, FileWriteReplacesTheFileWholeAndLeavesNothingBeside) {
  nccom_test::TempDir dir;
  const std::string path = dir.path() + "/topo.xml";
  auto first = mustParse("<system version=\"1\"/>");
  ASSERT_TRUE(writeXmlFile(*first.root, path));
  EXPECT_EQ(slurp(path), writeXml(*first.root));
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);

  auto second = bigTopology(8);
  ASSERT_TRUE(writeXmlFile(*second.root, path));
  EXPECT_EQ(slurp(path), writeXml(*second.root));
  EXPECT_EQ(listing(dir.path()), "topo.xml");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);

  const std::string link = dir.path() + "/link.xml";
  ASSERT_EQ(::symlink("topo.xml", link.c_str()), 0);
  ASSERT_TRUE(writeXmlFile(*first.root, link));
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced by a file";
  EXPECT_EQ(slurp(path), writeXml(*first.root));
  EXPECT_EQ(listing(dir.path()), "link.xml topo.xml");
}

TEST(TopoXml, FileWriteErrorsNameThePathTheReasonAndWhatToDo) {
  nccom_test::TempDir dir;
  auto doc = mustParse("<system version=\"1\"/>");
  const std::string missing = dir.path() + "/no-such-dir/topo.xml";
  const std::string e = errorOf(writeXmlFile(*doc.root, missing));
  EXPECT_TRUE(
      contains(e, "XML: writing '" + missing + "' failed: cannot create '" + missing + ".tmp."))
      << e;
  EXPECT_TRUE(contains(e,
                       "No such file or directory (create that directory first, or write the "
                       "file elsewhere)"));
  EXPECT_EQ(errorOf(writeXmlFile(*doc.root, dir.path())),
            "XML: cannot write '" + dir.path() +
                "': Is a directory (the path names a directory: name a file in it instead)");
  EXPECT_EQ(listing(dir.path()), "");
}

// NCCL_TOPO_DUMP_FILE on a full filesystem: a tmpfs of 8 KiB in a private
// mount namespace of a child process (this process keeps its mounts), the
// old dump taking one of its two pages. Writing a dump larger than the page
// left fails with the system's reason, the bytes written and what to do;
// the path keeps the old dump and no temporary is left. A dump that fits in
// that page then replaces the old one.
TEST(TopoXml, FileWriteOnAFullFilesystemSaysWhyAndKeepsTheOldFile) {
  if (std::string why = nccom_test::machine::mount_namespaces(); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kMountNamespaces) << why;
  nccom_test::TempDir dir;
  const std::string path = dir.path() + "/topo.xml";
  auto small = mustParse("<system version=\"1\"/>");
  auto fits = mustParse("<system version=\"2\"/>");
  auto big = bigTopology(64);
  const std::string bigText = writeXml(*big.root);
  ASSERT_GT(bigText.size(), 16000u);

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string report;
    auto say = [&report](const std::string& key, const std::string& value) {
      report += key + "=" + value + "\n";
    };
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", dir.path().c_str(), "tmpfs", 0, "size=8k") != 0) {
      say("setup", std::string("failed: ") + std::strerror(errno));
    } else {
      auto old = writeXmlFile(*small.root, path);
      say("old", old ? "ok" : old.error().message);
      auto full = writeXmlFile(*big.root, path);
      say("full", full ? "ok" : full.error().message);
      say("after_full_content", slurp(path) == writeXml(*small.root) ? "old" : "changed");
      say("after_full_listing", listing(dir.path()));
      auto fresh = writeXmlFile(*fits.root, path);  // one page, the room left
      say("fits", fresh ? "ok" : fresh.error().message);
      say("after_fits_content", slurp(path) == writeXml(*fits.root) ? "new" : "other");
      say("after_fits_listing", listing(dir.path()));
    }
    (void)!::write(fds[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  const auto r = nccom_test::parse_report(out);
  ASSERT_EQ(r.count("setup"), 0u) << "the machine probe allowed a mount namespace: " << out;
  EXPECT_EQ(r.at("old"), "ok");
  // "failed after N of M bytes: No space left on device (...)", N < M.
  const std::string& full = r.at("full");
  const std::string head = "XML: writing '" + path + "' failed after ";
  ASSERT_EQ(full.rfind(head, 0), 0u) << full;
  const std::size_t done = std::stoul(full.substr(head.size()));
  EXPECT_LT(done, bigText.size()) << full;
  EXPECT_EQ(full.substr(head.size() + std::to_string(done).size()),
            " of " + std::to_string(bigText.size()) +
                " bytes: No space left on device (free room on that filesystem, or write the "
                "file elsewhere)");
  EXPECT_EQ(r.at("after_full_content"), "old") << "a failed write changed the file at the path";
  EXPECT_EQ(r.at("after_full_listing"), "topo.xml") << "the temporary was left";
  EXPECT_EQ(r.at("fits"), "ok");
  EXPECT_EQ(r.at("after_fits_content"), "new");
  EXPECT_EQ(r.at("after_fits_listing"), "topo.xml");
}

// Topology and graph files (NCCL_TOPO_FILE, NCCL_GRAPH_FILE, nccom-topo's
// inputs) are read only as bounded regular files: a FIFO does not block, a
// device that never ends is not read, a file over the limit is refused.
TEST(TopoXml, FileThatIsNotABoundedRegularFileIsRefused) {
  const std::string dir = ::testing::TempDir() + "topo_xml_kinds";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(std::filesystem::create_directory(dir));
  const std::string fifo = dir + "/topo.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string rule = ", not a regular file; give the path of a regular file";
  EXPECT_EQ(errorOf(parseXmlFile(fifo)),
            "cannot read XML file '" + fifo + "': it is a FIFO" + rule);
  EXPECT_EQ(errorOf(parseXmlFile("/dev/zero")),
            "cannot read XML file '/dev/zero': it is a character device" + rule);
  EXPECT_EQ(errorOf(parseXmlFile(dir)),
            "cannot read XML file '" + dir + "': it is a directory" + rule);

  const std::string big = dir + "/big.xml";
  const std::string text = "<system version=\"1\"/>\n" + std::string(100, ' ');
  std::ofstream(big) << text;
  XmlLimits limits;
  limits.maxInputBytes = text.size() - 1;
  EXPECT_EQ(errorOf(parseXmlFile(big, limits)),
            "cannot read XML file '" + big + "': it is " + std::to_string(text.size()) +
                " bytes, over the limit of " + std::to_string(text.size() - 1) +
                " bytes; check that the path names the intended file");
  limits.maxInputBytes = text.size();
  auto whole = parseXmlFile(big, limits);
  EXPECT_TRUE(whole.ok()) << (whole.ok() ? "" : whole.error().message);
  std::filesystem::remove_all(dir);
}

struct BadInput {
  const char* text;
  const char* message;  // the whole expected message
};

class TopoXmlErrors : public ::testing::TestWithParam<BadInput> {};

TEST_P(TopoXmlErrors, EachRuleHasItsMessageAndLocation) {
  auto doc = parseXml(GetParam().text);
  ASSERT_FALSE(doc.ok()) << GetParam().text;
  EXPECT_EQ(doc.error().message, GetParam().message);
  EXPECT_EQ(doc.error().status, NRT_INVALID);
}

INSTANTIATE_TEST_SUITE_P(
    TopoXml, TopoXmlErrors,
    ::testing::Values(
        BadInput{"<a><b></b>",
                 "<string>:1:11: XML error: unclosed tag <a> opened at 1:1 (end of input)"},
        BadInput{"<a x=\"1\"",
                 "<string>:1:1: XML error: unclosed tag <a (end of input inside the tag)"},
        BadInput{"<a>\n<b></a>",
                 "<string>:2:4: XML error: mismatched closing tag </a>, expected </b> for the "
                 "element opened at 2:1"},
        BadInput{"</a>", "<string>:1:1: XML error: closing tag </a> without an open element"},
        BadInput{"<a x='1' x='2'/>", "<string>:1:10: XML error: duplicate attribute 'x' on <a>"},
        BadInput{"<1a/>",
                 "<string>:1:2: XML error: bad character '1' at the start of element name"},
        BadInput{"<a x='1<2'/>",
                 "<string>:1:8: XML error: bad character '<' in the value of attribute 'x'"},
        BadInput{"<a x='\x01'/>",
                 "<string>:1:7: XML error: bad character 0x01 in the value of attribute 'x'"},
        BadInput{
            "<a x=1/>",
            "<string>:1:6: XML error: value of attribute 'x' must be in single or double quotes"},
        BadInput{"<a x='1'y='2'/>",
                 "<string>:1:9: XML error: missing whitespace before attribute in tag <a>"},
        BadInput{"<a x/>", "<string>:1:5: XML error: expected '=' after attribute name 'x'"},
        BadInput{"<a x='&foo;'/>",
                 "<string>:1:7: XML error: unknown entity reference in attribute 'x' (only &lt; "
                 "&gt; &amp; &quot; &apos;)"},
        BadInput{"<a x='1", "<string>:1:8: XML error: unterminated value of attribute 'x'"},
        BadInput{"<a/>junk",
                 "<string>:1:5: XML error: trailing garbage after the root element </a>"},
        BadInput{"<a/>\n<b/>",
                 "<string>:2:1: XML error: trailing garbage: a second root element after </a>"},
        BadInput{"<a>text</a>",
                 "<string>:1:4: XML error: text content is not supported (inside <a>)"},
        BadInput{"<a><!-- open", "<string>:1:4: XML error: unterminated comment (no '-->')"},
        BadInput{"<!DOCTYPE a><a/>",
                 "<string>:1:1: XML error: <!DOCTYPE and <![CDATA[ are not supported"},
        BadInput{"<a/><?xml version='1.0'?>",
                 "<string>:1:5: XML error: processing instruction '<?' only allowed as one <?xml "
                 "...?> prolog before the root element"},
        BadInput{
            "<?php x ?><a/>",
            "<string>:1:1: XML error: only the <?xml ...?> processing instruction is supported"},
        BadInput{"", "<string>:1:1: XML error: no root element"},
        BadInput{"  <!-- only a comment -->\n", "<string>:2:1: XML error: no root element"},
        BadInput{"x<a/>", "<string>:1:1: XML error: bad character 'x' before the root element"},
        BadInput{"<a>\n  <b c='1' @/>\n</a>",
                 "<string>:2:12: XML error: bad character '@' in tag <b>"}));

TEST(TopoXml, NulByteIsABadCharacter) {
  const std::string text("<a/>\0", 5);
  EXPECT_EQ(errorOf(parseXml(text)), "<string>:1:5: XML error: bad character 0x00 (NUL byte)");
}

TEST(TopoXml, NameAndValueLengthLimitIs255) {
  const std::string ok255(255, 'n');
  EXPECT_TRUE(parseXml("<" + ok255 + " " + ok255 + "='" + std::string(255, 'v') + "'/>").ok());
  EXPECT_EQ(errorOf(parseXml("<" + std::string(256, 'n') + "/>")),
            "<string>:1:257: XML error: element name longer than 255 characters");
  EXPECT_EQ(errorOf(parseXml("<a " + std::string(256, 'k') + "='1'/>")),
            "<string>:1:259: XML error: attribute name longer than 255 characters");
  EXPECT_EQ(errorOf(parseXml("<a k='" + std::string(256, 'v') + "'/>")),
            "<string>:1:263: XML error: value of attribute 'k' longer than 255 characters");
}

TEST(TopoXml, AtMostSixteenAttributes) {
  std::string attrs;
  for (int i = 0; i < 16; ++i) attrs += " a" + std::to_string(i) + "='x'";
  EXPECT_TRUE(parseXml("<e" + attrs + "/>").ok());
  EXPECT_EQ(errorOf(parseXml("<e" + attrs + " a16='x'/>")),
            "<string>:1:" + std::to_string(4 + attrs.size()) +
                ": XML error: too many attributes on <e> (limit 16)");
}

TEST(TopoXml, NestingDepthLimit) {
  auto nested = [](int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += "<d>";
    for (int i = 0; i < depth; ++i) s += "</d>";
    return s;
  };
  EXPECT_TRUE(parseXml(nested(64)).ok());
  EXPECT_EQ(errorOf(parseXml(nested(65))),
            "<string>:1:193: XML error: elements nested too deep (limit 64)");
}

// A document of exactly n elements: a root with groups of up to 255 leaves.
std::string documentWithNodes(int n) {
  std::string s = "<r>";
  int left = n - 1;
  while (left > 0) {
    s += "<g>";
    --left;
    const int leaves = std::min(left, 255);
    for (int i = 0; i < leaves; ++i) s += "<l/>";
    left -= leaves;
    s += "</g>";
  }
  return s + "</r>";
}

TEST(TopoXml, NodeCountLimitIsTheNeuronBuildsMaxNodes) {
  auto ok = parseXml(documentWithNodes(10432));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->countNodes(), 10432);
  EXPECT_TRUE(contains(errorOf(parseXml(documentWithNodes(10433))),
                       "XML error: too many elements (limit 10432)"));
}

TEST(TopoXml, ChildCountLimit) {
  std::string s = "<r>";
  for (int i = 0; i < 257; ++i) s += "<c/>";
  s += "</r>";
  EXPECT_EQ(errorOf(parseXml(s)), "<string>:1:" + std::to_string(4 + 256 * 4) +
                                      ": XML error: too many children in <r> (limit 256)");
}

TEST(TopoXml, InputSizeLimit) {
  XmlLimits limits;
  limits.maxInputBytes = 10;
  EXPECT_EQ(errorOf(parseXml("<abcdefgh/>", "<string>", limits)),
            "<string>:1:1: XML error: input of 11 bytes exceeds the limit of 10");
}

TEST(TopoXml, TypedGettersAndTheirErrors) {
  auto doc = mustParse(
      "<n i='42' h='0x1F' neg='-3' f='2.5' bad='4x' big='99999999999999999999' inf='inf' "
      "hx='1d0f'/>");
  const XmlNode& n = *doc.root;
  EXPECT_EQ(*n.getInt("i"), 42);
  EXPECT_EQ(*n.getInt("h"), 31);
  EXPECT_EQ(*n.getInt("neg"), -3);
  EXPECT_EQ(parseIntText("010"), 8);  // strtol base 0, as upstream
  EXPECT_FALSE(parseIntText(" 1"));
  EXPECT_FALSE(parseIntText("1 "));
  EXPECT_DOUBLE_EQ(*n.getFloat("f"), 2.5);
  EXPECT_EQ(*n.getHex("h"), 0x1fu);
  EXPECT_EQ(*n.getHex("hx"), 0x1d0fu);
  EXPECT_EQ(*n.getIntOr("absent", 7), 7);
  EXPECT_EQ(errorOf(n.getInt("bad")),
            "XML: attribute 'bad' of <n> at line 1:1: '4x' is not an integer");
  EXPECT_EQ(errorOf(n.getIntOr("bad", 7)),
            "XML: attribute 'bad' of <n> at line 1:1: '4x' is not an integer");
  EXPECT_TRUE(contains(errorOf(n.getInt("big")), "is not an integer"));
  EXPECT_TRUE(contains(errorOf(n.getFloat("inf")), "is not a finite number"));
  EXPECT_TRUE(contains(errorOf(n.getHex("neg")), "is not a 64-bit hex number"));
  EXPECT_EQ(errorOf(n.getString("absent")), "XML: attribute 'absent' of <n> at line 1:1: missing");
}

TEST(TopoXml, SettersReplaceInPlaceAndEnforceLimits) {
  XmlNode n("net");
  ASSERT_TRUE(n.setInt("dev", 1));
  ASSERT_TRUE(n.setHex("guid", 0x1d0f00000000a010ULL));
  ASSERT_TRUE(n.setFloat("speed", 12.5));
  ASSERT_TRUE(n.setInt("dev", 3));
  EXPECT_EQ(writeXml(n), "<net dev=\"3\" guid=\"0x1d0f00000000a010\" speed=\"12.5\"/>\n");
  n.removeAttribute("guid");
  EXPECT_FALSE(n.hasAttribute("guid"));
  for (int i = 0; i < 14; ++i) ASSERT_TRUE(n.setInt("k" + std::to_string(i), i));
  EXPECT_EQ(errorOf(n.setInt("one_more", 1)),
            "XML: attribute 'one_more' of <net>: more than 16 attributes on one element");
  EXPECT_TRUE(n.setInt("k0", 5));  // replacing is still fine
  EXPECT_TRUE(contains(errorOf(n.setAttribute("v", std::string(256, 'x'))),
                       "value longer than 255 characters"));

  XmlNode parent("p");
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(parent.addChild("c").ok());
  EXPECT_EQ(errorOf(parent.addChild("c")), "XML: <p> would have more than 256 children");
  EXPECT_EQ(parent.children()[5]->parent(), &parent);
}

// Random damage to a valid document must give a value or an error with a
// location, never a crash or a hang (the replay side of the fuzz target).
TEST(TopoXml, RandomlyDamagedInputsFailCleanly) {
  std::ifstream f(dataPath("pcie_host.xml"));
  const std::string seed((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(seed.empty());
  std::mt19937_64 rng(12345);
  const std::string alphabet = "<>/='\"&;!?- \n\tax0";
  int errors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0:
          if (at < s.size()) s.erase(at, 1 + rng() % 8);
          break;
        case 1: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default:
          if (at < s.size()) s[at] = static_cast<char>(rng() % 256);
      }
    }
    auto doc = parseXml(s);
    if (!doc.ok()) {
      ++errors;
      ASSERT_EQ(doc.error().message.rfind("<string>:", 0), 0u) << doc.error().message;
      continue;
    }
    auto again = parseXml(writeXml(*doc->root));
    ASSERT_TRUE(again.ok()) << again.error().message;
    expectSameTree(*doc->root, *again->root);
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace nccom::topo::test
