// PluginSection: a plugin's C knob table (nccom/knob.h) checked and resolved
// against the configuration — every way a table can be broken, and the
// layering of file, cluster section and environment.
#include "config/plugin_knobs.h"

#include "config_test_util.h"

#include <cstring>
#include <vector>

namespace nccom::config::testing {
namespace {

const char* const kEnvWidth[] = {"DEMO_WIDTH", "DEMO_WIDTH_FALLBACK", nullptr};
const char* const kModes[] = {"fast", "safe", nullptr};

const nccom_knob_t kGood[] = {
    {"width", NCCOM_KNOB_INT, 0, "8", "Width in lanes.", 1, 64, nullptr, kEnvWidth},
    {"mode", NCCOM_KNOB_ENUM, NCCOM_KNOB_CASE_INSENSITIVE, "safe", "Mode.", 0, 0, kModes, nullptr},
    {"verbose", NCCOM_KNOB_BOOL, 0, "false", "Verbose.", 0, 0, nullptr, nullptr},
    {"label", NCCOM_KNOB_STRING, 0, nullptr, "Label.", 0, 0, nullptr, nullptr},
};

nccom_knob_table_t table_of(const nccom_knob_t* knobs, std::uint32_t count) {
  return nccom_knob_table_t{sizeof(nccom_knob_table_t), sizeof(nccom_knob_t), count, 0, knobs};
}

Config loaded(const FakeEnv& env) { return load_ok(host_options(env)); }

Result<PluginSection> bind_good(const Config& cfg) {
  const nccom_knob_table_t table = table_of(kGood, 4);
  return PluginSection::bind(cfg, "demo", "test plugin demo", &table);
}

std::string bind_error(const nccom_knob_table_t* table, const std::string& name = "demo") {
  auto section = PluginSection::bind(loaded(FakeEnv()), name, "test plugin demo", table);
  EXPECT_FALSE(section);
  if (section) return {};
  EXPECT_EQ(section.error().status, NRT_INVALID);
  return section.error().message;
}

TEST(PluginKnobs, DefaultsAndDescription) {
  const Config cfg = loaded(FakeEnv());
  auto section = bind_good(cfg);
  ASSERT_TRUE(section) << section.error().message;
  ASSERT_EQ(section->entries().size(), 4u);
  EXPECT_EQ(section->entries()[0].key(), "plugins.demo.width");
  EXPECT_EQ(section->find("width")->text(), "8");
  EXPECT_EQ(section->find("mode")->text(), "safe");
  EXPECT_EQ(section->find("verbose")->text(), "false");
  EXPECT_EQ(section->find("label")->text(), "");
  EXPECT_EQ(section->find("nothing"), nullptr);
  const std::string text = section->describe("test plugin demo");
  EXPECT_NE(text.find("plugin demo: test plugin demo\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[an integer in 1..64; env DEMO_WIDTH, then DEMO_WIDTH_FALLBACK]"),
            std::string::npos)
      << text;
}

TEST(PluginKnobs, FileClusterAndEnvironmentAreLayered) {
  TempDir dir;
  const std::string path = dir.write("nccom.toml",
                                     "cluster = \"a\"\n"            // 1
                                     "[clusters.a.plugins.demo]\n"  // 2
                                     "width = 16\n"                 // 3
                                     "[plugins.demo]\n"             // 4
                                     "width = 4\n"                  // 5
                                     "mode = \"FAST\"\n"            // 6
                                     "verbose = true\n"             // 7
                                     "[clusters.b.plugins.demo]\n"  // 8
                                     "label = \"only in b\"\n");    // 9
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("DEMO_WIDTH_FALLBACK", "32").set("DEMO_WIDTH", "");
  const Config cfg = loaded(env);
  auto section = bind_good(cfg);
  ASSERT_TRUE(section) << section.error().message;
  // The first variable is empty, so the second one wins (as for host knobs).
  EXPECT_EQ(section->find("width")->text(), "32");
  EXPECT_EQ(section->find("width")->source.to_string(), "env DEMO_WIDTH_FALLBACK");
  EXPECT_EQ(section->find("mode")->text(), "FAST");
  EXPECT_EQ(section->find("mode")->source.to_string(), path + ":6");
  EXPECT_EQ(section->find("verbose")->text(), "true");
  EXPECT_EQ(section->find("label")->text(), "") << "cluster b is not active";

  FakeEnv no_env;
  no_env.set("NCCOM_CONFIG", path);
  auto from_file = bind_good(loaded(no_env));
  ASSERT_TRUE(from_file) << from_file.error().message;
  EXPECT_EQ(from_file->find("width")->text(), "16") << "the cluster section beats the top level";
  EXPECT_EQ(from_file->find("width")->source.to_string(), "cluster a " + path + ":3");
}

TEST(PluginKnobs, EveryBadValueIsReportedWithItsPlace) {
  TempDir dir;
  const std::string path = dir.write("nccom.toml",
                                     "[plugins.demo]\n"             // 1
                                     "width = 65\n"                 // 2
                                     "mode = \"slow\"\n"            // 3
                                     "verbose = 1\n"                // 4
                                     "widht = 3\n"                  // 5
                                     "deep = { x = 1 }\n"           // 6
                                     "[clusters.z.plugins.demo]\n"  // 7
                                     "label = 1.5\n");              // 8
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("DEMO_WIDTH", "wide");
  auto section = bind_good(loaded(env));
  ASSERT_FALSE(section);
  const std::string& m = section.error().message;
  EXPECT_EQ(m,
            "test plugin demo is not used: its settings have problems:\n"
            "  " +
                path +
                ":2:9: plugins.demo.width: expected an integer in 1..64, got integer 65\n"
                "  " +
                path +
                ":3:8: plugins.demo.mode: expected one of \"fast\", \"safe\" (any letter "
                "case), got string \"slow\"\n"
                "  " +
                path +
                ":4:11: plugins.demo.verbose: expected a boolean, got integer 1\n"
                "  " +
                path +
                ":5:9: unknown key \"plugins.demo.widht\" (test plugin demo declares: "
                "label, mode, verbose, width); did you mean \"plugins.demo.width\"?\n"
                "  " +
                path +
                ":6:8: unknown key \"plugins.demo.deep\" (test plugin demo declares: "
                "label, mode, verbose, width)\n"
                "  " +
                path +
                ":8:9: clusters.z.plugins.demo.label: expected a string, got float 1.5\n"
                "  DEMO_WIDTH=\"wide\": expected an integer in 1..64 (for plugins.demo.width)")
      << m;
}

TEST(PluginKnobs, AnotherPluginsSettingsAreLeftAlone) {
  TempDir dir;
  const std::string path = dir.write("nccom.toml", "[plugins.other]\nanything = 1\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  const Config cfg = loaded(env);
  ASSERT_EQ(cfg.plugin_settings().size(), 1u);
  EXPECT_EQ(cfg.plugin_settings()[0].plugin, "other");
  EXPECT_TRUE(bind_good(cfg));
  EXPECT_NE(cfg.describe().find("plugins.other.anything = integer 1  (" + path + ":2)"),
            std::string::npos)
      << cfg.describe();
}

TEST(PluginKnobs, APluginSectionMustBeATable) {
  TempDir dir;
  const std::string path = dir.write("nccom.toml", "[plugins]\ndemo = 3\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  EXPECT_EQ(load_error(host_options(env)),
            path +
                ":2:8: plugins.demo: expected a table of the settings of plugin \"demo\", got "
                "integer 3");
}

TEST(PluginKnobs, ThePluginsSearchPathIsStillAHostKey) {
  TempDir dir;
  const std::string path = dir.write("nccom.toml", "[plugins]\nsearch_path = \"/opt/p\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  const Config cfg = loaded(env);
  EXPECT_EQ(cfg.get_string("plugins.search_path"), "/opt/p");
  EXPECT_TRUE(cfg.plugin_settings().empty());
  EXPECT_FALSE(valid_plugin_section_name("search_path"));
}

// A plugin's knob is set in its own section only: the same key under a host
// table is an unknown key, not a setting that lands somewhere else.
TEST(PluginKnobs, APluginsKeyUnderAHostTableIsUnknown) {
  TempDir dir;
  FakeEnv env;
  env.set("NCCOM_CONFIG", dir.write("nccom.toml", "[net.socket]\nnthreads = 3\n"));
  const std::string refused = load_error(host_options(env));
  EXPECT_NE(refused.find("unknown key \"net.socket\""), std::string::npos) << refused;
  env.set("NCCOM_CONFIG", dir.write("good.toml", "[plugins.socket]\nnthreads = 3\n"));
  const Config cfg = loaded(env);
  ASSERT_EQ(cfg.plugin_settings().size(), 1u);
  EXPECT_EQ(cfg.plugin_settings()[0].plugin, "socket");
  EXPECT_EQ(cfg.plugin_settings()[0].key, "nthreads");
  EXPECT_EQ(cfg.plugin_settings()[0].shown, "plugins.socket.nthreads");
}

TEST(PluginKnobs, BrokenTablesAreThePluginsFault) {
  const std::string head =
      "test plugin demo: its knob table (nccom_knob_table_t) is invalid; the plugin must be "
      "fixed:\n  ";
  nccom_knob_table_t t = table_of(kGood, 4);
  t.struct_size = 8;
  EXPECT_EQ(bind_error(&t), head + "struct_size 8 is smaller than a knob table (24)");
  t = table_of(kGood, 4);
  t.knob_size = 40;
  EXPECT_EQ(bind_error(&t), head +
                                "knob_size 40 is not a size of nccom_knob_t (at least 64, a "
                                "multiple of 8)");
  t = table_of(kGood, NCCOM_KNOB_MAX_COUNT + 1);
  EXPECT_EQ(bind_error(&t), head + "count 129 is more than 128 knobs");
  t = table_of(nullptr, 2);
  EXPECT_EQ(bind_error(&t), head + "count is 2 but knobs is NULL");

  const auto one = [&](nccom_knob_t knob) {
    static std::vector<nccom_knob_t> keep;
    keep.assign(1, knob);
    nccom_knob_table_t single = table_of(keep.data(), 1);
    return bind_error(&single);
  };
  nccom_knob_t k = kGood[0];
  k.key = nullptr;
  EXPECT_EQ(one(k), head + "knob 0 has no key");
  k = kGood[0];
  k.key = "Width.x";
  EXPECT_NE(one(k).find("knob 0: key \"Width.x\" is not a lower-case name"), std::string::npos);
  k = kGood[0];
  k.type = 9;
  EXPECT_EQ(one(k), head +
                        "knob \"width\": type 9 is not an nccom_knob_type_t (1 bool, 2 int, "
                        "3 string, 4 enum)");
  k = kGood[0];
  k.flags = 0x10;
  EXPECT_EQ(one(k), head + "knob \"width\": unknown flag bits 16");
  k = kGood[0];
  k.help = nullptr;
  EXPECT_NE(one(k).find("knob \"width\": help is missing"), std::string::npos);
  std::string long_text(NCCOM_KNOB_MAX_TEXT + 10, 'a');
  k = kGood[0];
  k.help = long_text.c_str();
  EXPECT_NE(one(k).find("knob \"width\": help is missing or longer than 4096 bytes"),
            std::string::npos);
  static const char* const bad_env[] = {"1BAD", nullptr};
  k = kGood[0];
  k.env = bad_env;
  EXPECT_NE(one(k).find("env: entry 0 \"1BAD\" is not an environment variable name"),
            std::string::npos);
  static std::vector<const char*> endless(NCCOM_KNOB_MAX_LIST + 5, "X");
  k = kGood[0];
  k.env = endless.data();
  EXPECT_NE(one(k).find("env: more than 64 entries, or no NULL at the end"), std::string::npos);
  k = kGood[0];
  k.min = 10;
  k.max = 2;
  EXPECT_NE(one(k).find("\"plugins.demo.width\": min is greater than max"), std::string::npos);
  k = kGood[0];
  k.default_text = "99";
  EXPECT_NE(one(k).find("\"plugins.demo.width\": default \"99\" is not an integer in 1..64"),
            std::string::npos);
  k = kGood[1];
  k.allowed = nullptr;
  EXPECT_NE(one(k).find("enum without allowed values"), std::string::npos);
  k = kGood[2];
  k.allowed = kModes;
  EXPECT_NE(one(k).find("allowed values are only for enum knobs"), std::string::npos);

  const nccom_knob_t twice[] = {kGood[0], kGood[0]};
  t = table_of(twice, 2);
  EXPECT_NE(bind_error(&t).find("\"plugins.demo.width\": declared twice"), std::string::npos);
}

// An older plugin built with a smaller nccom_knob_t cannot exist yet; a newer
// one with a larger entry is read entry by entry at its own stride.
TEST(PluginKnobs, LargerKnobEntriesAreReadAtTheirStride) {
  struct Bigger {
    nccom_knob_t knob;
    std::uint64_t appended;
  };
  static const Bigger bigger[] = {{kGood[0], 1}, {kGood[2], 2}};
  const nccom_knob_table_t t{sizeof(nccom_knob_table_t), sizeof(Bigger), 2, 0, &bigger[0].knob};
  auto section = PluginSection::bind(loaded(FakeEnv()), "demo", "test plugin demo", &t);
  ASSERT_TRUE(section) << section.error().message;
  ASSERT_EQ(section->entries().size(), 2u);
  EXPECT_EQ(section->entries()[1].key(), "plugins.demo.verbose");
}

TEST(PluginKnobs, NamesThatCannotBeASection) {
  const nccom_knob_table_t t = table_of(kGood, 4);
  EXPECT_NE(bind_error(&t, "Demo-Plugin")
                .find("plugin name \"Demo-Plugin\" cannot name a "
                      "[plugins.<name>] section"),
            std::string::npos);
  // Without knobs such a plugin loads as it always did.
  auto none = PluginSection::bind(loaded(FakeEnv()), "Demo-Plugin", "test plugin", nullptr);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->entries().empty());
}

TEST(PluginKnobs, TheSectionOutlivesThePluginsStrings) {
  std::string key = "width";
  std::string help = "Width in lanes.";
  nccom_knob_t k = kGood[0];
  k.key = key.c_str();
  k.help = help.c_str();
  const nccom_knob_table_t t = table_of(&k, 1);
  auto section = PluginSection::bind(loaded(FakeEnv()), "demo", "test plugin demo", &t);
  ASSERT_TRUE(section) << section.error().message;
  std::memset(key.data(), 'x', key.size());  // the plugin's memory changes (or is unloaded)
  std::memset(help.data(), 'x', help.size());
  EXPECT_EQ(section->entries()[0].key(), "plugins.demo.width");
  EXPECT_EQ(section->entries()[0].knob->help, "Width in lanes.");
}

}  // namespace
}  // namespace nccom::config::testing
