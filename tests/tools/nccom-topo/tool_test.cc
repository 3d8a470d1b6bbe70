// nccom-topo as an operator runs it: a real process, the real topology
// plugins from the build tree, real files and real Graphviz.
#include "build_paths.h"
#include "child_process.h"
#include "machine.h"

#include <nccom/topo/graph_xml.h>
#include <nccom/topo/system.h>
#include <nccom/topo/xml.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nccom_test::ChildResult;

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-topo";

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The lines of `text` from the one starting with `from` up to (not
// including) the next line starting with "== ".
std::string section(const std::string& text, const std::string& from) {
  const size_t start = text.find(from);
  if (start == std::string::npos) return "";
  const size_t end = text.find("\n== ", start + 1);
  return text.substr(start, end == std::string::npos ? std::string::npos : end + 1 - start);
}

class ToolsTopo : public ::testing::Test {
 protected:
  ChildResult run(const std::vector<std::string>& args, std::map<std::string, std::string> env = {},
                  const std::string& program = kTool) {
    env.try_emplace("NCCOM_PLUGIN_PATH", "");
    return nccom_test::run_child(program, args, env);
  }
  // A failure: exit status `code` and exactly one line on stderr.
  void expect_error(const ChildResult& r, int code, const std::string& needle) {
    EXPECT_EQ(r.exit_code, code) << r.out << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    if (code == 1) {
      EXPECT_EQ(count(r.err, "\n"), 1) << r.err;
    }
    EXPECT_EQ(r.out, "");
  }
  std::string file(const std::string& name) const { return dir_.path() + "/" + name; }
  nccom_test::TempDir dir_;
};

TEST_F(ToolsTopo, TextHasEverySection) {
  const ChildResult r = run({"--platform", "trn2", "--nodes", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Trn2 (nrt_instance_info_t family TRN2 = 5, CAYMAN v3), 16 devices of 8
  // cores, LNC=2 by default: 4 logical cores a device, 64 a node.
  EXPECT_NE(r.out.find("platform trn2 (CAYMAN v3): instance family 5, arch trn2"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(
                "16 devices, 8 NeuronCores each, LNC=2 -> 4 logical cores per device, 64 per node, "
                "16 NICs"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  nic 3: pci switch 3, numa 0, devices 3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  link 0 - 1 RemoteMLA\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 nodes x 64 ranks = 128 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("system: from topology plugin neuron: 64 cores"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("graph: "), std::string::npos);
  const std::string node0 = section(r.out, "== node 0 rings");
  ASSERT_FALSE(node0.empty()) << r.out;
  EXPECT_NE(node0.find("channel 00: "), std::string::npos);
  EXPECT_NE(node0.find(" | nic "), std::string::npos);
  const std::string rings = section(r.out, "== global rings of rank 0");
  ASSERT_FALSE(rings.empty()) << r.out;
  EXPECT_NE(rings.find("Channel 00/"), std::string::npos);
  EXPECT_NE(r.out.find("== kangaRing paths: 0"), std::string::npos);
  EXPECT_NE(r.out.find("== MLA cycles: "), std::string::npos);
  EXPECT_EQ(r.err, "");
}

// The shipped configuration, found where libnccom finds it (beside the
// installation: the build's share/nccom/nccom.toml), picks the NEW search:
// a 2-node Trn2 cluster has 16 searched channels, 32 after doubling, over
// every one of the node's 16 NICs.
TEST_F(ToolsTopo, TheShippedFileGivesTheCommunicatorsSearch) {
  const ChildResult r = run({"--platform", "trn2", "--nodes", "2"}, {{"NCCOM_CONFIG", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string shipped = std::string(NCCOM_BUILD_DIR) + "/share/nccom/nccom.toml";
  EXPECT_NE(r.out.find("config file: " + shipped + " (default path)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("search: the search of topology plugin neuron\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  plugins.neuron.default_new_algorithm = \"true\" (" + shipped + ":"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("16 channels searched, 16 agreed by all nodes, 32 after doubling"),
            std::string::npos)
      << r.out;
  const std::string rings = section(r.out, "== global rings of rank 0");
  for (int nic = 0; nic < 16; ++nic) {
    EXPECT_NE(rings.find(" | nic " + std::to_string(nic) + "\n"), std::string::npos)
        << "nic " << nic << "\n"
        << rings;
  }
}

// --config and --cluster stand in for NCCOM_CONFIG and NCCOM_CLUSTER, and
// --algorithm for NCCL_GRAPH_USE_NEW_ALGORITHM: each source is named.
TEST_F(ToolsTopo, ConfigurationNamesFileClusterAndOverrides) {
  std::ofstream(file("c.toml")) << "[graph]\nuse_new_algorithm = 1\n\n"
                                   "[clusters.lab.graph]\nuse_new_algorithm = 0\n";
  const std::vector<std::string> shape = {"--platform", "emu", "--nodes", "2", "--devices", "4"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = shape;
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args,
               {{"NCCOM_CONFIG", ""}, {"NCCOM_CLUSTER", ""}, {"NCCL_GRAPH_USE_NEW_ALGORITHM", ""}});
  };
  const ChildResult top = with({"--config", file("c.toml")});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("config file: " + file("c.toml") + " (option --config " + file("c.toml") +
                         ")\n"),
            std::string::npos)
      << top.out;
  EXPECT_NE(top.out.find("  graph.use_new_algorithm = \"1\" (" + file("c.toml") + ":2)\n"),
            std::string::npos)
      << top.out;
  EXPECT_NE(top.out.find("search: the search of topology plugin neuron\n"), std::string::npos);

  const ChildResult lab = with({"--config", file("c.toml"), "--cluster", "lab"});
  ASSERT_EQ(lab.exit_code, 0) << lab.err;
  EXPECT_NE(lab.out.find("; cluster lab (option --cluster lab)\n"), std::string::npos) << lab.out;
  EXPECT_NE(
      lab.out.find("  graph.use_new_algorithm = \"0\" (cluster lab " + file("c.toml") + ":5)\n"),
      std::string::npos)
      << lab.out;
  EXPECT_NE(lab.out.find("search: the search of topology plugin nccl\n"), std::string::npos)
      << lab.out;

  const ChildResult forced =
      with({"--config", file("c.toml"), "--cluster", "lab", "--algorithm", "new"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("  graph.use_new_algorithm = \"1\" (option --algorithm new (as "
                            "NCCL_GRAPH_USE_NEW_ALGORITHM))\n"),
            std::string::npos)
      << forced.out;
  EXPECT_NE(forced.out.find("search: the search of topology plugin neuron\n"), std::string::npos);

  // A bad file is the configuration's error, every problem named.
  std::ofstream(file("bad.toml")) << "[graph]\nuse_new_algorithm = 7\n";
  const ChildResult bad = with({"--config", file("bad.toml")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("graph.use_new_algorithm"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find(file("bad.toml")), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "");
}

TEST_F(ToolsTopo, ChosenRanksRingsStartAtIt) {
  const ChildResult r = run({"--platform", "emu", "--nodes", "2", "--devices", "4", "--rank", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // emu: 4 devices of 2 cores at LNC=1 -> 8 ranks a node; rank 5 is on node 0.
  EXPECT_NE(r.out.find("platform emu (EMU emu): instance family 0, arch emu"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("== global rings of rank 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Channel 00/"), std::string::npos);
  const std::string rings = section(r.out, "== global rings of rank 5");
  std::istringstream lines(rings);
  std::string line;
  std::getline(lines, line);
  int channels = 0;
  while (std::getline(lines, line)) {
    EXPECT_NE(line.find(" : 5 "), std::string::npos) << line;
    ++channels;
  }
  EXPECT_GT(channels, 0);
}

TEST_F(ToolsTopo, JsonCarriesTheSameFacts) {
  const ChildResult r = run({"--platform", "trn3-switch-v1", "--nodes", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_EQ(count(r.out, "{"), count(r.out, "}"));
  EXPECT_EQ(count(r.out, "["), count(r.out, "]"));
  // Switch-V1: Trn3's family (10) with the SWITCH pod type.
  EXPECT_NE(r.out.find("\"instance_family\": 10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"pod_type\": \"SWITCH\""), std::string::npos);
  EXPECT_NE(r.out.find("\"lnc\": 2"), std::string::npos);
  for (const char* key : {"\"node_rings\"", "\"rings\"", "\"kangaring\"", "\"mla_cycles\"",
                          "\"links\"", "\"nics\"", "\"origin\""}) {
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  }
}

// stdout is the JSON document at every log level, even when log lines are
// asked for on stdout: they go to stderr.
TEST_F(ToolsTopo, JsonParsesAtEveryLogLevel) {
  for (const char* level : {"VERSION", "WARN", "INFO", "TRACE"}) {
    SCOPED_TRACE(level);
    const ChildResult r = run(
        {"--platform", "trn1", "--nodes", "1", "--json"},
        {{"NCCL_DEBUG", level}, {"NCCL_DEBUG_SUBSYS", "ALL"}, {"NCCOM_DEBUG_STREAM", "stdout"}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("CCOM"), std::string::npos) << r.out;
    EXPECT_EQ(nccom_test::python_json_error(r.out), "") << r.out;
    if (std::string(level) == "INFO" || std::string(level) == "TRACE") {
      EXPECT_NE(r.err.find("CCOM INFO"), std::string::npos) << r.err;
    }
  }
}

// A logging variable that names no level or subsystem is ignored with one
// warning each, as libnccom does; the report is unaffected.
TEST_F(ToolsTopo, BadLoggingVariablesWarnAndAreIgnored) {
  const ChildResult r = run({"--platform", "trn1", "--nodes", "1", "--json"},
                            {{"NCCL_DEBUG", "verbose"}, {"NCCL_DEBUG_SUBSYS", "FOO"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nccom_test::python_json_error(r.out), "") << r.out;
  EXPECT_EQ(count(r.err, "nccom-topo: warning: "), 2) << r.err;
  EXPECT_NE(r.err.find("\"verbose\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NCCL_DEBUG_SUBSYS: unknown subsystem \"FOO\""), std::string::npos) << r.err;
}

TEST_F(ToolsTopo, WrittenXmlLoadsBackAndGivesTheSameRings) {
  // Both runs with the OLD search: with a topology file the nccl plugin
  // describes the node and so searches first, as in a communicator; without
  // one topo_neuron would run the NEW search.
  const ChildResult r = run({"--platform", "trn2", "--nodes", "1", "--algorithm", "old", "--xml",
                             file("sys.xml"), "--graph-xml", file("graph.xml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nccom::topo::parseXmlFile(file("sys.xml"));
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  // Lossless: written again, the same text.
  EXPECT_EQ(nccom::topo::writeXml(*doc->root), slurp(file("sys.xml")));
  auto system = nccom::topo::buildSystem(*doc);
  ASSERT_TRUE(system.ok()) << system.error().message;
  EXPECT_EQ(system->count(nccom::topo::NodeType::GPU), 64);
  EXPECT_EQ(system->count(nccom::topo::NodeType::NET), 16);

  auto gdoc = nccom::topo::parseXmlFile(file("graph.xml"));
  ASSERT_TRUE(gdoc.ok()) << gdoc.error().message;
  nccom::topo::TopoGraph g;
  auto loaded = nccom::topo::graphFromXml(*gdoc, *system, g);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_GT(*loaded, 0);

  const ChildResult again = run(
      {"--platform", "trn2", "--nodes", "1", "--algorithm", "old", "--topo-file", file("sys.xml")});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("system: from topology plugin nccl (topology file " + file("sys.xml")),
            std::string::npos)
      << again.out;
  const std::string before = section(r.out, "== node 0 rings");
  ASSERT_FALSE(before.empty());
  EXPECT_EQ(section(again.out, "== node 0 rings"), before);
  EXPECT_EQ(section(again.out, "== global rings of rank 0"),
            section(r.out, "== global rings of rank 0"));
}

TEST_F(ToolsTopo, DotGroupsDevicesPerNodeAndColoursRings) {
  const ChildResult r = run({"--platform", "trn2", "--nodes", "2", "--dot", file("t.dot")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dot = slurp(file("t.dot"));
  EXPECT_EQ(dot.rfind("digraph nccom_topo {", 0), 0u) << dot.substr(0, 200);
  EXPECT_EQ(count(dot, "subgraph cluster_node"), 2);
  // 16 devices and 16 NICs per node; the 4x4 torus has 32 links.
  EXPECT_EQ(count(dot, "[shape=box"), 32);
  EXPECT_EQ(count(dot, "[shape=ellipse"), 32);
  EXPECT_EQ(count(dot, "[dir=none, color=grey, label="), 64);
  EXPECT_GT(count(dot, "[color=red, label=\"c0\""), 0);
  // Channel 0 leaves node 0 through a NIC into a NIC of node 1.
  EXPECT_NE(dot.find("n0_nic"), std::string::npos);
  EXPECT_GT(count(dot, "-> n1_nic"), 0);
  EXPECT_EQ(dot.back(), '\n');
}

TEST_F(ToolsTopo, DotDrawsAtMostFourNodesAndSaysSo) {
  const ChildResult r =
      run({"--platform", "emu", "--nodes", "6", "--devices", "4", "--dot", file("t.dot")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dot = slurp(file("t.dot"));
  EXPECT_EQ(count(dot, "subgraph cluster_node"), 4);
  EXPECT_NE(dot.find("showing 4 of 6 nodes"), std::string::npos);
  EXPECT_NE(r.out.find("note: the picture shows 4 of 6 nodes"), std::string::npos) << r.out;
}

TEST_F(ToolsTopo, SvgAndPngAreProducedByDot) {
  if (std::string why = nccom_test::machine::program("dot"); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kProgram) << why << " (Graphviz)";
  const ChildResult r =
      run({"--platform", "trn1", "--nodes", "2", "--svg", file("t.svg"), "--png", file("t.png")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = slurp(file("t.svg"));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("node 1"), std::string::npos);
  EXPECT_EQ(slurp(file("t.png")).substr(0, 4), "\x89PNG");
}

TEST_F(ToolsTopo, MissingDotIsAnError) {
  // Through env(1): run_child appends to the inherited environment, and
  // the first PATH would win.
  const ChildResult r = run(
      {"PATH=" + dir_.path(), kTool, "--platform", "trn1", "--nodes", "1", "--svg", file("t.svg")},
      {}, "/usr/bin/env");
  expect_error(r, 1, "--svg needs Graphviz's `dot`, which is not on PATH");
  EXPECT_FALSE(std::filesystem::exists(file("t.svg")));
}

TEST_F(ToolsTopo, UnknownPlatformListsTheValidOnes) {
  expect_error(run({"--platform", "trn9", "--nodes", "1"}), 1,
               "unknown platform \"trn9\" (valid: trn1, trn1n, inf2, trn2, trn2-ultraserver, trn3, "
               "trn3-switch-v1, emu)");
}

TEST_F(ToolsTopo, ForbiddenDeviceCountNamesTheAllowedOnes) {
  expect_error(run({"--platform", "trn2", "--nodes", "1", "--devices", "3"}), 1,
               "platform trn2 has no instance with 3 devices (it has 1, 16)");
}

TEST_F(ToolsTopo, ForbiddenLncIsAnError) {
  expect_error(run({"--platform", "trn1", "--nodes", "1", "--lnc", "2"}), 1,
               "does not support logical-core size 2 (allowed: 1)");
}

TEST_F(ToolsTopo, MoreRanksThanCoresIsAnError) {
  expect_error(run({"--platform", "trn2", "--nodes", "1", "--ranks-per-node", "65"}), 1,
               "65 ranks per node on trn2 with 16 devices at LNC=2: a node has 64 logical cores");
}

TEST_F(ToolsTopo, TooManyNodesIsAnError) {
  expect_error(run({"--platform", "emu", "--nodes", "1025"}), 1,
               "1025 nodes: nccom-topo simulates 1 to 1024 nodes");
}

TEST_F(ToolsTopo, RankOutsideTheClusterIsAnError) {
  expect_error(run({"--platform", "emu", "--nodes", "2", "--devices", "1", "--rank", "4"}), 1,
               "rank 4 is outside the 4 ranks of the cluster");
}

TEST_F(ToolsTopo, MalformedTopologyFileNamesFileLineColumn) {
  std::ofstream(file("bad.xml")) << "<system version=\"1\">\n  <cpu numaid=\"0\" \n    <pci/>\n";
  const ChildResult r = run({"--platform", "trn2", "--nodes", "1", "--topo-file", file("bad.xml")});
  expect_error(r, 1, file("bad.xml") + ":");
  EXPECT_NE(r.err.find(file("bad.xml") + ":3:"), std::string::npos) << r.err;
}

TEST_F(ToolsTopo, UnreadableTopologyFileIsNamed) {
  expect_error(run({"--platform", "trn2", "--nodes", "1", "--topo-file", file("absent.xml")}), 1,
               file("absent.xml"));
}

TEST_F(ToolsTopo, MissingPluginIsAnError) {
  // A copy of the tool whose <exe dir>/../lib/nccom holds no plugins.
  std::filesystem::create_directories(file("bin"));
  std::filesystem::copy_file(kTool, file("bin/nccom-topo"));
  const ChildResult r = run({"--platform", "trn2", "--nodes", "1"}, {}, file("bin/nccom-topo"));
  expect_error(
      r, 1,
      "could not be loaded (a communicator would go on without it; set NCCOM_PLUGIN_PATH or "
      "plugins.search_path): plugin \"topo_neuron\" not found: tried libnccom-topo_neuron.so and "
      "topo_neuron in " +
          (std::filesystem::path(dir_.path()) / "lib" / "nccom").lexically_normal().string());
}

TEST_F(ToolsTopo, PluginPathFindsPluginsElsewhere) {
  std::filesystem::create_directories(file("bin"));
  std::filesystem::copy_file(kTool, file("bin/nccom-topo"));
  const ChildResult r = run({"--platform", "emu", "--nodes", "1", "--devices", "1"},
                            {{"NCCOM_PLUGIN_PATH", std::string(NCCOM_BUILD_DIR) + "/lib/nccom"}},
                            file("bin/nccom-topo"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ToolsTopo, UsageErrorsExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {"--platform", "trn2"},
           {"--nodes", "2"},
           {"--platform", "trn2", "--nodes", "zero"},
           {"--platform", "trn2", "--nodes", "0"},
           {"--platform", "trn2", "--nodes", "1", "--lnc", "3"},
           {"--platform", "trn2", "--nodes", "1", "--algorithm", "fast"},
           {"--platform", "trn2", "--nodes", "1", "--bogus"},
           {"--platform", "trn2", "--nodes"}}) {
    const ChildResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("usage: nccom-topo"), std::string::npos) << r.err;
  }
}

}  // namespace
