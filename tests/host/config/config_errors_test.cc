// Every way loading can fail, with the exact text the user sees.
#include "config_test_util.h"

namespace nccom::config::testing {
namespace {

// Loads `text` as NCCOM_CONFIG (plus `env`) and returns the error message.
class ConfigErrors : public ::testing::Test {
 protected:
  std::string error_for(const std::string& text) {
    dir_.write("nccom.toml", text);
    env_.set("NCCOM_CONFIG", path_);
    return load_error(options(env_));
  }
  TempDir dir_;
  FakeEnv env_;
  const std::string path_ = dir_.path("nccom.toml");
};

TEST_F(ConfigErrors, NccomConfigNamesAMissingFile) {
  std::string missing = dir_.path("nope.toml");
  env_.set("NCCOM_CONFIG", missing);
  std::string default_file = dir_.write("default.toml", "");
  EXPECT_EQ(load_error(options(env_, {default_file})),
            "cannot read configuration file " + missing +
                " (from NCCOM_CONFIG): No such file or directory");
}

TEST_F(ConfigErrors, SyntaxErrorHasLineAndColumn) {
  std::string message = error_for("[log]\nlevel = \"INFO\"\nsubsys = = 3\n");
  EXPECT_EQ(message.rfind(path_ + ":3:10: TOML syntax error: ", 0), 0u) << message;
}

TEST_F(ConfigErrors, DuplicateKeyIsASyntaxError) {
  std::string message = error_for("[net]\nplugin = \"a\"\nplugin = \"b\"\n");
  EXPECT_EQ(message, path_ +
                         ":3:10: TOML syntax error: Error while parsing key-value pair: "
                         "cannot redefine existing string 'plugin'");
}

TEST_F(ConfigErrors, WrongType) {
  EXPECT_EQ(
      error_for("[demo.socket]\nnsocks_per_thread = \"four\"\n"),
      path_ + ":2:21: demo.socket.nsocks_per_thread: expected an integer, got string \"four\"");
}

TEST_F(ConfigErrors, WrongTypeForBooleanAndString) {
  EXPECT_EQ(error_for("[net]\nuse_runtime_plugin = 1\n[log]\nfile = 2.5\n"),
            path_ + ":2:22: net.use_runtime_plugin: expected a boolean, got integer 1\n" + path_ +
                ":4:8: log.file: expected a string, got float 2.5");
}

TEST_F(ConfigErrors, OutOfRange) {
  EXPECT_EQ(error_for("[demo.socket]\nnthreads = 17\n"),
            path_ + ":2:12: demo.socket.nthreads: expected an integer in 1..16, got integer 17");
}

TEST_F(ConfigErrors, BelowMinimumWithoutMaximum) {
  // Every host knob with a minimum has a maximum too, so declare one.
  static constexpr Knob kTable[] = {{.key = "test.depth",
                                     .type = Type::Int,
                                     .default_text = "1",
                                     .help = "A test depth.",
                                     .min = 1}};
  dir_.write("nccom.toml", "[test]\ndepth = 0\n");
  env_.set("NCCOM_CONFIG", path_);
  LoadOptions opts = options(env_);
  opts.tables.push_back(kTable);
  EXPECT_EQ(load_error(opts), path_ + ":2:9: test.depth: expected an integer >= 1, got integer 0");
}

TEST_F(ConfigErrors, DurationBelowItsRange) {
  EXPECT_EQ(error_for("[bootstrap]\nsocket_timeout_ms = 0\n"),
            path_ +
                ":2:21: bootstrap.socket_timeout_ms: expected an integer in 1..86400000, got "
                "integer 0");
}

// INT64_MAX milliseconds passed validation once and then overflowed
// now() + timeout into a deadline in the past. Every duration knob refuses
// it, from the file and from the environment, naming the allowed range.
TEST_F(ConfigErrors, DurationAboveItsRangeFromTheFile) {
  EXPECT_EQ(error_for("bootstrap.handshake_timeout_ms = 9223372036854775807\n"),
            path_ +
                ":1:34: bootstrap.handshake_timeout_ms: expected an integer in 1..86400000, "
                "got integer 9223372036854775807");
  for (const Knob& knob : host_knobs()) {
    if (knob.type != Type::Int || !knob.key.ends_with("_ms")) continue;
    const std::string key(knob.key);
    const std::string message = error_for(key + " = 9223372036854775807\n");
    EXPECT_NE(message.find(": " + key + ": expected an integer in " + std::to_string(knob.min) +
                           ".." + std::to_string(knob.max) + ", got integer 9223372036854775807"),
              std::string::npos)
        << message;
  }
}

TEST_F(ConfigErrors, DurationAboveItsRangeFromTheEnvironment) {
  FakeEnv env;
  env.set("NCCOM_BOOTSTRAP_TIMEOUT_MS", "9223372036854775807");
  EXPECT_EQ(load_error(options(env)),
            "NCCOM_BOOTSTRAP_TIMEOUT_MS=\"9223372036854775807\": expected an integer in "
            "1..86400000 (for bootstrap.handshake_timeout_ms)");
  int checked = 0;
  for (const Knob& knob : host_knobs()) {
    if (knob.type != Type::Int || !knob.key.ends_with("_ms")) continue;
    for (std::string_view var : knob.env) {
      FakeEnv one;
      one.set(std::string(var), "9223372036854775807");
      EXPECT_EQ(load_error(options(one)),
                std::string(var) + "=\"9223372036854775807\": expected an integer in " +
                    std::to_string(knob.min) + ".." + std::to_string(knob.max) + " (for " +
                    std::string(knob.key) + ")");
      ++checked;
    }
  }
  EXPECT_GE(checked, 5);
}

TEST_F(ConfigErrors, EnumValueNotAllowed) {
  EXPECT_EQ(error_for("[bootstrap]\nsocket_family = \"AF_UNIX\"\n"),
            path_ +
                ":2:17: bootstrap.socket_family: expected one of \"\", \"AF_INET\", "
                "\"AF_INET6\", got string \"AF_UNIX\"");
}

TEST_F(ConfigErrors, CaseInsensitiveEnumListsItsValues) {
  EXPECT_EQ(error_for("log.level = \"LOUD\"\n"),
            path_ +
                ":1:13: log.level: expected one of \"NONE\", \"VERSION\", \"WARN\", "
                "\"INFO\", \"ABORT\", \"TRACE\" (any letter case), got string \"LOUD\"");
}

TEST_F(ConfigErrors, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(error_for("[demo.socket]\nnsock_per_thread = 2\n"),
            path_ +
                ":2:1: unknown key \"demo.socket.nsock_per_thread\"; did you mean "
                "\"demo.socket.nsocks_per_thread\"?");
}

TEST_F(ConfigErrors, UnknownTableSuggestsTheClosest) {
  EXPECT_EQ(error_for("[bootstrp]\nsocket_ifname = \"lo\"\n"),
            path_ + ":1:2: unknown key \"bootstrp\"; did you mean \"bootstrap\"?");
}

TEST_F(ConfigErrors, UnknownKeyFarFromEveryKnobHasNoSuggestion) {
  EXPECT_EQ(error_for("completely_unrelated = 1\n"),
            path_ + ":1:1: unknown key \"completely_unrelated\"");
}

TEST_F(ConfigErrors, UnknownKeyInsideAnInactiveClusterSection) {
  EXPECT_EQ(error_for("[clusters.trn2-prod.net]\nplugn = \"ofi\"\n"),
            path_ +
                ":2:1: unknown key \"clusters.trn2-prod.net.plugn\"; did you mean "
                "\"clusters.trn2-prod.net.plugin\"?");
}

TEST_F(ConfigErrors, BadValueInsideAClusterSection) {
  EXPECT_EQ(error_for("[clusters.dev.demo.socket]\nnthreads = 99\n"),
            path_ +
                ":2:12: clusters.dev.demo.socket.nthreads: expected an integer in 1..16, "
                "got integer 99");
}

TEST_F(ConfigErrors, ScalarWhereATableBelongs) {
  EXPECT_EQ(error_for("net = \"socket\"\n"),
            path_ + ":1:7: net: expected a table, got string \"socket\"");
}

TEST_F(ConfigErrors, ClusterKeyMustBeAString) {
  EXPECT_EQ(error_for("cluster = 3\n"),
            path_ +
                ":1:11: cluster: expected a string naming a [clusters.<name>] section, "
                "got integer 3");
}

TEST_F(ConfigErrors, UnknownClusterFromEnvironment) {
  env_.set("NCCOM_CLUSTER", "x");
  EXPECT_EQ(error_for("[clusters.b.net]\nplugin = \"1\"\n[clusters.a.net]\nplugin = \"2\"\n"),
            "unknown cluster \"x\" (from NCCOM_CLUSTER); clusters in " + path_ + ": a, b");
}

TEST_F(ConfigErrors, UnknownClusterFromFileKey) {
  EXPECT_EQ(error_for("cluster = \"trn9\"\n[clusters.dev.log]\nlevel = \"INFO\"\n"),
            "unknown cluster \"trn9\" (from " + path_ + ":1:11); clusters in " + path_ + ": dev");
}

TEST_F(ConfigErrors, UnknownClusterInAFileWithoutSections) {
  env_.set("NCCOM_CLUSTER", "x");
  EXPECT_EQ(error_for("[net]\nplugin = \"socket\"\n"),
            "unknown cluster \"x\" (from NCCOM_CLUSTER); " + path_ +
                " has no [clusters.<name>] sections");
}

TEST_F(ConfigErrors, UnknownClusterWithoutAnyFile) {
  FakeEnv env;
  env.set("NCCOM_CLUSTER", "x");
  EXPECT_EQ(load_error(options(env, {dir_.path("a.toml")})),
            "unknown cluster \"x\" (from NCCOM_CLUSTER); no configuration file was read "
            "(NCCOM_CONFIG is unset; tried " +
                dir_.path("a.toml") + ")");
}

// Every bad value is listed; the logging variables are not errors (their
// knobs fall back, config_environment_test.cc), so NCCL_DEBUG is absent.
TEST_F(ConfigErrors, BadEnvironmentValues) {
  FakeEnv env;
  env.set("NCCL_NSOCKS_PERTHREAD", "abc")
      .set("NCCL_SOCKET_NTHREADS", "17")
      .set("NCCL_DEBUG", "loud")
      .set("NEURON_CCOM_SOCK_TIMEOUT", "99999999999999999999");
  EXPECT_EQ(load_error(options(env)),
            "NEURON_CCOM_SOCK_TIMEOUT=\"99999999999999999999\": expected an integer in "
            "1..86400000 (for bootstrap.socket_timeout_ms)\n"
            "NCCL_NSOCKS_PERTHREAD=\"abc\": expected an integer in 1..64 "
            "(for demo.socket.nsocks_per_thread)\n"
            "NCCL_SOCKET_NTHREADS=\"17\": expected an integer in 1..16 "
            "(for demo.socket.nthreads)");
}

TEST_F(ConfigErrors, BadEnvironmentBoolean) {
  // Knobs without kPresenceMeansTrue take only the listed spellings; the host
  // table has none yet, so declare one.
  static constexpr std::string_view kEnv[] = {"TEST_FLAG"};
  static constexpr Knob kTable[] = {{.key = "test.flag",
                                     .env = kEnv,
                                     .type = Type::Bool,
                                     .default_text = "false",
                                     .help = "A test flag."}};
  FakeEnv env;
  env.set("TEST_FLAG", "maybe");
  LoadOptions opts = options(env);
  opts.tables.push_back(kTable);
  EXPECT_EQ(load_error(opts),
            "TEST_FLAG=\"maybe\": expected a boolean (1/0, true/false, yes/no, on/off) "
            "(for test.flag)");
}

TEST_F(ConfigErrors, EveryProblemIsReportedInFileOrder) {
  env_.set("NCCL_SOCKET_NTHREADS", "zero").set("NCCOM_CLUSTER", "nowhere");
  std::string message = error_for(
      "[net]\n"                           // 1
      "plugin = 5\n"                      // 2
      "[clusters.a.log]\n"                // 3
      "levl = \"INFO\"\n"                 // 4
      "[bootstrap]\n"                     // 5
      "socket_timeout_ms = -3\n"          // 6
      "socket_family = \"AF_INET4\"\n");  // 7
  EXPECT_EQ(message, path_ + ":2:10: net.plugin: expected a string, got integer 5\n" + path_ +
                         ":4:1: unknown key \"clusters.a.log.levl\"; did you mean "
                         "\"clusters.a.log.level\"?\n" +
                         path_ +
                         ":6:21: bootstrap.socket_timeout_ms: expected an integer in 1..86400000, "
                         "got integer -3\n" +
                         path_ +
                         ":7:17: bootstrap.socket_family: expected one of \"\", \"AF_INET\", "
                         "\"AF_INET6\", got string \"AF_INET4\"\n"
                         "unknown cluster \"nowhere\" (from NCCOM_CLUSTER); clusters in " +
                         path_ +
                         ": a\n"
                         "NCCL_SOCKET_NTHREADS=\"zero\": expected an integer in 1..16 "
                         "(for demo.socket.nthreads)");
}

}  // namespace
}  // namespace nccom::config::testing
