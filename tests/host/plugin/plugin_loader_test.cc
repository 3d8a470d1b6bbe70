// load_plugin / open_plugin: one broken plugin per error class, the search
// path, and the init/fini lifecycle of a good plugin.
#include "plugin/plugin_loader.h"

#include "test_host.h"

#include <gtest/gtest.h>

#include <ostream>

namespace nccom::plugin {
namespace {

using test::kAltPluginDir;
using test::kPluginDir;
using test::plugin_file;
using test::TestHost;

const std::vector<std::filesystem::path> kDirs{kPluginDir};

test_plugin_state_t* state_of(const LoadedPlugin& p) {
  return static_cast<test_plugin_state_t*>(p.library().symbol(TEST_PLUGIN_STATE_SYMBOL));
}

// ---- one broken plugin per error class ------------------------------------

struct BadCase {
  const char* name;  // bare name: libnccom-<name>.so in kPluginDir
  LoadErrorKind kind;
  const char* expected;  // substring after "<path>: "
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) { return os << c.name; }

class PluginLoaderBad : public testing::TestWithParam<BadCase> {};

TEST_P(PluginLoaderBad, GivesItsKindAndMessage) {
  const BadCase& c = GetParam();
  TestHost host;
  auto plugin = load_plugin(c.name, NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
  ASSERT_FALSE(plugin.ok()) << c.name << " loaded";
  const LoadError& e = plugin.error();
  EXPECT_EQ(e.kind, c.kind) << to_string(e.kind) << ": " << e.message;
  EXPECT_EQ(e.path, plugin_file(c.name));
  EXPECT_NE(e.message.find(plugin_file(c.name) + ": "), std::string::npos) << e.message;
  EXPECT_NE(e.message.find(c.expected), std::string::npos) << e.message;
  // Rejected plugins are not left mapped (their fini would abort if called).
  EXPECT_FALSE(test::is_mapped(plugin_file(c.name)));
}

INSTANTIATE_TEST_SUITE_P(
    PluginErrorClasses, PluginLoaderBad,
    testing::Values(
        BadCase{"garbage", LoadErrorKind::InvalidFile, ": not an ELF file"},
        BadCase{"undefined", LoadErrorKind::DlopenFailed,
                "undefined symbol: nccom_test_missing_function"},
        BadCase{"no_symbol", LoadErrorKind::MissingSymbol,
                ": no symbol nccom_plugin; not an nccom plugin?"},
        BadCase{"abi99", LoadErrorKind::AbiMismatch, "plugin ABI version got 99, supports 1"},
        BadCase{"size0", LoadErrorKind::BadDescriptor, "descriptor struct_size 0 is smaller"},
        BadCase{"unknown_kind", LoadErrorKind::BadDescriptor, "descriptor kind 7 is unknown"},
        BadCase{"wrong_kind", LoadErrorKind::BadDescriptor,
                "plugin is of kind topology, but a net plugin was requested"},
        BadCase{"null_name", LoadErrorKind::NullSlot,
                "plugin \"(unnamed)\" has NULL mandatory field name"},
        BadCase{"empty_name", LoadErrorKind::BadDescriptor, "plugin name is empty"},
        BadCase{"null_version", LoadErrorKind::NullSlot,
                "plugin \"null_version\" has NULL mandatory field plugin_version"},
        BadCase{"null_ops", LoadErrorKind::NullSlot,
                "plugin \"null_ops\" has NULL mandatory field ops"},
        BadCase{"small_ops", LoadErrorKind::BadDescriptor,
                "plugin \"small_ops\" ops struct_size 4 is smaller"},
        BadCase{"null_init", LoadErrorKind::NullSlot,
                "plugin \"null_init\" has NULL mandatory slot ops->init"},
        BadCase{"init_error", LoadErrorKind::InitFailed,
                "plugin \"init_error\" init returned NCCOM_PLUGIN_ERROR (1)"}),
    [](const testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(PluginLoader, DlopenFailureCarriesTheLoaderText) {
  TestHost host;
  auto plugin = load_plugin("undefined", NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.error().kind, LoadErrorKind::DlopenFailed);
  EXPECT_NE(plugin.error().message.find("dlopen failed: "), std::string::npos)
      << plugin.error().message;
  EXPECT_NE(plugin.error().message.find("undefined symbol: nccom_test_missing_function"),
            std::string::npos)
      << plugin.error().message;
}

TEST(PluginLoader, KindsAreDistinctNames) {
  EXPECT_STREQ(to_string(LoadErrorKind::NotFound), "NotFound");
  EXPECT_STREQ(to_string(LoadErrorKind::DuplicateName), "DuplicateName");
  EXPECT_STRNE(to_string(LoadErrorKind::NullSlot), to_string(LoadErrorKind::BadDescriptor));
}

// ---- locating ---------------------------------------------------------------

TEST(PluginLoaderSearch, BareNameFindsDecoratedFileInSearchDir) {
  TestHost host;
  auto plugin =
      load_plugin("good", NCCOM_PLUGIN_KIND_NET, host.api, {"/nonexistent-dir", kPluginDir});
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  EXPECT_EQ(plugin.value()->path(), kPluginDir / "libnccom-good.so");
  EXPECT_EQ(plugin.value()->name(), "good");
  EXPECT_EQ(plugin.value()->plugin_version(), "1.0");
  EXPECT_EQ(plugin.value()->kind(), NCCOM_PLUGIN_KIND_NET);
  EXPECT_EQ(plugin.value()->capabilities(), 0x5u);
}

TEST(PluginLoaderSearch, SearchDirsAreTriedInOrder) {
  TestHost host;
  auto alt_first =
      load_plugin("good", NCCOM_PLUGIN_KIND_NET, host.api, {kAltPluginDir, kPluginDir});
  ASSERT_TRUE(alt_first.ok()) << alt_first.error().message;
  EXPECT_EQ(alt_first.value()->plugin_version(), "alt");
  EXPECT_EQ(alt_first.value()->path(), kAltPluginDir / "libnccom-good.so");

  auto main_first =
      load_plugin("good", NCCOM_PLUGIN_KIND_NET, host.api, {kPluginDir, kAltPluginDir});
  ASSERT_TRUE(main_first.ok()) << main_first.error().message;
  EXPECT_EQ(main_first.value()->plugin_version(), "1.0");
}

TEST(PluginLoaderSearch, BareFileNameIsTriedAsIs) {
  TestHost host;
  auto plugin = load_plugin("libnccom-good_b.so", NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  EXPECT_EQ(plugin.value()->name(), "good_b");
}

TEST(PluginLoaderSearch, CandidatesInOrder) {
  auto c = plugin_candidates("socket", {"/a", "/b"});
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], "/a/libnccom-socket.so");
  EXPECT_EQ(c[1], "/b/libnccom-socket.so");
  EXPECT_EQ(c[2], "/a/socket");
  EXPECT_EQ(c[3], "/b/socket");
  EXPECT_EQ(plugin_candidates("x/y.so", {"/a"}), std::vector<std::filesystem::path>{"x/y.so"});
}

TEST(PluginLoaderSearch, PathIsNotSearched) {
  TestHost host;
  auto by_path = load_plugin(plugin_file("good"), NCCOM_PLUGIN_KIND_NET, host.api, {});
  ASSERT_TRUE(by_path.ok()) << by_path.error().message;

  const std::string missing = "no-such-dir/libnccom-good.so";
  auto plugin = load_plugin(missing, NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.error().kind, LoadErrorKind::NotFound);
  EXPECT_EQ(plugin.error().path, missing);
  EXPECT_NE(plugin.error().message.find(missing + ": no such plugin file"), std::string::npos)
      << plugin.error().message;
}

TEST(PluginLoaderSearch, NotFoundListsTheDirectoriesSearched) {
  TestHost host;
  auto plugin = load_plugin("zzz", NCCOM_PLUGIN_KIND_NET, host.api,
                            {"/nonexistent/one", kPluginDir, "/nonexistent/two"});
  ASSERT_FALSE(plugin.ok());
  const LoadError& e = plugin.error();
  EXPECT_EQ(e.kind, LoadErrorKind::NotFound);
  EXPECT_EQ(e.path, "zzz");
  EXPECT_NE(e.message.find("plugin \"zzz\" not found: tried libnccom-zzz.so and zzz in "
                           "/nonexistent/one, " +
                           kPluginDir.string() + ", /nonexistent/two"),
            std::string::npos)
      << e.message;
}

TEST(PluginLoaderSearch, NotFoundWithoutSearchDirsSaysSo) {
  TestHost host;
  auto plugin = load_plugin("good", NCCOM_PLUGIN_KIND_NET, host.api, {});
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.error().kind, LoadErrorKind::NotFound);
  EXPECT_NE(plugin.error().message.find("no plugin search directory is configured"),
            std::string::npos)
      << plugin.error().message;
}

TEST(PluginLoaderSearch, EmptyNameIsNotFound) {
  TestHost host;
  auto plugin = load_plugin("", NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.error().kind, LoadErrorKind::NotFound);
}

TEST(PluginLoaderSearch, DirectoryNamedLikeThePluginIsSkipped) {
  // kPluginDir's parent holds a directory named "plugins": not a plugin.
  TestHost host;
  auto plugin = load_plugin("plugins", NCCOM_PLUGIN_KIND_NET, host.api, {kPluginDir.parent_path()});
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.error().kind, LoadErrorKind::NotFound);
}

// ---- lifecycle --------------------------------------------------------------

struct FiniProbe {
  std::string path;
  int calls = 0;
  bool mapped_during_fini = false;
};

void record_fini(void* arg) {
  auto* probe = static_cast<FiniProbe*>(arg);
  ++probe->calls;
  probe->mapped_during_fini = test::is_mapped(probe->path);
}

TEST(PluginLoaderLifecycle, InitOnceThenFiniOnceBeforeUnload) {
  TestHost host;
  FiniProbe probe{plugin_file("good")};
  {
    auto plugin = load_plugin("good", NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
    ASSERT_TRUE(plugin.ok()) << plugin.error().message;
    LoadedPlugin& p = *plugin.value();
    test_plugin_state_t* state = state_of(p);
    ASSERT_NE(state, nullptr);
    EXPECT_TRUE(p.initialized());
    EXPECT_EQ(state->init_calls, 1);
    EXPECT_EQ(state->fini_calls, 0);
    EXPECT_EQ(p.context(), state);  // what init stored
    state->on_fini = &record_fini;
    state->on_fini_arg = &probe;
  }
  EXPECT_EQ(probe.calls, 1);
  EXPECT_TRUE(probe.mapped_during_fini) << "library was closed before fini ran";
  EXPECT_FALSE(test::is_mapped(probe.path)) << "library still mapped after the plugin died";
}

TEST(PluginLoaderLifecycle, PluginGetsAStableCopyOfTheHostApi) {
  TestHost host;
  auto plugin = load_plugin("good", NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  test_plugin_state_t* state = state_of(*plugin.value());
  ASSERT_NE(state, nullptr);
  ASSERT_NE(state->host, nullptr);
  EXPECT_NE(state->host, &host.api);  // the loader's own copy, valid until fini
  EXPECT_EQ(state->host->host_ctx, &host);
  EXPECT_EQ(host.config_calls, 1);
  EXPECT_STREQ(state->greeting, "hello");
  EXPECT_EQ(TestHost::last_log(), "good init");
}

TEST(PluginLoaderLifecycle, AbsentFiniIsANoOp) {
  TestHost host;
  const std::string path = plugin_file("nofini");
  {
    auto plugin = load_plugin("nofini", NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
    ASSERT_TRUE(plugin.ok()) << plugin.error().message;
    EXPECT_EQ(plugin.value()->ops().fini, nullptr);
    EXPECT_EQ(state_of(*plugin.value())->init_calls, 1);
  }
  EXPECT_FALSE(test::is_mapped(path));
}

TEST(PluginLoaderLifecycle, OpenValidatesWithoutInit) {
  TestHost host;
  FiniProbe probe{plugin_file("good")};
  {
    auto plugin = open_plugin("good", NCCOM_PLUGIN_KIND_NET, kDirs);
    ASSERT_TRUE(plugin.ok()) << plugin.error().message;
    EXPECT_FALSE(plugin.value()->initialized());
    EXPECT_EQ(plugin.value()->context(), nullptr);
    test_plugin_state_t* state = state_of(*plugin.value());
    EXPECT_EQ(state->init_calls, 0);
    state->on_fini = &record_fini;
    state->on_fini_arg = &probe;
  }
  EXPECT_EQ(probe.calls, 0) << "fini ran for a plugin whose init never ran";
}

TEST(PluginLoaderLifecycle, SecondInitIsRefused) {
  TestHost host;
  auto plugin = load_plugin("good", NCCOM_PLUGIN_KIND_NET, host.api, kDirs);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  auto again = plugin.value()->init(host.api);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, LoadErrorKind::InitFailed);
  EXPECT_NE(again.error().message.find("already initialised"), std::string::npos);
  EXPECT_EQ(state_of(*plugin.value())->init_calls, 1);
}

TEST(PluginLoaderLifecycle, KindIsCheckedAgainstTheRequest) {
  TestHost host;
  auto as_topo = load_plugin("good_topo", NCCOM_PLUGIN_KIND_TOPOLOGY, host.api, kDirs);
  ASSERT_TRUE(as_topo.ok()) << as_topo.error().message;
  auto as_net = load_plugin("good_topo", NCCOM_PLUGIN_KIND_TRANSPORT, host.api, kDirs);
  ASSERT_FALSE(as_net.ok());
  EXPECT_EQ(as_net.error().kind, LoadErrorKind::BadDescriptor);
  EXPECT_NE(as_net.error().message.find("kind topology, but a transport plugin was requested"),
            std::string::npos)
      << as_net.error().message;
}

}  // namespace
}  // namespace nccom::plugin
