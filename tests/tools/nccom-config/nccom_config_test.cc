// nccom-config as an operator runs it: a real process, real files, real
// environment.
#include "build_paths.h"
#include "child_process.h"
#include "json_check.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using nccom_test::ChildResult;
using nccom_test::run_child;

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-config";

class ToolsNccomConfig : public ::testing::Test {
 protected:
  // The child's environment never carries NCCOM_CONFIG, NCCOM_CLUSTER or
  // NCCL_DEBUG from the caller unless a test sets them.
  ChildResult run(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    for (const char* name : {"NCCOM_CONFIG", "NCCOM_CLUSTER", "NCCL_DEBUG"})
      env.try_emplace(name, "");
    ChildResult r = run_child(kTool, args, env);
    r.out += r.err;
    return r;
  }
  nccom_test::TempDir dir_;
};

TEST_F(ToolsNccomConfig, PrintsEveryKnobWithItsSource) {
  const ChildResult r = run({});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* key : {"log.level", "log.subsys", "log.file", "bootstrap.socket_timeout_ms",
                          "bootstrap.socket_ifname", "net.plugin", "plugins.search_path"}) {
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  }
  // The shipped default file next to the build tree's lib/ is found.
  EXPECT_NE(r.out.find("share/nccom/nccom.toml"), std::string::npos) << r.out;
}

