// The host context: configuration drives logging, WARN lines reach the
// runtime's log, bad plugins are logged and skipped, plugins get their
// configuration through the host API.
#include "core/context.h"

#include "build_paths.h"
#include "config/environment.h"
#include "config/plugin_knobs.h"
#include "core/environment_report.h"
#include "core/host_api.h"
#include "core/runtime.h"
#include "log/log.h"
#include "plugin/plugin_loader.h"

#include <nccom/net_config.h>

#include <dlfcn.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace nccom::core {
namespace {

std::mutex g_printk_mutex;
std::vector<std::pair<std::string, uint32_t>> g_printk_lines;

// The one scripted callback: records what libnccom forwards to the driver log.
void record_printk(char* str, uint32_t size, uint32_t action) {
  std::lock_guard lock(g_printk_mutex);
  g_printk_lines.emplace_back(std::string(str, size), action);
}

class CoreContext : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/nccom-core-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    log_path_ = dir_ + "/nccom.log";
    scripted_ = runtime::libnrt();
    scripted_.nec_ndl_printk = &record_printk;
    runtime::install_for_testing(&scripted_);
    std::lock_guard lock(g_printk_mutex);
    g_printk_lines.clear();
  }
  void TearDown() override {
    log::reset();
    runtime::install_for_testing(nullptr);
    std::filesystem::remove_all(dir_);
  }

  config::LoadOptions options() {
    config::LoadOptions o;
    o.getenv = [this](const char* name) -> const char* {
      auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    };
    o.tables = {config::host_knobs()};
    return o;
  }

  std::string read_log() {
    std::ifstream in(log_path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir_, log_path_;
  std::map<std::string, std::string> env_;
  runtime::Api scripted_{};
};

TEST_F(CoreContext, ConfigurationDrivesLogging) {
  env_["NCCL_DEBUG"] = "INFO";
  env_["NCCL_DEBUG_SUBSYS"] = "ENV";
  env_["NCCL_DEBUG_FILE"] = log_path_;
  auto context = Context::create(options());
  ASSERT_TRUE(context) << context.error().message;
  const std::string text = read_log();
  EXPECT_NE(text.find("CCOM INFO configuration: built-in defaults (no file)"), std::string::npos)
      << text;
  EXPECT_EQ((*context)->config().get_string("log.level"), "INFO");
}

TEST_F(CoreContext, QuietByDefault) {
  env_["NCCL_DEBUG_FILE"] = log_path_;
  auto context = Context::create(options());
  ASSERT_TRUE(context) << context.error().message;
  EXPECT_EQ(read_log(), "");
}

TEST_F(CoreContext, BadConfigurationIsAClearError) {
  const std::string file = dir_ + "/bad.toml";
  std::ofstream(file) << "[log]\nlevel = \"LOUD\"\n";
  env_["NCCOM_CONFIG"] = file;
  auto context = Context::create(options());
  ASSERT_FALSE(context);
  EXPECT_EQ(context.error().status, NRT_INVALID);
  EXPECT_NE(context.error().message.find("nccom configuration is invalid"), std::string::npos);
  EXPECT_NE(context.error().message.find(file + ":2:"), std::string::npos)
      << context.error().message;
}

// A configuration that does not load is one line, its first problem
// first, then how many more there are and what to do.
TEST_F(CoreContext, BadConfigurationIsOneLineCauseFirst) {
  const std::string file = dir_ + "/typo.toml";
  std::ofstream(file) << "[bootstrap]\nprotokol = \"tcp\"\n";
  env_["NCCOM_CONFIG"] = file;
  auto one = Context::create(options());
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().message,
            file +
                ":2:1: unknown key \"bootstrap.protokol\"; did you mean \"bootstrap.protocol\"? "
                "(nccom configuration is invalid: fix it, or point NCCOM_CONFIG at a good file)");

  std::ofstream(file) << "[bootstrap]\nprotokol = \"tcp\"\n[log]\nlevel = \"LOUD\"\n"
                         "[net]\npluign = \"x\"\n";
  auto three = Context::create(options());
  ASSERT_FALSE(three);
  const std::string& m = three.error().message;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.rfind(file + ":2:1: unknown key \"bootstrap.protokol\"", 0), 0u) << m;
  EXPECT_NE(m.find(" (and 2 more problems: nccom-config --check " + file +
                   " lists them all; nccom configuration is invalid: fix it, or point "
                   "NCCOM_CONFIG at a good file)"),
            std::string::npos)
      << m;
  // Problems of the environment (no file to name): nccom-config lists them.
  EXPECT_EQ(invalid_configuration("NCCL_DEBUG=\"LOUD\": expected one of ...\nNCCL_X=1: bad"),
            "NCCL_DEBUG=\"LOUD\": expected one of ... (and 1 more problem: nccom-config lists "
            "them all; nccom configuration is invalid: fix it, or point NCCOM_CONFIG at a good "
            "file)");
}

