// Reading a loaded Config: getters, misuse, sections, text, describe().
#include "config_test_util.h"

#include <stdexcept>

namespace nccom::config::testing {
namespace {

Config loaded_with_env(FakeEnv& env) { return load_ok(options(env)); }

TEST(ConfigAccess, WrongTypeIsALogicError) {
  FakeEnv env;
  Config cfg = loaded_with_env(env);
  try {
    (void)cfg.get_int("log.level");
    FAIL() << "get_int on an enum knob did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "nccom config: log.level is an enum knob, read with get_int");
  }
  EXPECT_THROW((void)cfg.get_bool("demo.socket.nthreads"), std::logic_error);
  EXPECT_THROW((void)cfg.get_string("net.use_runtime_plugin"), std::logic_error);
}

TEST(ConfigAccess, UndeclaredKeyIsALogicError) {
  FakeEnv env;
  Config cfg = loaded_with_env(env);
  EXPECT_FALSE(cfg.has("net.plugins"));
  EXPECT_TRUE(cfg.has("net.plugin"));
  try {
    (void)cfg.get_string("net.plugins");
    FAIL() << "an undeclared key did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "nccom config: no knob named net.plugins is registered");
  }
  EXPECT_THROW((void)cfg.get_text("net"), std::logic_error);
}

TEST(ConfigAccess, TextOfEveryType) {
  FakeEnv env;
  env.set("NCCL_SOCKET_NTHREADS", "12").set("DEMO_DEBUG", "1");
  Config cfg = loaded_with_env(env);
  EXPECT_EQ(cfg.get_text("demo.socket.nthreads"), "12");
  EXPECT_EQ(cfg.get_text("demo.socket.debug"), "true");
  EXPECT_EQ(cfg.get_text("log.subsys"), "INIT,ENV,BOOTSTRAP");
  EXPECT_EQ(cfg.get_text("net.plugin"), "");
}

TEST(ConfigAccess, SectionHoldsTheKnobsUnderAPrefix) {
  FakeEnv env;
  env.set("NCCL_NSOCKS_PERTHREAD", "4");
  Config cfg = loaded_with_env(env);
  std::vector<Entry> net = cfg.section("net");
  // Every knob under net., in table order (the count follows the table).
  std::size_t declared = 0;
  for (const Knob& knob : host_knobs()) declared += knob.key.starts_with("net.") ? 1 : 0;
  ASSERT_EQ(net.size(), declared);
  EXPECT_EQ(net[0].key(), "net.plugin");
  std::vector<Entry> demo = cfg.section("demo");
  ASSERT_EQ(demo.size(), 3u);
  EXPECT_EQ(demo[0].key(), "demo.socket.nsocks_per_thread");
  EXPECT_EQ(demo[0].text(), "4");
  EXPECT_EQ(demo[1].key(), "demo.socket.nthreads");
  EXPECT_EQ(demo[2].key(), "demo.socket.debug");
  EXPECT_EQ(cfg.section("demo.socket").size(), 3u);
  EXPECT_EQ(cfg.section("net.plugin").size(), 1u);
  EXPECT_TRUE(cfg.section("ne").empty());  // whole segments only
  EXPECT_TRUE(cfg.section("nothing").empty());
}

TEST(ConfigAccess, DescribeListsEveryKnobWithValueSourceAndHelp) {
  TempDir dir;
  std::string path = dir.write("nccom.toml",
                               "cluster = \"dev\"\n"
                               "[demo.socket]\n"
                               "nthreads = 3\n"
                               "[clusters.dev.log]\n"
                               "subsys = \"NET\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("NCCL_DEBUG", "WARN");
  Config cfg = loaded_with_env(env);
  std::string text = cfg.describe();
  EXPECT_NE(text.find("  file:    " + path + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  cluster: dev (from " + path + ":1:11)\n"), std::string::npos) << text;
  for (const Knob& knob : host_knobs()) {
    EXPECT_NE(text.find("\n" + std::string(knob.key) + " "), std::string::npos) << knob.key;
    // The first words of the help text appear (the rest may be wrapped).
    std::string_view help = knob.help.substr(0, knob.help.find(' ', 20));
    EXPECT_NE(text.find(help), std::string::npos) << knob.key;
  }
  auto line_of = [&](const std::string& key) {
    std::size_t at = text.find("\n" + key + " ");
    return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(line_of("demo.socket.nthreads").find("3"), std::string::npos);
  EXPECT_NE(line_of("demo.socket.nthreads").find(path + ":3"), std::string::npos);
  EXPECT_NE(line_of("log.subsys").find("\"NET\""), std::string::npos);
  EXPECT_NE(line_of("log.subsys").find("cluster dev " + path + ":5"), std::string::npos);
  EXPECT_NE(line_of("log.level").find("env NCCL_DEBUG"), std::string::npos);
  EXPECT_NE(line_of("log.file").find("\"\""), std::string::npos);
  EXPECT_NE(line_of("log.file").find("default"), std::string::npos);
  EXPECT_NE(text.find("[an integer in 1..16; env NCCL_SOCKET_NTHREADS]"), std::string::npos);
  EXPECT_NE(text.find("env CCOM_SOCKET_IFNAME, then NCCL_SOCKET_IFNAME"), std::string::npos);
}

// What an INFO line says set a value: the variable NCCL names itself is
// "environment" (NCCL's words), another variable of the knob is named, a
// file value is its file and line, a cluster value says which cluster.
TEST(ConfigAccess, SetByNamesTheRealSource) {
  TempDir dir;
  std::string path = dir.write("nccom.toml",
                               "cluster = \"dev\"\n"
                               "[bootstrap]\n"
                               "socket_family = \"AF_INET6\"\n"
                               "[clusters.dev.bootstrap]\n"
                               "socket_family = \"AF_INET\"\n"
                               "[log]\n"
                               "subsys = \"NET\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("CCOM_SOCKET_IFNAME", "lo").set("NCCL_DEBUG", "INFO");
  Config cfg = loaded_with_env(env);
  EXPECT_EQ(cfg.entry("bootstrap.socket_ifname").source.set_by("NCCL_SOCKET_IFNAME"),
            "environment CCOM_SOCKET_IFNAME");
  EXPECT_EQ(cfg.entry("log.level").source.set_by("NCCL_DEBUG"), "environment");
  EXPECT_EQ(cfg.entry("bootstrap.socket_family").source.set_by("NCCL_SOCKET_FAMILY"),
            path + ":5 (cluster dev)");
  EXPECT_EQ(cfg.entry("log.subsys").source.set_by("NCCL_DEBUG_SUBSYS"), path + ":7");
  EXPECT_EQ(cfg.entry("log.file").source.set_by("NCCL_DEBUG_FILE"), "default");
}

TEST(ConfigAccess, DescribeWithoutFileOrCluster) {
  FakeEnv env;
  std::string text = loaded_with_env(env).describe();
  EXPECT_NE(text.find("  file:    none (built-in defaults)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  cluster: none\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace nccom::config::testing
