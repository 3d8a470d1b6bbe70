// Loading: discovery, defaults, file values and sources, clusters, environment.
#include "build_paths.h"
#include "config_test_util.h"

#include <fstream>
#include <map>

namespace nccom::config::testing {
namespace {

using Kind = Source::Kind;

TEST(ConfigLoad, NoFileGivesEveryDefault) {
  FakeEnv env;
  Config cfg = load_ok(options(env));
  EXPECT_EQ(cfg.file(), "");
  EXPECT_EQ(cfg.cluster(), "");
  ASSERT_EQ(cfg.entries().size(), host_knobs().size() + std::size(kDemoKnobs));
  for (const Entry& e : cfg.entries()) {
    EXPECT_EQ(e.source.kind, Kind::Default) << e.key();
    EXPECT_EQ(e.source.to_string(), "default") << e.key();
    EXPECT_EQ(e.text(), e.knob->default_text) << e.key();
  }
  EXPECT_EQ(cfg.get_string("log.level"), "WARN");
  EXPECT_EQ(cfg.get_string("log.subsys"), "INIT,ENV,BOOTSTRAP");
  EXPECT_EQ(cfg.get_int("bootstrap.socket_timeout_ms"), 120000);
  EXPECT_EQ(cfg.get_int("demo.socket.nsocks_per_thread"), 1);
  EXPECT_EQ(cfg.get_int("demo.socket.nthreads"), 1);
  EXPECT_EQ(cfg.get_string("bootstrap.socket_family"), "");
  EXPECT_FALSE(cfg.get_bool("demo.socket.debug"));
}

TEST(ConfigLoad, MissingDefaultPathsAreSkipped) {
  TempDir dir;
  FakeEnv env;
  Config cfg = load_ok(options(env, {dir.path("absent.toml"), dir.path("also-absent.toml")}));
  EXPECT_EQ(cfg.file(), "");
  EXPECT_EQ(cfg.entry("net.plugin").source.kind, Kind::Default);
}

TEST(ConfigLoad, FirstExistingDefaultPathIsUsed) {
  TempDir dir;
  std::string second = dir.write("second.toml", "[net]\nplugin = \"second\"\n");
  std::string third = dir.write("third.toml", "[net]\nplugin = \"third\"\n");
  FakeEnv env;
  Config cfg = load_ok(options(env, {dir.path("first.toml"), second, third}));
  EXPECT_EQ(cfg.file(), second);
  EXPECT_EQ(cfg.get_string("net.plugin"), "second");
}

TEST(ConfigLoad, NccomConfigBeatsDefaultPaths) {
  TempDir dir;
  std::string chosen = dir.write("chosen.toml", "[net]\nplugin = \"chosen\"\n");
  std::string fallback = dir.write("default.toml", "[net]\nplugin = \"default\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", chosen);
  Config cfg = load_ok(options(env, {fallback}));
  EXPECT_EQ(cfg.file(), chosen);
  EXPECT_EQ(cfg.get_string("net.plugin"), "chosen");
}

// The shipped file lists every knob with its default: it parses, sets every
// knob from the file, and changes nothing. A knob added to the table but not
// to the file (or the reverse, or a different default) fails here.
TEST(ConfigLoad, ShippedFileHoldsExactlyTheDefaults) {
  std::string shipped = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";
  FakeEnv env;
  env.set("NCCOM_CONFIG", shipped);
  Config cfg = load_ok(host_options(env));
  Config defaults = load_ok(host_options(FakeEnv()));
  EXPECT_EQ(cfg.file(), shipped);
  EXPECT_EQ(cfg.cluster(), "");
  ASSERT_EQ(cfg.entries().size(), defaults.entries().size());
  for (std::size_t i = 0; i < cfg.entries().size(); ++i) {
    const Entry& e = cfg.entries()[i];
    EXPECT_EQ(e.source.kind, Kind::File) << e.key() << " is missing from " << shipped;
    EXPECT_EQ(e.value, defaults.entries()[i].value) << e.key();
  }
}

// The shipped file states the range of every duration knob in the comment
// above it (as "<min> to <max>"), so the file cannot drift from the table.
TEST(ConfigLoad, ShippedFileStatesTheRangeOfEveryDurationKnob) {
  std::ifstream in(std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml");
  ASSERT_TRUE(in);
  std::string table;    // the current [section]
  std::string comment;  // the comment lines since the last key, joined by spaces
  std::map<std::string, std::string> comments;  // key -> its comment
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("[")) {
      table = line.substr(1, line.find(']') - 1);
      comment.clear();
    } else if (line.starts_with("# ")) {
      comment += line.substr(2) + " ";
    } else if (const auto eq = line.find(" = "); eq != std::string::npos) {
      comments[table + "." + line.substr(0, eq)] = comment;
      comment.clear();
    }
  }
  int checked = 0;
  for (const Knob& knob : host_knobs()) {
    if (knob.type != Type::Int || !knob.key.ends_with("_ms")) continue;
    const std::string key(knob.key);
    ASSERT_EQ(comments.count(key), 1u) << key;
    const std::string range = std::to_string(knob.min) + " to " + std::to_string(knob.max);
    EXPECT_NE(comments[key].find(range), std::string::npos)
        << key << ": the comment does not say " << range << ": " << comments[key];
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

// The maximum of every duration knob is itself accepted, from the file and
// from the environment.
TEST(ConfigLoad, DurationKnobsAcceptTheirMaximum) {
  TempDir dir;
  int checked = 0;
  for (const Knob& knob : host_knobs()) {
    if (knob.type != Type::Int || !knob.key.ends_with("_ms")) continue;
    const std::string key(knob.key);
    FakeEnv from_file;
    from_file.set("NCCOM_CONFIG",
                  dir.write("max.toml", key + " = " + std::to_string(knob.max) + "\n"));
    EXPECT_EQ(load_ok(options(from_file)).get_int(key), knob.max) << key;
    for (std::string_view var : knob.env) {
      FakeEnv from_env;
      from_env.set(std::string(var), std::to_string(knob.max));
      EXPECT_EQ(load_ok(options(from_env)).get_int(key), knob.max) << var;
    }
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(ConfigLoad, ShippedLoopbackDevCluster) {
  std::string file = std::string(NCCOM_SOURCE_DIR) + "/config/clusters/loopback-dev.toml";
  FakeEnv env;
  env.set("NCCOM_CONFIG", file);
  Config cfg = load_ok(options(env));
  EXPECT_EQ(cfg.cluster(), "loopback-dev");
  EXPECT_EQ(cfg.cluster_origin(), file + ":8:11");
  EXPECT_EQ(cfg.get_string("log.level"), "INFO");
  EXPECT_EQ(cfg.get_string("bootstrap.socket_ifname"), "lo");
  EXPECT_EQ(cfg.get_string("bootstrap.socket_family"), "AF_INET");
  EXPECT_EQ(cfg.get_string("net.plugin"), "socket");
  EXPECT_EQ(cfg.entry("net.plugin").source.kind, Kind::Cluster);
  EXPECT_EQ(cfg.entry("net.plugin").source.cluster, "loopback-dev");
}

TEST(ConfigLoad, FileValuesCarryFileLineAndColumn) {
  TempDir dir;
  std::string path = dir.write("nccom.toml",
                               "# comment\n"
                               "[log]\n"
                               "level = \"info\"\n"
                               "\n"
                               "[demo.socket]\n"
                               "nthreads = 4\n"
                               "[net]\n"
                               "use_runtime_plugin = false\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  Config cfg = load_ok(options(env));
  EXPECT_EQ(cfg.get_string("log.level"), "info");  // kept verbatim
  EXPECT_EQ(cfg.get_int("demo.socket.nthreads"), 4);
  EXPECT_FALSE(cfg.get_bool("net.use_runtime_plugin"));
  const Source& level = cfg.entry("log.level").source;
  EXPECT_EQ(level.kind, Kind::File);
  EXPECT_EQ(level.file, path);
  EXPECT_EQ(level.line, 3);
  EXPECT_EQ(level.column, 9);
  EXPECT_EQ(level.to_string(), path + ":3");
  EXPECT_EQ(cfg.entry("demo.socket.nthreads").source.to_string(), path + ":6");
  EXPECT_EQ(cfg.entry("net.use_runtime_plugin").source.line, 8);
  EXPECT_EQ(cfg.entry("log.subsys").source.kind, Kind::Default);
}

TEST(ConfigLoad, DottedKeysAtTopLevelWork) {
  TempDir dir;
  std::string path = dir.write("nccom.toml", "demo.socket.nsocks_per_thread = 8\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  EXPECT_EQ(load_ok(options(env)).get_int("demo.socket.nsocks_per_thread"), 8);
}

constexpr const char* kClusterFile =
    "cluster = \"b\"\n"      // 1
    "[net]\n"                // 2
    "plugin = \"top\"\n"     // 3
    "[demo.socket]\n"        // 4
    "nthreads = 2\n"         // 5
    "[clusters.a.net]\n"     // 6
    "plugin = \"from-a\"\n"  // 7
    "[clusters.b.net]\n"     // 8
    "plugin = \"from-b\"\n"  // 9
    "[clusters.b.log]\n"     // 10
    "level = \"TRACE\"\n";   // 11

TEST(ConfigLoad, ClusterFromFileKeyOverridesTopLevel) {
  TempDir dir;
  std::string path = dir.write("nccom.toml", kClusterFile);
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  Config cfg = load_ok(options(env));
  EXPECT_EQ(cfg.cluster(), "b");
  EXPECT_EQ(cfg.cluster_origin(), path + ":1:11");
  EXPECT_EQ(cfg.get_string("net.plugin"), "from-b");
  EXPECT_EQ(cfg.entry("net.plugin").source.to_string(), "cluster b " + path + ":9");
  EXPECT_EQ(cfg.get_string("log.level"), "TRACE");
  EXPECT_EQ(cfg.get_int("demo.socket.nthreads"), 2);  // not in the section: top level
  EXPECT_EQ(cfg.entry("demo.socket.nthreads").source.kind, Kind::File);
}

TEST(ConfigLoad, NccomClusterBeatsFileKey) {
  TempDir dir;
  std::string path = dir.write("nccom.toml", kClusterFile);
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("NCCOM_CLUSTER", "a");
  Config cfg = load_ok(options(env));
  EXPECT_EQ(cfg.cluster(), "a");
  EXPECT_EQ(cfg.cluster_origin(), "NCCOM_CLUSTER");
  EXPECT_EQ(cfg.get_string("net.plugin"), "from-a");
  EXPECT_EQ(cfg.get_string("log.level"), "WARN");  // b's section is not applied
}

TEST(ConfigLoad, EnvironmentBeatsClusterAndFile) {
  TempDir dir;
  std::string path = dir.write("nccom.toml", kClusterFile);
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("NCCL_NET_PLUGIN", "from-env").set("NCCL_SOCKET_NTHREADS", "7");
  Config cfg = load_ok(options(env));
  EXPECT_EQ(cfg.get_string("net.plugin"), "from-env");
  EXPECT_EQ(cfg.entry("net.plugin").source.to_string(), "env NCCL_NET_PLUGIN");
  EXPECT_EQ(cfg.get_int("demo.socket.nthreads"), 7);
  EXPECT_EQ(cfg.get_string("log.level"), "TRACE");  // untouched by the environment
}

TEST(ConfigLoad, FirstSetEnvironmentVariableWins) {
  FakeEnv both;
  both.set("CCOM_SOCKET_IFNAME", "eth").set("NCCL_SOCKET_IFNAME", "ib");
  Config cfg = load_ok(options(both));
  EXPECT_EQ(cfg.get_string("bootstrap.socket_ifname"), "eth");
  EXPECT_EQ(cfg.entry("bootstrap.socket_ifname").source.env_var, "CCOM_SOCKET_IFNAME");

  FakeEnv second_only;
  second_only.set("NCCL_SOCKET_IFNAME", "ib").set("CCOM_SOCKET_IFNAME", "");
  Config cfg2 = load_ok(options(second_only));
  EXPECT_EQ(cfg2.get_string("bootstrap.socket_ifname"), "ib");
  EXPECT_EQ(cfg2.entry("bootstrap.socket_ifname").source.env_var, "NCCL_SOCKET_IFNAME");
}

TEST(ConfigLoad, EmptyEnvironmentValueCountsAsUnset) {
  TempDir dir;
  std::string path = dir.write("nccom.toml", "[net]\nplugin = \"file\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("NCCL_NET_PLUGIN", "").set("NCCOM_CLUSTER", "");
  Config cfg = load_ok(options(env));
  EXPECT_EQ(cfg.get_string("net.plugin"), "file");
  EXPECT_EQ(cfg.cluster(), "");
}

TEST(ConfigLoad, EnvironmentBooleanSpellings) {
  struct Case {
    const char* text;
    bool expected;
  };
  for (Case c : {Case{"1", true}, Case{"YES", true}, Case{"On", true}, Case{"true", true},
                 Case{"0", false}, Case{"no", false}, Case{"OFF", false}, Case{"False", false},
                 Case{"anything", true}}) {  // demo.socket.debug: set means on
    FakeEnv env;
    env.set("DEMO_DEBUG", c.text);
    EXPECT_EQ(load_ok(options(env)).get_bool("demo.socket.debug"), c.expected) << c.text;
  }
}

TEST(ConfigLoad, EnvironmentEnumIsCaseInsensitiveAndVerbatim) {
  FakeEnv env;
  env.set("NCCL_DEBUG", "info").set("NEURON_CCOM_SOCK_TIMEOUT", "+2500");
  Config cfg = load_ok(options(env));
  EXPECT_EQ(cfg.get_string("log.level"), "info");
  EXPECT_EQ(cfg.get_int("bootstrap.socket_timeout_ms"), 2500);
}

}  // namespace
}  // namespace nccom::config::testing
