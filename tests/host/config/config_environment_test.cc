// Settings the configuration will not use: logging variables with bad values
// fall back (with the line the operator sees), misspelt and unread variables
// are named, and [plugins.<name>] sections that name no plugin get a
// did-you-mean.
#include "config/environment.h"
#include "config/plugin_knobs.h"
#include "config/value.h"
#include "config_test_util.h"

#include <algorithm>

namespace nccom::config::testing {
namespace {

const std::string kLevels =
    "expected one of \"NONE\", \"VERSION\", \"WARN\", \"INFO\", \"ABORT\", \"TRACE\" (any letter "
    "case)";
const std::string kSubsystems =
    "expected a comma-separated list of INIT, COLL, P2P, SHM, NET, GRAPH, TUNING, ENV, ALLOC, "
    "CALL, PROXY, NVLS, BOOTSTRAP, REG, ALL (any letter case), a leading ^ meaning all but those";

// NCCL's debug init ignores a level it does not know: so does the
// configuration, with one line naming the variable, the value, what is
// accepted and what is used instead.
TEST(ConfigFallback, UnknownDebugLevelFallsBackToTheDefault) {
  FakeEnv env;
  env.set("NCCL_DEBUG", "verbose");
  const Config config = load_ok(host_options(env));
  EXPECT_EQ(config.get_string("log.level"), "WARN");
  EXPECT_EQ(config.entry("log.level").source.kind, Source::Kind::Default);
  ASSERT_EQ(config.env_fallbacks().size(), 1u);
  const EnvFallback& f = config.env_fallbacks()[0];
  EXPECT_EQ(f.variable, "NCCL_DEBUG");
  EXPECT_EQ(f.value, "verbose");
  EXPECT_EQ(f.message, "NCCL_DEBUG=\"verbose\" is not valid: " + kLevels +
                           "; ignored, using \"WARN\" (the default of log.level)");
}

TEST(ConfigFallback, TheFileOrTheClusterSectionDecidesInstead) {
  TempDir dir;
  const std::string path = dir.write("nccom.toml",
                                     "cluster = \"c\"\n"
                                     "[log]\n"
                                     "level = \"INFO\"\n"
                                     "stream = \"stderr\"\n"
                                     "[clusters.c.log]\n"
                                     "level = \"TRACE\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("NCCL_DEBUG", "loud").set("NCCOM_DEBUG_STREAM", "stdrr");
  const Config config = load_ok(host_options(env));
  EXPECT_EQ(config.get_string("log.level"), "TRACE");
  EXPECT_EQ(config.get_string("log.stream"), "stderr");
  ASSERT_EQ(config.env_fallbacks().size(), 2u);
  EXPECT_EQ(config.env_fallbacks()[0].message, "NCCL_DEBUG=\"loud\" is not valid: " + kLevels +
                                                   "; ignored, using \"TRACE\" (log.level at " +
                                                   path + ":6, cluster c)");
  EXPECT_EQ(config.env_fallbacks()[1].message,
            "NCCOM_DEBUG_STREAM=\"stdrr\" is not valid: expected one of \"stdout\", \"stderr\" "
            "(any letter case); ignored, using \"stderr\" (log.stream at " +
                path + ":4)");
}

// Unknown subsystem names are dropped, the known ones of the same list kept.
TEST(ConfigFallback, UnknownSubsystemsAreDroppedKnownOnesKept) {
  FakeEnv env;
  env.set("NCCL_DEBUG_SUBSYS", " init, FOO ,net,BAR");
  const Config config = load_ok(host_options(env));
  EXPECT_EQ(config.get_string("log.subsys"), "init,net");
  EXPECT_EQ(config.entry("log.subsys").source.env_var, "NCCL_DEBUG_SUBSYS");
  ASSERT_EQ(config.env_fallbacks().size(), 1u);
  EXPECT_EQ(config.env_fallbacks()[0].message,
            "NCCL_DEBUG_SUBSYS=\" init, FOO ,net,BAR\": \"FOO\", \"BAR\" are not known names: " +
                kSubsystems +
                "; dropped, using \"init,net\" (the known names of NCCL_DEBUG_SUBSYS)");
}

TEST(ConfigFallback, NoKnownSubsystemLeftMeansTheLowerLayer) {
  FakeEnv env;
  env.set("NCCL_DEBUG_SUBSYS", "FOO");
  const Config config = load_ok(host_options(env));
  EXPECT_EQ(config.get_string("log.subsys"), "INIT,ENV,BOOTSTRAP");
  ASSERT_EQ(config.env_fallbacks().size(), 1u);
  EXPECT_EQ(config.env_fallbacks()[0].message,
            "NCCL_DEBUG_SUBSYS=\"FOO\": \"FOO\" is not a known name: " + kSubsystems +
                "; ignored, using \"INIT,ENV,BOOTSTRAP\" (the default of log.subsys)");

  // "^FOO": every subsystem but none, as NCCL reads it.
  FakeEnv inverted;
  inverted.set("NCCL_DEBUG_SUBSYS", "^FOO,net");
  EXPECT_EQ(load_ok(host_options(inverted)).get_string("log.subsys"), "^net");
  FakeEnv caret;
  caret.set("NCCL_DEBUG_SUBSYS", "^FOO");
  EXPECT_EQ(load_ok(host_options(caret)).get_string("log.subsys"), "^");
}

TEST(ConfigFallback, GoodValuesAreUsedAsWritten) {
  FakeEnv env;
  env.set("NCCL_DEBUG", "info")
      .set("NCCL_DEBUG_SUBSYS", "^ init , NET,")
      .set("NCCOM_DEBUG_STREAM", "STDERR");
  const Config config = load_ok(host_options(env));
  EXPECT_TRUE(config.env_fallbacks().empty());
  EXPECT_EQ(config.get_string("log.subsys"), "^ init , NET,");
}

// In the file the same values stay errors: nccom-config --check catches them.
TEST(ConfigFallback, BadValuesInTheFileStayErrors) {
  TempDir dir;
  const std::string path = dir.write("nccom.toml",
                                     "[log]\n"
                                     "level = \"verbose\"\n"
                                     "subsys = \"INIT,FOO\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  EXPECT_EQ(load_error(host_options(env)),
            path + ":2:9: log.level: " + kLevels + ", got string \"verbose\"\n" + path +
                ":3:10: log.subsys: " + kSubsystems + ", got string \"INIT,FOO\"");
}

// Other knobs keep failing on a bad environment value.
TEST(ConfigFallback, OnlyKnobsThatSaySoFallBack) {
  FakeEnv env;
  env.set("NCCOM_BOOTSTRAP_PROTOCOL", "ring").set("NCCL_DEBUG", "x");
  EXPECT_EQ(load_error(host_options(env)),
            "NCCOM_BOOTSTRAP_PROTOCOL=\"ring\": expected one of \"auto\", \"flat\", "
            "\"hierarchical\" (any letter case) (for bootstrap.protocol)");
}

TEST(ConfigFallback, NameListDeclarationMistakes) {
  constexpr static std::string_view kNames[] = {"A"};
  constexpr static Knob kBad[] = {
      {.key = "x.a", .type = Type::Int, .default_text = "1", .help = "Int.", .flags = kNameList},
      {.key = "x.b", .type = Type::String, .help = "No names.", .flags = kNameList},
      {.key = "x.c",
       .type = Type::String,
       .default_text = "B",
       .help = "Bad default.",
       .allowed = kNames,
       .flags = kNameList},
  };
  FakeEnv env;
  LoadOptions opts = host_options(env);
  opts.tables.push_back(kBad);
  EXPECT_EQ(load_error(opts),
            "knob table: \"x.a\": kNameList is only for string knobs\n"
            "knob table: \"x.b\": name list without allowed names\n"
            "knob table: \"x.c\": default \"B\" is not a comma-separated list of A, a leading ^ "
            "meaning all but those");
}

// ---- variables nothing reads

TEST(ConfigEnvNotes, MisspeltOnesGetTheClosestNameNcclOnesAreNamed) {
  const Config config = load_ok(host_options(FakeEnv()));
  const auto notes = environment_notes(
      knob_variables(config),
      {"NCCOM_BOOTSTRAP_PROTOKOL", "NCCL_ALGO", "HOME", "NCCOM_BOOTSTRAP_PROTOCOL", "CCOM_SOCKET",
       "NEURON_CCOM_SOCK_TIMEOUTS", "NCCOM_ZZZZZZZZZZZZZZZZZZZZZZZZ", "NCCL_ALGO"});
  ASSERT_EQ(notes.size(), 5u);
  EXPECT_EQ(note_text(notes[0]), "CCOM_SOCKET is not a variable nccom reads");
  EXPECT_EQ(note_text(notes[1]), "NCCL_ALGO is an NCCL setting nccom does not read");
  EXPECT_EQ(note_text(notes[2]),
            "NCCOM_BOOTSTRAP_PROTOKOL is not a variable nccom reads; did you mean "
            "NCCOM_BOOTSTRAP_PROTOCOL?");
  EXPECT_EQ(notes[3].name, "NCCOM_ZZZZZZZZZZZZZZZZZZZZZZZZ");
  EXPECT_EQ(notes[3].suggestion, "");
  EXPECT_EQ(note_text(notes[4]),
            "NEURON_CCOM_SOCK_TIMEOUTS is not a variable nccom reads; did you mean "
            "NEURON_CCOM_SOCK_TIMEOUT?");
}

// What nccom's own tools, the runtime and the test harness set is known.
TEST(ConfigEnvNotes, VariablesOfTheToolsRuntimeAndHarnessAreKnown) {
  const Config config = load_ok(host_options(FakeEnv()));
  for (const char* name :
       {"NCCOM_CONFIG", "NCCOM_CLUSTER", "NCCOM_TEST_CHILD", "NCCOM_TEST_STDERR_TTY",
        "NCCOM_TEST_DEBUG_KILL_RANK", "NCCOM_RAS_ADDR", "NCCOM_RAS_REGISTRY", "NCCOM_FAIL_ALLOC_AT",
        "NCCOM_STEP_LOG", "NCCOM_CCACHE", "NCCOM_LINT_CACHE", "NEURON_RT_ROOT_COMM_ID",
        "NEURON_RT_EMU_DEVICES", "CCOM_SOCKET_IFNAME", "NCCOM_DEBUG_STREAM", "NCCL_P2P_LEVEL"}) {
    EXPECT_TRUE(environment_notes(knob_variables(config), {name}).empty()) << name;
  }
}

// A plugin's variables are known once it is bound against the configuration.
TEST(ConfigEnvNotes, ABoundPluginsVariablesAreKnown) {
  const Config config = load_ok(host_options(FakeEnv()));
  const std::vector<std::string> set = {"NCCOM_DEMO_WIDTH"};
  ASSERT_EQ(environment_notes(knob_variables(config), set).size(), 1u);
  const char* const env[] = {"NCCOM_DEMO_WIDTH", nullptr};
  const nccom_knob_t knobs[] = {{"width", NCCOM_KNOB_INT, 0, "8", "Width.", 1, 64, nullptr, env}};
  const nccom_knob_table_t table{sizeof(nccom_knob_table_t), sizeof(nccom_knob_t), 1, 0, knobs};
  ASSERT_TRUE(PluginSection::bind(config, "demo", "test plugin demo", &table));
  EXPECT_TRUE(environment_notes(knob_variables(config), set).empty());
  const PluginClaims claims = config.plugin_claims();
  EXPECT_EQ(claims.sections.count("demo"), 1u);
  EXPECT_EQ(claims.variables.count("NCCOM_DEMO_WIDTH"), 1u);
  // A copy of the configuration shares the record.
  const Config copy = config;
  EXPECT_EQ(copy.plugin_claims().sections.count("demo"), 1u);
}

TEST(ConfigEnvNotes, EnvironNamesSkipEmptyValues) {
  char a[] = "A=1";
  char b[] = "B=";
  char c[] = "C==x";
  char* environ_like[] = {a, b, c, nullptr};
  EXPECT_EQ(environ_names(environ_like), (std::vector<std::string>{"A", "C"}));
}

// ---- [plugins.<name>] sections

TEST(ConfigSectionNotes, AMisspeltPluginSectionGetsTheClosestName) {
  TempDir dir;
  const std::string path = dir.write("nccom.toml",
                                     "[plugins.sockets]\n"
                                     "nthreads = 2\n"
                                     "nsocks_per_thread = 2\n"
                                     "[plugins.socket]\n"
                                     "nthreads = 2\n"
                                     "[plugins.elsewhere]\n"
                                     "width = 3\n"
                                     "[plugins.flat]\n"
                                     "width = 3\n"
                                     "[clusters.c.plugins.neurn]\n"
                                     "disable_verify = true\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  const Config config = load_ok(host_options(env));
  const auto notes = plugin_section_notes(config, {"flat"});
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0].plugin, "sockets");
  EXPECT_EQ(notes[0].section, "plugins.sockets");
  EXPECT_EQ(notes[0].where, path + ":2");
  EXPECT_EQ(notes[0].suggestion, "socket");
  EXPECT_EQ(section_note_text(notes[0]),
            "[plugins.sockets] (" + path +
                ":2) names no plugin nccom can find (\"sockets\" is not loaded, in the plugin "
                "directories or shipped with nccom), so its settings are not used; did you mean "
                "[plugins.socket]?");
  EXPECT_EQ(notes[1].section, "plugins.elsewhere");
  EXPECT_EQ(notes[1].suggestion, "");
  EXPECT_EQ(section_note_text(notes[1]).find("did you mean"), std::string::npos);
  EXPECT_EQ(notes[2].section, "clusters.c.plugins.neurn");
  EXPECT_NE(section_note_text(notes[2]).find("did you mean [clusters.c.plugins.neuron]?"),
            std::string::npos)
      << section_note_text(notes[2]);

  // Without "flat" among the plugins found, it is reported too; a short name
  // is not taken for an unrelated one.
  const auto without = plugin_section_notes(config, {});
  ASSERT_EQ(without.size(), 4u);
  EXPECT_EQ(without[2].plugin, "flat");
  EXPECT_EQ(without[2].suggestion, "");
}

// The names plugin files are loaded by: libnccom-<name>.so and
// libnccom-net-<name>.so (net.plugin's lookup).
TEST(ConfigSectionNotes, PluginNamesInDirectoriesFollowTheLoadersFileNames) {
  TempDir one;
  TempDir two;
  one.write("libnccom-flat.so", "");
  one.write("libnccom-net-tcp_example.so", "");
  one.write("libother.so", "");
  two.write("libnccom-.so", "");
  two.write("libnccom-direct.so", "");
  two.write("README", "");
  EXPECT_EQ(plugin_names_in({one.path(""), two.path(""), "/nonexistent/dir"}),
            (std::set<std::string>{"direct", "flat", "net-tcp_example", "tcp_example"}));
  const auto shipped = shipped_plugin_names();
  for (const char* name : {"socket", "ofi", "neuron", "nccl", "p2p", "net_neuron"})
    EXPECT_NE(std::find(shipped.begin(), shipped.end(), name), shipped.end()) << name;
}

}  // namespace
}  // namespace nccom::config::testing