// The configuration's WARN reaches the runtime's log too: the sink is in
// place before the configuration is read, so a runtime that reports the
// failed call has its cause.
TEST_F(CoreContext, AConfigurationThatDoesNotLoadIsForwardedToTheRuntime) {
  const std::string file = dir_ + "/typo.toml";
  std::ofstream(file) << "[bootstrap]\nprotokol = \"tcp\"\n";
  env_["NCCOM_CONFIG"] = file;
  auto context = Context::create(options());
  ASSERT_FALSE(context);
  NCCOM_WARN("%s", context.error().message.c_str());
  std::lock_guard lock(g_printk_mutex);
  ASSERT_EQ(g_printk_lines.size(), 1u);
  EXPECT_NE(g_printk_lines[0].first.find("CCOM WARN " + file + ":2:1: unknown key"),
            std::string::npos)
      << g_printk_lines[0].first;
}

TEST_F(CoreContext, BadDebugFileStillLogsAndSaysWhy) {
  env_["NCCL_DEBUG"] = "WARN";
  env_["NCCL_DEBUG_FILE"] = dir_ + "/missing-dir/log";
  testing::internal::CaptureStdout();
  auto context = Context::create(options());
  const std::string out = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(context) << context.error().message;
  EXPECT_NE(out.find("CCOM WARN NCCL_DEBUG_FILE: cannot open"), std::string::npos) << out;
}

TEST_F(CoreContext, WarnLinesAreForwardedToTheRuntimeLog) {
  env_["NCCL_DEBUG"] = "WARN";
  env_["NCCL_DEBUG_FILE"] = log_path_;
  auto context = Context::create(options());
  ASSERT_TRUE(context);
  NCCOM_INFO(log::kAll, "not forwarded");
  NCCOM_WARN("forwarded %d", 42);
  std::lock_guard lock(g_printk_mutex);
  ASSERT_EQ(g_printk_lines.size(), 1u);
  EXPECT_NE(g_printk_lines[0].first.find("CCOM WARN forwarded 42"), std::string::npos);
  EXPECT_EQ(g_printk_lines[0].first.back(), '2');  // no trailing newline
  EXPECT_EQ(g_printk_lines[0].second, 0u);
}

TEST_F(CoreContext, BadPluginsAreLoggedAndSkippedGoodOnesLoad) {
  env_["NCCL_DEBUG"] = "WARN";
  env_["NCCL_DEBUG_FILE"] = log_path_;
  env_["NCCOM_PLUGIN_PATH"] = TEST_PLUGIN_DIR;
  auto context = Context::create(options());
  ASSERT_TRUE(context);
  const auto loaded =
      (*context)->load_plugins(NCCOM_PLUGIN_KIND_NET, {"undefined", "abi99", "good", "nowhere"});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded.value(), 1u);
  EXPECT_NE((*context)->find_plugin(NCCOM_PLUGIN_KIND_NET, "good"), nullptr);
  const std::string text = read_log();
  EXPECT_NE(text.find("skipping plugin: "), std::string::npos);
  EXPECT_NE(text.find("undefined symbol"), std::string::npos) << text;
  EXPECT_NE(text.find("got 99, supports 1"), std::string::npos) << text;
  EXPECT_NE(text.find("nowhere"), std::string::npos) << text;
  std::lock_guard lock(g_printk_mutex);
  EXPECT_EQ(g_printk_lines.size(), 3u);
}

