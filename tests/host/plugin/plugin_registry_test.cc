// PluginRegistry::load_all: bad plugins reported once each and skipped,
// duplicates, lookup, and teardown order.
#include "plugin/plugin_registry.h"

#include "test_host.h"

#include <gtest/gtest.h>

#include <optional>

namespace nccom::plugin {
namespace {

using test::kPluginDir;
using test::plugin_file;
using test::TestHost;

const std::vector<std::filesystem::path> kDirs{kPluginDir};

struct Reported {
  std::vector<LoadError> errors;
  LoadErrorCallback callback() {
    return [this](const LoadError& e) { errors.push_back(e); };
  }
};

test_plugin_state_t* state_of(const LoadedPlugin& p) {
  return static_cast<test_plugin_state_t*>(p.library().symbol(TEST_PLUGIN_STATE_SYMBOL));
}

TEST(PluginRegistry, GoodPluginLoadsAfterBadOnesAndEachFailureIsReportedOnce) {
  TestHost host;
  Reported reported;
  PluginRegistry registry;
  const std::vector<std::string> list{"abi99",     "garbage",   "null_name", "good",
                                      "zzz",       "null_ops",  "size0",     "init_error",
                                      "no_symbol", "undefined", "good_b"};
  EXPECT_EQ(registry.load_all(list, NCCOM_PLUGIN_KIND_NET, host.api, kDirs, reported.callback()),
            2u);

  const std::vector<std::pair<std::string, LoadErrorKind>> expected{
      {plugin_file("abi99"), LoadErrorKind::AbiMismatch},
      {plugin_file("garbage"), LoadErrorKind::InvalidFile},
      {plugin_file("null_name"), LoadErrorKind::NullSlot},
      {"zzz", LoadErrorKind::NotFound},
      {plugin_file("null_ops"), LoadErrorKind::NullSlot},
      {plugin_file("size0"), LoadErrorKind::BadDescriptor},
      {plugin_file("init_error"), LoadErrorKind::InitFailed},
      {plugin_file("no_symbol"), LoadErrorKind::MissingSymbol},
      {plugin_file("undefined"), LoadErrorKind::DlopenFailed},
  };
  ASSERT_EQ(reported.errors.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(reported.errors[i].path, expected[i].first) << i;
    EXPECT_EQ(reported.errors[i].kind, expected[i].second) << reported.errors[i].message;
  }

  EXPECT_EQ(registry.size(), 2u);
  LoadedPlugin* good = registry.find(NCCOM_PLUGIN_KIND_NET, "good");
  ASSERT_NE(good, nullptr);
  EXPECT_TRUE(good->initialized());
  EXPECT_EQ(state_of(*good)->init_calls, 1);
  EXPECT_NE(registry.find(NCCOM_PLUGIN_KIND_NET, "good_b"), nullptr);
  EXPECT_EQ(registry.find(NCCOM_PLUGIN_KIND_NET, "abi99"), nullptr);
  EXPECT_EQ(registry.find(NCCOM_PLUGIN_KIND_TOPOLOGY, "good"), nullptr);
  auto nets = registry.plugins(NCCOM_PLUGIN_KIND_NET);
  ASSERT_EQ(nets.size(), 2u);
  EXPECT_EQ(nets[0]->name(), "good");
  EXPECT_EQ(nets[1]->name(), "good_b");
}

TEST(PluginRegistry, DuplicateNameFirstWinsAndSecondIsReportedBeforeInit) {
  TestHost host;
  Reported reported;
  PluginRegistry registry;
  EXPECT_EQ(registry.load_all({"good", "good_copy"}, NCCOM_PLUGIN_KIND_NET, host.api, kDirs,
                              reported.callback()),
            1u);
  ASSERT_EQ(reported.errors.size(), 1u);
  const LoadError& e = reported.errors[0];
  EXPECT_EQ(e.kind, LoadErrorKind::DuplicateName);
  EXPECT_EQ(e.path, plugin_file("good_copy"));
  EXPECT_NE(e.message.find(plugin_file("good_copy") + ": plugin \"good\" is already loaded from " +
                           plugin_file("good")),
            std::string::npos)
      << e.message;
  LoadedPlugin* good = registry.find(NCCOM_PLUGIN_KIND_NET, "good");
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(good->plugin_version(), "1.0");
  EXPECT_EQ(host.config_calls, 1) << "the duplicate's init ran";
  EXPECT_FALSE(test::is_mapped(plugin_file("good_copy")));
}

TEST(PluginRegistry, SameFileTwiceIsADuplicateAndTheFirstSurvives) {
  TestHost host;
  Reported reported;
  PluginRegistry registry;
  EXPECT_EQ(registry.load_all({"good", plugin_file("good")}, NCCOM_PLUGIN_KIND_NET, host.api, kDirs,
                              reported.callback()),
            1u);
  ASSERT_EQ(reported.errors.size(), 1u);
  EXPECT_EQ(reported.errors[0].kind, LoadErrorKind::DuplicateName);
  // The refused second open shares the loader's handle; dropping it must
  // not unmap the plugin still in use.
  EXPECT_TRUE(test::is_mapped(plugin_file("good")));
  LoadedPlugin* good = registry.find(NCCOM_PLUGIN_KIND_NET, "good");
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(state_of(*good)->init_calls, 1);
  EXPECT_EQ(state_of(*good)->fini_calls, 0);
}

TEST(PluginRegistry, SameNameOfAnotherKindIsNotADuplicate) {
  TestHost host;
  Reported reported;
  PluginRegistry registry;
  EXPECT_EQ(
      registry.load_all({"good"}, NCCOM_PLUGIN_KIND_NET, host.api, kDirs, reported.callback()), 1u);
  EXPECT_EQ(registry.load_all({"good_topo"}, NCCOM_PLUGIN_KIND_TOPOLOGY, host.api, kDirs,
                              reported.callback()),
            1u);
  EXPECT_TRUE(reported.errors.empty());
  LoadedPlugin* net = registry.find(NCCOM_PLUGIN_KIND_NET, "good");
  LoadedPlugin* topo = registry.find(NCCOM_PLUGIN_KIND_TOPOLOGY, "good");
  ASSERT_NE(net, nullptr);
  ASSERT_NE(topo, nullptr);
  EXPECT_NE(net, topo);
  EXPECT_EQ(topo->kind(), NCCOM_PLUGIN_KIND_TOPOLOGY);
}

std::vector<std::string> g_fini_order;
void record_fini_order(void* arg) { g_fini_order.push_back(static_cast<const char*>(arg)); }

TEST(PluginRegistry, PluginsAreFinalisedInReverseLoadOrder) {
  TestHost host;
  g_fini_order.clear();
  {
    PluginRegistry registry;
    EXPECT_EQ(registry.load_all({"good", "good_b"}, NCCOM_PLUGIN_KIND_NET, host.api, kDirs, {}),
              2u);
    for (const char* name : {"good", "good_b"}) {
      test_plugin_state_t* state = state_of(*registry.find(NCCOM_PLUGIN_KIND_NET, name));
      state->on_fini = &record_fini_order;
      state->on_fini_arg = const_cast<char*>(name);
    }
  }
  EXPECT_EQ(g_fini_order, (std::vector<std::string>{"good_b", "good"}));
  EXPECT_FALSE(test::is_mapped(plugin_file("good")));
  EXPECT_FALSE(test::is_mapped(plugin_file("good_b")));
}

TEST(PluginRegistry, EmptyCallbackIsAllowed) {
  TestHost host;
  PluginRegistry registry;
  EXPECT_EQ(registry.load_all({"garbage", "good"}, NCCOM_PLUGIN_KIND_NET, host.api, kDirs, {}), 1u);
}

}  // namespace
}  // namespace nccom::plugin
