// nccom-config as an operator runs it: a real process, real files, real
// environment.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

struct ProcessOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

ProcessOutput run(const std::string& env_and_args) {
  const std::string command = env_and_args + " 2>&1";
  ProcessOutput result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-config";

class ToolsNccomConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/nccom-config-tool-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ToolsNccomConfig, PrintsEveryKnobWithItsSource) {
  const ProcessOutput r = run("env -u NCCL_DEBUG -u NCCOM_CONFIG -u NCCOM_CLUSTER " + kTool);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* key : {"log.level", "log.subsys", "log.file", "bootstrap.socket_timeout_ms",
                          "bootstrap.socket_ifname", "net.plugin", "plugins.search_path"}) {
    EXPECT_NE(r.output.find(key), std::string::npos) << key;
  }
  // The shipped default file next to the build tree's lib/ is found.
  EXPECT_NE(r.output.find("share/nccom/nccom.toml"), std::string::npos) << r.output;
}

TEST_F(ToolsNccomConfig, EnvironmentOverrideIsShownAsSuch) {
  const ProcessOutput r = run("NCCL_DEBUG=info " + kTool);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"info\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("env NCCL_DEBUG"), std::string::npos) << r.output;
}

TEST_F(ToolsNccomConfig, CheckReportsFileLineColumnAndExitsOne) {
  const std::string file = dir_ + "/bad.toml";
  std::ofstream(file) << "[net.socket]\nnthreads = \"four\"\n";
  const ProcessOutput r = run(kTool + " --check " + file);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(file + ":2:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("net.socket.nthreads"), std::string::npos) << r.output;
}

TEST_F(ToolsNccomConfig, CheckAcceptsTheShippedClusterFile) {
  const ProcessOutput r = run(kTool + " --check " + NCCOM_SOURCE_DIR + "/config/clusters/loopback-dev.toml");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OK"), std::string::npos);
}

TEST_F(ToolsNccomConfig, UnknownClusterIsAnError) {
  const ProcessOutput r = run(kTool + " --cluster no-such-cluster");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("unknown cluster \"no-such-cluster\""), std::string::npos) << r.output;
}

TEST_F(ToolsNccomConfig, BadArgumentsPrintUsage) {
  const ProcessOutput r = run(kTool + " --bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("usage: nccom-config"), std::string::npos);
}

}  // namespace