TEST_F(CoreContext, PluginDirsStartWithTheConfiguredPath) {
  env_["NCCOM_PLUGIN_PATH"] = "/opt/a::/opt/b";
  auto context = Context::create(options());
  ASSERT_TRUE(context);
  const auto& dirs = (*context)->plugin_dirs();
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/opt/a");
  EXPECT_EQ(dirs[1], "/opt/b");
  EXPECT_EQ(dirs[2].filename(), "nccom");
}

// A plugin without knobs: dotted keys name any host setting; an undotted
// key is nobody's (it is not looked up in a host section).
TEST_F(CoreContext, HostApiAnswersHostSettingsToAPluginWithoutKnobs) {
  env_["NCCL_NET_PLUGIN"] = "custom";
  auto context = Context::create(options());
  ASSERT_TRUE(context);
  PluginHostApi host((*context)->config());
  const nccom_host_api_t& api = host.api();
  EXPECT_EQ(api.struct_size, sizeof(nccom_host_api_t));
  EXPECT_EQ(api.abi_version, NCCOM_PLUGIN_ABI_VERSION);
  const char* plugin = api.config_get(api.host_ctx, "net.plugin");
  ASSERT_NE(plugin, nullptr);
  EXPECT_STREQ(plugin, "custom");
  EXPECT_EQ(api.config_get(api.host_ctx, "net.plugin"), plugin);  // stable storage
  EXPECT_EQ(api.config_get(api.host_ctx, "plugin"), nullptr) << "no host section fallback";
  EXPECT_STREQ(api.config_get(api.host_ctx, "bootstrap.socket_timeout_ms"), "120000");
  EXPECT_EQ(api.config_get(api.host_ctx, "no.such.key"), nullptr);
  EXPECT_EQ(api.config_get(api.host_ctx, "nosuchkey"), nullptr);
  EXPECT_EQ(api.config_get(api.host_ctx, nullptr), nullptr);
}

