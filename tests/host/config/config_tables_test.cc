// Knob tables: the host table's shape, component tables, and the checks that
// catch a component's declaration mistakes.
#include "config/value.h"
#include "config_test_util.h"

#include <chrono>
#include <cstdint>
#include <set>

namespace nccom::config::testing {
namespace {

TEST(ConfigTables, HostTableDeclaresTheRequiredKnobs) {
  std::set<std::string_view> keys;
  for (const Knob& knob : host_knobs()) keys.insert(knob.key);
  for (std::string_view key :
       {"log.level", "log.subsys", "log.file", "bootstrap.socket_timeout_ms",
        "bootstrap.socket_ifname", "bootstrap.socket_family", "bootstrap.root_comm_id",
        "net.plugin", "plugins.search_path", "topology.plugins"})
    EXPECT_EQ(keys.count(key), 1u) << key;
}

TEST(ConfigTables, HostHelpTextsAreSentences) {
  for (const Knob& knob : host_knobs()) {
    ASSERT_FALSE(knob.help.empty()) << knob.key;
    EXPECT_TRUE(knob.help.front() >= 'A' && knob.help.front() <= 'Z') << knob.key;
    EXPECT_EQ(knob.help.back(), '.') << knob.key;
    EXPECT_GT(knob.help.size(), 40u) << knob.key;
  }
}

// Every duration knob has a maximum of at most 24 hours, so a deadline
// steady_clock::now() + value cannot overflow (and so expire at once).
TEST(ConfigTables, EveryDurationKnobHasABoundedMaximum) {
  constexpr std::int64_t kDay = 24LL * 60 * 60 * 1000;
  int durations = 0;
  for (const Knob& knob : host_knobs()) {
    if (knob.type != Type::Int || !knob.key.ends_with("_ms")) continue;
    ++durations;
    EXPECT_GE(knob.min, 0) << knob.key;
    EXPECT_LE(knob.max, kDay) << knob.key;
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    const auto room = std::chrono::steady_clock::duration::max() - now;
    EXPECT_LT(std::chrono::milliseconds(knob.max), room) << knob.key;
  }
  EXPECT_GE(durations, 5);
}

constexpr std::string_view kPluginEnv[] = {"TEST_PLUGIN_DEPTH"};
constexpr std::string_view kModes[] = {"fast", "safe"};
constexpr Knob kPluginTable[] = {
    {.key = "plugin_x.depth",
     .env = kPluginEnv,
     .type = Type::Int,
     .default_text = "4",
     .help = "Queue depth.",
     .min = 1,
     .max = 8},
    {.key = "plugin_x.mode",
     .type = Type::Enum,
     .default_text = "safe",
     .help = "Mode.",
     .allowed = kModes},
};

TEST(ConfigTables, ComponentTablesLoadFromFileAndEnvironment) {
  TempDir dir;
  std::string path = dir.write("nccom.toml", "[plugin_x]\nmode = \"fast\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path).set("TEST_PLUGIN_DEPTH", "6");
  LoadOptions opts = host_options(env);
  opts.tables.push_back(kPluginTable);
  Config cfg = load_ok(opts);
  EXPECT_EQ(cfg.entries().size(), host_knobs().size() + 2);
  EXPECT_EQ(cfg.get_string("plugin_x.mode"), "fast");
  EXPECT_EQ(cfg.get_int("plugin_x.depth"), 6);
  std::vector<Entry> section = cfg.section("plugin_x");
  ASSERT_EQ(section.size(), 2u);
  EXPECT_EQ(section[0].key(), "plugin_x.depth");
}

TEST(ConfigTables, KeysOfUnregisteredComponentsAreUnknown) {
  TempDir dir;
  std::string path = dir.write("nccom.toml", "[plugin_x]\nmode = \"fast\"\n");
  FakeEnv env;
  env.set("NCCOM_CONFIG", path);
  EXPECT_EQ(load_error(options(env)),
            path + ":1:2: unknown key \"plugin_x\"; did you mean \"plugins\"?");
}

std::string table_error(std::vector<KnobTable> tables) {
  LoadOptions opts = options(FakeEnv());
  opts.tables = std::move(tables);
  return load_error(opts);
}

TEST(ConfigTables, DuplicateKeyAcrossTables) {
  constexpr static Knob kDup[] = {{.key = "net.plugin", .type = Type::String, .help = "Again."}};
  EXPECT_EQ(table_error({host_knobs(), kDup}), "knob table: \"net.plugin\": declared twice");
}

TEST(ConfigTables, EveryDeclarationMistakeIsReported) {
  constexpr static std::string_view kNone[] = {""};
  constexpr static Knob kBad[] = {
      {.key = "Bad.Key", .type = Type::String, .help = "Upper case."},
      {.key = "clusters.x", .type = Type::String, .help = "Reserved."},
      {.key = "a.b", .type = Type::Int, .default_text = "ten", .help = "Bad default."},
      {.key = "a.c",
       .type = Type::Int,
       .default_text = "0",
       .help = "Reversed.",
       .min = 5,
       .max = 1},
      {.key = "a.d", .type = Type::Enum, .default_text = "", .help = "No values."},
      {.key = "a.e", .env = kNone, .type = Type::String, .help = ""},
      {.key = "a.f", .type = Type::String, .help = "Flag.", .flags = kPresenceMeansTrue},
      {.key = "a.g", .type = Type::String, .help = "Fine."},
      {.key = "a", .type = Type::String, .help = "Also a table."},
  };
  EXPECT_EQ(table_error({kBad}),
            "knob table: \"Bad.Key\": keys are lower-case [a-z0-9_] segments joined by dots\n"
            "knob table: \"clusters.x\": \"cluster\" and \"clusters\" are reserved for cluster "
            "sections\n"
            "knob table: \"a.b\": default \"ten\" is not an integer\n"
            "knob table: \"a.c\": min is greater than max\n"
            "knob table: \"a.d\": enum without allowed values\n"
            "knob table: \"a.e\": has no help text\n"
            "knob table: \"a.e\": has an empty environment variable name\n"
            "knob table: \"a.f\": kPresenceMeansTrue is only for boolean knobs\n"
            "knob table: \"a\": is both a key and the table of other keys");
}

TEST(ConfigTables, EditDistance) {
  EXPECT_EQ(detail::edit_distance("", ""), 0u);
  EXPECT_EQ(detail::edit_distance("plugin", "plugn"), 1u);
  EXPECT_EQ(detail::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(detail::edit_distance("abc", ""), 3u);
  std::vector<std::string> candidates = {"net.plugin", "net.socket"};
  EXPECT_EQ(detail::closest("net.plugins", candidates), "net.plugin");
  EXPECT_EQ(detail::closest("log.level", candidates), "");
}

TEST(ConfigTables, IntegerTextParsing) {
  const Knob knob{.key = "k", .type = Type::Int, .help = "K."};
  EXPECT_EQ(detail::parse_text(knob, "-12").value, Value{std::int64_t{-12}});
  EXPECT_EQ(detail::parse_text(knob, "+7").value, Value{std::int64_t{7}});
  for (std::string_view bad : {"", "+", "1.5", "0x10", " 3", "3 ", "12abc", "9223372036854775808"})
    EXPECT_FALSE(detail::parse_text(knob, bad).value.has_value()) << bad;
}

}  // namespace
}  // namespace nccom::config::testing
