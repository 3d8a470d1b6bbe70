// NeuronPluginKnobs: libnccom-topo_neuron.so declares its knobs in its
// descriptor. Bound by the host's configuration layer, the real table takes
// its values from [plugins.neuron], from a cluster section and from the
// environment; the shipped nccom.toml
// states each one with its default.
#include "build_paths.h"
#include "config/config.h"
#include "config/knob.h"
#include "config/plugin_knobs.h"
#include "plugin/plugin_loader.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

namespace nccom::topo_neuron {
namespace {

class NeuronPluginKnobs : public ::testing::Test {
 protected:
  void SetUp() override {
    nccom_host_api_t host{};
    host.struct_size = sizeof host;
    host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
    auto p = plugin::load_plugin("topo_neuron", NCCOM_PLUGIN_KIND_TOPOLOGY, host,
                                 {std::string(NCCOM_BUILD_DIR) + "/lib/nccom"});
    ASSERT_TRUE(p.ok()) << p.error().message;
    plugin_ = std::move(*p);
    ASSERT_NE(plugin_->knobs(), nullptr) << "topo_neuron declares no knobs";
    dir_ =
        std::filesystem::temp_directory_path() / ("nccom-neuron-knobs-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& text) {
    const std::string path = (dir_ / "nccom.toml").string();
    std::ofstream(path) << text;
    return path;
  }

  // The plugin's section under `env` (NCCOM_CONFIG names the file, if any).
  Result<config::PluginSection> bind(std::map<std::string, std::string> env) {
    config::LoadOptions options;
    options.tables = {config::host_knobs()};
    auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(env));
    options.getenv = [shared](const char* name) -> const char* {
      auto it = shared->find(name);
      return it == shared->end() ? nullptr : it->second.c_str();
    };
    auto cfg = config::load(options);
    if (!cfg) return cfg.take_error();
    return config::PluginSection::bind(*cfg, plugin_->name(), "topology plugin neuron",
                                       plugin_->knobs());
  }

  std::unique_ptr<plugin::LoadedPlugin> plugin_;
  std::filesystem::path dir_;
};

TEST_F(NeuronPluginKnobs, DefaultsAreTheDocumentedOnes) {
  auto section = bind({});
  ASSERT_TRUE(section.ok()) << section.error().message;
  EXPECT_EQ(section->plugin(), "neuron");
  ASSERT_EQ(section->entries().size(), 2u);
  EXPECT_EQ(section->find("disable_verify")->text(), "false");
  EXPECT_EQ(section->find("default_new_algorithm")->text(), "true");
}

TEST_F(NeuronPluginKnobs, TheFileItsClusterSectionsAndTheEnvironmentReachThePlugin) {
  const std::string path = write(
      "cluster = \"a\"\n"
      "[plugins.neuron]\n"
      "disable_verify = true\n"
      "default_new_algorithm = false\n"
      "[clusters.a.plugins.neuron]\n"
      "default_new_algorithm = true\n");
  auto fromFile = bind({{"NCCOM_CONFIG", path}});
  ASSERT_TRUE(fromFile.ok()) << fromFile.error().message;
  EXPECT_EQ(fromFile->find("disable_verify")->text(), "true");
  EXPECT_EQ(fromFile->find("disable_verify")->source.to_string(), path + ":3");
  EXPECT_EQ(fromFile->find("default_new_algorithm")->text(), "true")
      << "the active cluster's section beats the top level";

  // Set means on, as libnccom reads CCOM_DBG_DISABLE_VERIFY_TOPOLOGY.
  auto fromEnv = bind({{"CCOM_DBG_DISABLE_VERIFY_TOPOLOGY", "anything"},
                       {"NCCOM_GRAPH_DEFAULT_NEW_ALGORITHM", "0"}});
  ASSERT_TRUE(fromEnv.ok()) << fromEnv.error().message;
  EXPECT_EQ(fromEnv->find("disable_verify")->text(), "true");
  EXPECT_EQ(fromEnv->find("default_new_algorithm")->text(), "false");
}

TEST_F(NeuronPluginKnobs, ABadValueNamesThePluginAndTheKey) {
  const std::string path = write("[plugins.neuron]\ndisable_verify = \"yes\"\n");
  auto section = bind({{"NCCOM_CONFIG", path}});
  ASSERT_FALSE(section.ok());
  EXPECT_NE(section.error().message.find("topology plugin neuron"), std::string::npos)
      << section.error().message;
  EXPECT_NE(section.error().message.find("disable_verify"), std::string::npos)
      << section.error().message;
  EXPECT_NE(section.error().message.find(path + ":2"), std::string::npos)
      << section.error().message;
}

TEST_F(NeuronPluginKnobs, TheShippedFileStatesEveryKnobWithItsDefault) {
  const std::string shipped = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";
  auto fromFile = bind({{"NCCOM_CONFIG", shipped}});
  auto defaults = bind({});
  ASSERT_TRUE(fromFile.ok()) << fromFile.error().message;
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  for (std::size_t i = 0; i < fromFile->entries().size(); ++i) {
    const config::Entry& e = fromFile->entries()[i];
    EXPECT_EQ(e.source.kind, config::Source::Kind::File) << e.key() << " is missing";
    EXPECT_EQ(e.value, defaults->entries()[i].value) << e.key();
  }
}

}  // namespace
}  // namespace nccom::topo_neuron