// A plugin with knobs: undotted keys are its own knobs and nothing else.
TEST_F(CoreContext, HostApiAnswersAPluginsOwnKnobs) {
  static const char* const env_width[] = {"DEMO_WIDTH", nullptr};
  static const nccom_knob_t knobs[] = {
      {"width", NCCOM_KNOB_INT, 0, "8", "Width of the demo.", 1, 64, nullptr, env_width},
      {"mode", NCCOM_KNOB_STRING, 0, "", "Mode of the demo.", 0, 0, nullptr, nullptr},
  };
  static const nccom_knob_table_t table = NCCOM_KNOB_TABLE(knobs);
  env_["DEMO_WIDTH"] = "12";
  auto context = Context::create(options());
  ASSERT_TRUE(context);
  auto section = config::PluginSection::bind((*context)->config(), "demo", "test plugin", &table);
  ASSERT_TRUE(section) << section.error().message;
  PluginHostApi host((*context)->config(), std::move(section).value());
  const nccom_host_api_t& api = host.api();
  EXPECT_STREQ(api.config_get(api.host_ctx, "width"), "12");
  EXPECT_STREQ(api.config_get(api.host_ctx, "mode"), "");
  EXPECT_EQ(api.config_get(api.host_ctx, "plugin"), nullptr) << "no fallback to net.plugin";
  EXPECT_STREQ(api.config_get(api.host_ctx, "net.plugin"), "");
  ASSERT_NE(host.section(), nullptr);
  EXPECT_EQ(host.section()->find("width")->source.to_string(), "env DEMO_WIDTH");
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// NCCL_DEBUG=verbose does not stop anything: NCCL's debug init ignores a
// level it does not know, and so does libnccom, with one WARN (also handed
// to the runtime's log) naming what it uses instead.
TEST_F(CoreContext, BadLoggingVariablesWarnAndFallBack) {
  env_["NCCL_DEBUG"] = "verbose";
  env_["NCCL_DEBUG_FILE"] = log_path_;
  auto context = Context::create(options());
  ASSERT_TRUE(context) << context.error().message;
  const std::string log = read_log();
  EXPECT_EQ(count(log,
                  "CCOM WARN NCCL_DEBUG=\"verbose\" is not valid: expected one of \"NONE\", "
                  "\"VERSION\", \"WARN\", \"INFO\", \"ABORT\", \"TRACE\" (any letter case); "
                  "ignored, using \"WARN\" (the default of log.level)\n"),
            1)
      << log;
  std::lock_guard lock(g_printk_mutex);
  ASSERT_EQ(g_printk_lines.size(), 1u);
  EXPECT_NE(g_printk_lines[0].first.find("NCCL_DEBUG=\"verbose\" is not valid"), std::string::npos);
}

// Unknown subsystem names are dropped, the known ones of the list used.
TEST_F(CoreContext, UnknownSubsystemsAreDroppedAndTheOthersLog) {
  env_["NCCL_DEBUG"] = "INFO";
  env_["NCCL_DEBUG_SUBSYS"] = "FOO,env";
  env_["NCCL_DEBUG_FILE"] = log_path_;
  auto context = Context::create(options());
  ASSERT_TRUE(context) << context.error().message;
  const std::string log = read_log();
  EXPECT_EQ(count(log, "CCOM WARN NCCL_DEBUG_SUBSYS=\"FOO,env\": \"FOO\" is not a known name: "), 1)
      << log;
  EXPECT_NE(log.find("; dropped, using \"env\" (the known names of NCCL_DEBUG_SUBSYS)\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("CCOM INFO configuration: "), std::string::npos) << log;  // ENV
}

// The log.level and log.subsys knobs list exactly the names the logger
// parses (the configuration checks them; the logger uses them).
TEST_F(CoreContext, LogKnobsAllowWhatTheLoggerParses) {
  auto context = Context::create(options());
  ASSERT_TRUE(context);
  const config::Config& config = (*context)->config();
  for (const char* key : {"log.level", "log.subsys"}) {
    std::string listed;
    for (std::string_view name : config.entry(key).knob->allowed)
      listed += (listed.empty() ? "" : ", ") + std::string(name);
    const bool level = std::string(key) == "log.level";
    auto parsed = log::parse_settings(level ? "NOPE" : "", level ? "" : "NOPE", "");
    ASSERT_FALSE(parsed) << key;
    const std::string& message = parsed.error().message;
    EXPECT_EQ(message.substr(message.find("valid: ") + 7), listed) << key;
  }
}

// Misspelt and unread variables, and a section for a plugin that is nowhere.
TEST_F(CoreContext, EnvironmentReportNamesWhatNothingUses) {
  const std::string file = dir_ + "/plugins.toml";
  std::ofstream(file) << "[plugins.sockets]\nnthreads = 2\n[plugins.elsewhere]\nwidth = 1\n"
                         "[plugins.demo]\nwidth = 4\n";
  env_["NCCOM_CONFIG"] = file;
  auto context = Context::create(options());
  ASSERT_TRUE(context) << context.error().message;
  const std::vector<std::string> set = {"NCCOM_BOOTSTRAP_PROTOKOL", "NCCL_ALGO", "NCCOM_TEST_CHILD",
                                        "NCCOM_DEMO_WIDTH", "NCCL_DEBUG"};
  EnvironmentReport before = environment_report(**context, set);
  EXPECT_EQ(before.warnings.size(), 3u);  // PROTOKOL, DEMO_WIDTH, sockets
  EXPECT_EQ(before.infos.size(), 3u);     // NCCL_ALGO, elsewhere, demo
  // A plugin bound against the configuration makes its section and its
  // variables known.
  static const char* const env_width[] = {"NCCOM_DEMO_WIDTH", nullptr};
  static const nccom_knob_t knobs[] = {
      {"width", NCCOM_KNOB_INT, 0, "8", "Width of the demo.", 1, 64, nullptr, env_width}};
  static const nccom_knob_table_t table = NCCOM_KNOB_TABLE(knobs);
  ASSERT_TRUE(config::PluginSection::bind((*context)->config(), "demo", "test plugin", &table));
  const EnvironmentReport report = environment_report(**context, set);
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_EQ(report.warnings[0],
            "NCCOM_BOOTSTRAP_PROTOKOL is not a variable nccom reads; did you mean "
            "NCCOM_BOOTSTRAP_PROTOCOL?");
  EXPECT_NE(report.warnings[1].find("[plugins.sockets] (" + file + ":2) names no plugin"),
            std::string::npos)
      << report.warnings[1];
  EXPECT_NE(report.warnings[1].find("did you mean [plugins.socket]?"), std::string::npos);
  ASSERT_EQ(report.infos.size(), 2u);
  EXPECT_EQ(report.infos[0], "NCCL_ALGO is an NCCL setting nccom does not read");
  EXPECT_NE(report.infos[1].find("[plugins.elsewhere]"), std::string::npos) << report.infos[1];
}

// config/environment.cc knows the section names and variables of nccom's
// own plugins without loading them; this holds those lists to the plugins.
TEST_F(CoreContext, ShippedPluginNamesAndVariablesAreKnown) {
  auto context = Context::create(options());
  ASSERT_TRUE(context);
  const config::Config& config = (*context)->config();
  const std::string dir = std::string(NCCOM_BUILD_DIR) + "/lib/nccom/";
  const std::pair<const char*, nccom_plugin_kind_t> native[] = {
      {"libnccom-topo_neuron.so", NCCOM_PLUGIN_KIND_TOPOLOGY},
      {"libnccom-topo_nccl.so", NCCOM_PLUGIN_KIND_TOPOLOGY},
      {"libnccom-p2p.so", NCCOM_PLUGIN_KIND_TRANSPORT},
      {"libnccom-net_neuron.so", NCCOM_PLUGIN_KIND_TRANSPORT}};
  std::vector<std::unique_ptr<plugin::LoadedPlugin>> opened;
  for (const auto& [file, kind] : native) {
    auto p = plugin::open_plugin(dir + file, kind, {});
    ASSERT_TRUE(p) << file << ": " << p.error().message;
    ASSERT_TRUE(config::PluginSection::bind(config, (*p)->name(), file, (*p)->knobs())) << file;
    opened.push_back(std::move(p).value());
  }
  std::vector<void*> handles;
  for (const std::string& path :
       {dir + "libnccom-net-socket.so", std::string(NCCOM_BUILD_DIR) + "/lib/libnccom-net.so"}) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    handles.push_back(handle);
    const auto* decl =
        static_cast<const nccom_net_config_t*>(dlsym(handle, NCCOM_NET_CONFIG_SYMBOL));
    ASSERT_NE(decl, nullptr) << path;
    ASSERT_TRUE(config::PluginSection::bind(config, decl->name, path, decl->knobs)) << path;
  }
  const config::PluginClaims claims = config.plugin_claims();
  const auto names = config::shipped_plugin_names();
  const auto variables = config::shipped_plugin_variables();
  EXPECT_EQ(claims.sections.size(), names.size());
  for (const std::string& name : claims.sections)
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  EXPECT_EQ(claims.variables.size(), variables.size());
  for (const std::string& name : claims.variables)
    EXPECT_NE(std::find(variables.begin(), variables.end(), name), variables.end()) << name;
  opened.clear();
  for (void* handle : handles) dlclose(handle);
}

TEST_F(CoreContext, DefaultOptionsLookNextToTheLibrary) {
  const config::LoadOptions o = default_load_options();
  ASSERT_EQ(o.default_paths.size(), 2u);
  EXPECT_EQ(o.default_paths[0], "/etc/nccom/nccom.toml");
  EXPECT_NE(o.default_paths[1].find("share/nccom/nccom.toml"), std::string::npos);
  EXPECT_EQ(o.tables.size(), 1u);
}

}  // namespace
}  // namespace nccom::core
