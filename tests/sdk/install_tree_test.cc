// The install tree stands alone: `cmake --install` into a fresh prefix, then
// nccom-test (over nccom's libfabric plugin), nccom-info and
// nccom-plugin-check run from that prefix with a bare environment, and the
// dynamic loader's own record (LD_DEBUG=libs, one file per process, the ranks
// included) shows that every library any of them loaded came from the prefix
// or the system, none from the build or source tree.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

std::string output(const nccom_test::ChildResult& r) { return r.out + r.err; }

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

class InstallTree : public testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.path() + "/prefix";
    ld_dir_ = dir_.path() + "/ld";
    std::filesystem::create_directories(ld_dir_);
    const auto r = nccom_test::run_child(
        CMAKE_COMMAND, {"--install", nccom_test::build_dir(), "--prefix", prefix_}, {});
    ASSERT_EQ(r.exit_code, 0) << output(r);
  }

  // The tool from the prefix, with nothing pointing at the build: no
  // configuration file, PATH of the system only (and, from the harness, no
  // LD_LIBRARY_PATH).
  nccom_test::ChildResult run(const std::string& tool, const std::vector<std::string>& args,
                              std::map<std::string, std::string> env = {}) {
    env.insert({{"PATH", "/usr/bin:/bin"},
                {"NCCOM_CONFIG", ""},
                {"LD_DEBUG", "libs"},
                {"LD_DEBUG_OUTPUT", ld_dir_ + "/ld"}});
    return nccom_test::run_child(prefix_ + "/bin/" + tool, args, env);
  }

  // Every library the loader initialised in any process so far.
  std::set<std::string> loaded() const {
    std::set<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(ld_dir_)) {
      std::ifstream in(entry.path());
      std::string line;
      while (std::getline(in, line)) {
        const auto at = line.find("calling init: ");
        if (at != std::string::npos) out.insert(line.substr(at + 14));
      }
    }
    return out;
  }

  nccom_test::TempDir dir_;
  std::string prefix_, ld_dir_;
};

TEST_F(InstallTree, ToolsRunFromThePrefixAloneAndLoadNothingOfTheBuild) {
  const auto test = run("nccom-test", {"-r", "2", "-N", "2", "--net", "ofi", "-b", "8", "-e", "4K",
                                       "-f", "8", "-n", "2", "-w", "1", "--check", "allr"});
  ASSERT_EQ(test.exit_code, 0) << output(test);
  EXPECT_NE(test.out.find("# net plugin: AWS Libfabric (Neuron ncclNet_v6) from " + prefix_ +
                          "/lib/libnccom-net.so, the runtime's libnccom-net.so"),
            std::string::npos)
      << test.out;
  EXPECT_NE(test.out.find("# Wrong elements       : 0 OK"), std::string::npos) << test.out;

  const auto info = run("nccom-info", {});
  ASSERT_EQ(info.exit_code, 0) << output(info);
  EXPECT_NE(info.out.find("loaded (handed to libnccom by nrt_get_libnccl_net)"), std::string::npos)
      << info.out;

  // Without FI_PROVIDER the plugin looks for EFA only, as the Neuron SDK's.
  const auto check = run("nccom-plugin-check", {"--only", "init", prefix_ + "/lib/libnccom-net.so"},
                         {{"FI_PROVIDER", "tcp;ofi_rxm"}});
  EXPECT_EQ(check.exit_code, 0) << output(check);

  const std::set<std::string> libs = loaded();
  const std::string build = nccom_test::build_dir();
  const std::string source = nccom_test::source_dir();
  std::set<std::string> from_prefix;
  for (const std::string& lib : libs) {
    EXPECT_FALSE(starts_with(lib, build) || starts_with(lib, source))
        << lib << " was loaded from the build or source tree";
    if (starts_with(std::filesystem::weakly_canonical(lib).string(),
                    std::filesystem::weakly_canonical(prefix_).string())) {
      from_prefix.insert(std::filesystem::path(lib).filename().string());
    }
  }
  // What the runs must have taken from the prefix (the ranks' plugins too).
  for (const char* want : {"libnccom.so", "libnrt.so.1", "libnccom-net.so",
                           "libnccom-net_neuron.so", "libnccom-p2p.so"}) {
    EXPECT_EQ(from_prefix.count(want), 1u) << want << " was not loaded from " << prefix_;
  }
}

}  // namespace