TEST_F(ToolsNccomConfig, EnvironmentOverrideIsShownAsSuch) {
  const ChildResult r = run({}, {{"NCCL_DEBUG", "info"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"info\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("env NCCL_DEBUG"), std::string::npos) << r.out;
}

TEST_F(ToolsNccomConfig, CheckReportsFileLineColumnAndExitsOne) {
  const std::string file = dir_.path() + "/bad.toml";
  std::ofstream(file) << "[bootstrap]\nsocket_timeout_ms = \"four\"\n";
  const ChildResult r = run({"--check", file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(file + ":2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bootstrap.socket_timeout_ms"), std::string::npos) << r.out;
}

// A path that is not a regular file is refused at once, naming the path and
// its kind, instead of reading forever (/dev/zero) or blocking (a FIFO).
// The shipped network plugins' knobs follow the host's; a setting for a
// plugin this configuration does not load is listed, not refused.
TEST_F(ToolsNccomConfig, ListsThePluginsKnobsAndUnclaimedSettings) {
  const std::string file = dir_.path() + "/plugins.toml";
  std::ofstream(file) << "[plugins.socket]\nnthreads = 2\n[plugins.elsewhere]\nwidth = 3\n";
  const ChildResult r = run({}, {{"NCCOM_CONFIG", file}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("plugin socket: net plugin \"socket\" (the fallback)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plugin ofi: net plugin libnccom-net.so"), std::string::npos) << r.out;
  const std::size_t at = r.out.find("\nplugins.socket.nthreads ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(at, r.out.find('\n', at + 1) - at).find(file + ":2"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plugins this configuration does not load"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  plugins.elsewhere.width = integer 3  (" + file + ":4)"),
            std::string::npos)
      << r.out;
}

TEST_F(ToolsNccomConfig, CheckRefusesADeviceOrFifoAndExitsOne) {
  const std::string fifo = dir_.path() + "/nccom.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& [path, kind] :
       {std::pair<std::string, std::string>{"/dev/zero", "a character device"}, {fifo, "a FIFO"}}) {
    const ChildResult r = run({"--check", path});
    EXPECT_EQ(r.signal, 0) << path << ": " << r.out;
    EXPECT_EQ(r.exit_code, 1) << path << ": " << r.out;
    EXPECT_NE(r.out.find("cannot read configuration file " + path + " (from NCCOM_CONFIG): it is " +
                         kind + ", not a regular file"),
              std::string::npos)
        << r.out;
  }
}

TEST_F(ToolsNccomConfig, CheckAcceptsTheShippedClusterFile) {
  const ChildResult r =
      run({"--check", std::string(NCCOM_SOURCE_DIR) + "/config/clusters/loopback-dev.toml"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("OK"), std::string::npos);
}

TEST_F(ToolsNccomConfig, UnknownClusterIsAnError) {
  const ChildResult r = run({"--cluster", "no-such-cluster"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("unknown cluster \"no-such-cluster\""), std::string::npos) << r.out;
}

TEST_F(ToolsNccomConfig, BadArgumentsPrintUsage) {
  const ChildResult r = run({"--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("usage: nccom-config"), std::string::npos);
}

}  // namespace

namespace {

// --changed: only what differs from the built-in defaults, each with where
// it was set; the shipped file alone changes nothing.
TEST_F(ToolsNccomConfig, ChangedListsWhatDiffersFromTheDefaultsAndWhere) {
  const ChildResult shipped = run({"--changed"});
  ASSERT_EQ(shipped.exit_code, 0) << shipped.out;
  EXPECT_NE(shipped.out.find("every knob has its built-in default"), std::string::npos)
      << shipped.out;

  const std::string file = dir_.path() + "/mine.toml";
  std::ofstream(file) << "[net]\nprobe = \"off\"\n";
  const ChildResult r =
      run({"--changed"}, {{"NCCOM_CONFIG", file}, {"NCCOM_BOOTSTRAP_PROTOCOL", "flat"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("net.probe = \"off\"  (" + file + ":2, built-in default \"third-party\")"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bootstrap.protocol = \"flat\"  (env NCCOM_BOOTSTRAP_PROTOCOL, built-in "
                       "default \"auto\")"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("net.plugin ="), std::string::npos) << r.out;
}

TEST_F(ToolsNccomConfig, OneKeyIsAnsweredAndAMisspeltOneGetsADidYouMean) {
  const ChildResult r = run({"net.probe_timeout_ms"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("net.probe_timeout_ms = 60000  ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", the built-in default too)"), std::string::npos) << r.out;
  const ChildResult typo = run({"net.pluign"});
  EXPECT_EQ(typo.exit_code, 2) << typo.out;
  EXPECT_NE(typo.out.find("no knob named \"net.pluign\"; did you mean \"net.plugin\"?"),
            std::string::npos)
      << typo.out;
}

// A variable that looks like nccom's but that nothing reads is named with
// the closest one that is read; NCCL's own that nccom ignores are named too;
// a plugin's variable (the libfabric plugin's NCCOM_OFI_RAILS) is not.
TEST_F(ToolsNccomConfig, MisspeltAndUnreadVariablesAreNamed) {
  const ChildResult r = run(
      {}, {{"NCCOM_BOOTSTRAP_PROTOKOL", "flat"}, {"NCCL_ALGO", "ring"}, {"NCCOM_OFI_RAILS", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("NCCOM_BOOTSTRAP_PROTOKOL is not a variable nccom reads; did you mean "
                       "NCCOM_BOOTSTRAP_PROTOCOL?"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("NCCL_ALGO is an NCCL setting nccom does not read"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("NCCOM_OFI_RAILS is not"), std::string::npos) << r.out;
}

TEST_F(ToolsNccomConfig, JsonIsOneValidDocumentWithTypedValues) {
  // stdout alone, at the most talkative log level.
  const ChildResult raw = run_child(
      kTool, {"--json"}, {{"NCCL_ALGO", "ring"}, {"NCCL_DEBUG", "TRACE"}, {"NCCOM_CONFIG", ""}});
  ASSERT_EQ(raw.exit_code, 0) << raw.out << raw.err;
  std::string why;
  EXPECT_TRUE(json_check::valid(raw.out, &why)) << why << "\n" << raw.out;
  EXPECT_NE(raw.out.find("{\"key\":\"net.probe_timeout_ms\",\"value\":60000,\"default\":60000,"
                         "\"changed\":false,"),
            std::string::npos)
      << raw.out;
  EXPECT_NE(raw.out.find("{\"name\":\"NCCL_ALGO\",\"note\":\"nccl-not-read\""), std::string::npos)
      << raw.out;
}

// "digest" covers every knob whatever is selected, and follows the values.
TEST_F(ToolsNccomConfig, JsonDigestFollowsTheResolvedValues) {
  auto digest_of = [](const ChildResult& r) {
    const std::string key = "\"digest\":\"";
    const size_t at = r.out.find(key);
    return at == std::string::npos ? std::string("(none)") : r.out.substr(at + key.size(), 24);
  };
  const std::map<std::string, std::string> base = {{"NCCOM_CONFIG", ""}};
  auto changed = base;
  changed["NCCOM_BOOTSTRAP_PROTOCOL"] = "flat";
  const ChildResult all = run_child(kTool, {"--json"}, base);
  const ChildResult one = run_child(kTool, {"--json", "net.probe_timeout_ms"}, base);
  const ChildResult other = run_child(kTool, {"--json"}, changed);
  ASSERT_EQ(all.exit_code, 0) << all.out << all.err;
  EXPECT_EQ(digest_of(all).rfind("fnv1a64:", 0), 0u) << all.out;
  EXPECT_EQ(digest_of(one), digest_of(all));
  EXPECT_NE(digest_of(other), digest_of(all)) << other.out;
}

}  // namespace

namespace {

// A logging variable with a bad value is what libnccom ignores (with a
// WARN): here a note, never a failure, in every form.
TEST_F(ToolsNccomConfig, BadLoggingVariablesAreNotesNotFailures) {
  const std::map<std::string, std::string> env = {{"NCCL_DEBUG", "verbose"},
                                                  {"NCCL_DEBUG_SUBSYS", "INIT,FOO"}};
  const std::string level_note =
      "NCCL_DEBUG=\"verbose\" is not valid: expected one of \"NONE\", \"VERSION\", \"WARN\", "
      "\"INFO\", \"ABORT\", \"TRACE\" (any letter case); ignored, using \"WARN\" (log.level at ";
  const ChildResult r = run({}, env);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::size_t section = r.out.find("\nenvironment\n");
  ASSERT_NE(section, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  " + level_note, section), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  NCCL_DEBUG_SUBSYS=\"INIT,FOO\": \"FOO\" is not a known name: ", section),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; dropped, using \"INIT\" (the known names of NCCL_DEBUG_SUBSYS)"),
            std::string::npos)
      << r.out;

  const ChildResult changed = run({"--changed"}, env);
  ASSERT_EQ(changed.exit_code, 0) << changed.out;
  EXPECT_NE(changed.out.find("log.subsys = \"INIT\"  (env NCCL_DEBUG_SUBSYS, built-in default "),
            std::string::npos)
      << changed.out;
  EXPECT_NE(changed.out.find("environment: " + level_note), std::string::npos) << changed.out;

  const ChildResult check =
      run({"--check", std::string(NCCOM_SOURCE_DIR) + "/config/clusters/loopback-dev.toml"}, env);
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_NE(check.out.find("nccom-config: note: NCCL_DEBUG=\"verbose\" is not valid"),
            std::string::npos)
      << check.out;

  auto json_env = env;
  json_env["NCCOM_CONFIG"] = "";
  const ChildResult json = run_child(kTool, {"--json"}, json_env);
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  std::string why;
  EXPECT_TRUE(json_check::valid(json.out, &why)) << why << "\n" << json.out;
  EXPECT_NE(json.out.find("{\"name\":\"NCCL_DEBUG\",\"note\":\"ignored-value\",\"suggestion\":\"\","
                          "\"value\":\"verbose\",\"message\":\"NCCL_DEBUG=\\\"verbose\\\" is not "
                          "valid"),
            std::string::npos)
      << json.out;
}

// In a file the same value is an error --check reports.
TEST_F(ToolsNccomConfig, CheckReportsABadLogValueInTheFile) {
  const std::string file = dir_.path() + "/subsys.toml";
  std::ofstream(file) << "[log]\nsubsys = \"INIT,FOO\"\n";
  const ChildResult r = run({"--check", file});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(file + ":2:10: log.subsys: expected a comma-separated list of INIT, COLL, "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(", got string \"INIT,FOO\""), std::string::npos) << r.out;
}

// [plugins.sockets] configures nothing (the socket plugin is "socket"):
// --check fails naming the right section, the listing says so and exits 0.
TEST_F(ToolsNccomConfig, APluginSectionNamingNoPluginGetsADidYouMean) {
  const std::string file = dir_.path() + "/sockets.toml";
  std::ofstream(file) << "[plugins.sockets]\nnthreads = 2\n[plugins.neuron]\ndisable_verify = "
                         "true\n";
  const std::string note = "[plugins.sockets] (" + file +
                           ":2) names no plugin nccom can find (\"sockets\" is not loaded, in "
                           "the plugin directories or shipped with nccom), so its settings are "
                           "not used; did you mean [plugins.socket]?";
  const ChildResult check = run({"--check", file});
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_NE(check.out.find("nccom-config: " + note + "\n"), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("OK"), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("[plugins.neuron]"), std::string::npos) << check.out;
  const ChildResult json = run({"--check", file, "--json"});
  EXPECT_EQ(json.exit_code, 1) << json.out;
  EXPECT_NE(json.out.find("\"unknown_plugin_sections\":[{\"section\":\"plugins.sockets\","
                          "\"plugin\":\"sockets\",\"where\":\"" +
                          file + ":2\",\"suggestion\":\"socket\"}]"),
            std::string::npos)
      << json.out;

  const ChildResult listing = run({}, {{"NCCOM_CONFIG", file}});
  EXPECT_EQ(listing.exit_code, 0) << listing.out;
  EXPECT_NE(listing.out.find("sections of the file that name no plugin nccom can find:\n  " + note),
            std::string::npos)
      << listing.out;

  // A section of a plugin in plugins.search_path is found by its file name.
  const std::string plugin_dir = dir_.path() + "/plugins";
  ASSERT_EQ(::mkdir(plugin_dir.c_str(), 0700), 0);
  std::ofstream(plugin_dir + "/libnccom-sockets.so") << "";
  const ChildResult found = run({"--check", file}, {{"NCCOM_PLUGIN_PATH", plugin_dir}});
  EXPECT_EQ(found.exit_code, 0) << found.out;
}

}  // namespace
