// The runtime's libnccom loader (libnrt's ncclInit load and its nccl*
// wrappers), each scenario in a real child process running emu_loader_driver,
// since the search path for libnccom.so is fixed when a process starts.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using nccom_test::ChildResult;
using nccom_test::parse_report;
using nccom_test::run_child;
using nccom_test::TempDir;

namespace {

constexpr const char* kNotLoadedBecauseNccomFailed =
    "libnccom-net.so was not opened: libnccom failed to load";

struct Scenario {
  ChildResult child;
  std::map<std::string, std::string> report;
  std::string log;  // the runtime log the driver printed

  std::string at(const std::string& key) const {
    const auto it = report.find(key);
    return it != report.end() ? it->second : "<missing " + key + ">";
  }
  int count_in_log(const std::string& needle) const {
    int n = 0;
    for (size_t pos = log.find(needle); pos != std::string::npos; pos = log.find(needle, pos + 1))
      ++n;
    return n;
  }
};

Scenario run_driver(const std::map<std::string, std::string>& env) {
  Scenario s;
  s.child = run_child(EMU_LOADER_DRIVER, {}, env);
  s.report = parse_report(s.child.out);
  const size_t log_at = s.child.out.find("--- log ---\n");
  if (log_at != std::string::npos) s.log = s.child.out.substr(log_at + 12);
  return s;
}

std::string describe(const Scenario& s) {
  return "exit " + std::to_string(s.child.exit_code) + ", signal " +
         std::to_string(s.child.signal) + "\n--- stdout ---\n" + s.child.out + "--- stderr ---\n" +
         s.child.err;
}

// A directory holding only a copy of libnrt.so.1: the runtime's $ORIGIN then
// has no libnccom.so next to it.
void copy_runtime_into(const std::string& dir) {
  fs::copy_file(NRT_LIBRARY, fs::path(dir) / "libnrt.so.1");
}

TEST(EmuLoader, RealLibnccomLoadsAllSlotsFromOneDlopen) {
  const Scenario s = run_driver({});
  ASSERT_EQ(s.child.exit_code, 0) << describe(s);
  EXPECT_EQ(s.at("status"), "0") << describe(s);
  EXPECT_EQ(s.at("status_all_threads_same"), "1");
  EXPECT_EQ(s.at("status_again"), "0");
  EXPECT_EQ(s.at("table"), "non-null");
  EXPECT_EQ(s.at("path"), std::string(NCCOM_LIBRARY_DIR) + "/libnccom.so");
  EXPECT_EQ(s.at("last_error"), "(null)");
  EXPECT_EQ(s.at("dlsym_count"), "37") << "eight concurrent loads must resolve the table once";
  EXPECT_EQ(s.at("slots_non_null"), "37");
  EXPECT_EQ(s.at("slots_in_nccom"), "37");
  EXPECT_EQ(s.at("slots_named_right"), "37");
  EXPECT_EQ(s.at("version"), "2.31.24.0");
  EXPECT_EQ(s.at("compat"), "89");
  EXPECT_EQ(s.count_in_log("[nrt] INFO: Using CCOM 2.31.24.0-" + s.at("git_hash") + "\n"), 1)
      << s.log;
  EXPECT_EQ(s.at("guard1"), "0");
  EXPECT_EQ(s.at("guard2"), "0");
  EXPECT_EQ(s.at("unloaded_table"), "null");
  // libfabric and the provider libraries it pulls in free nothing at
  // unload (their allocations would leak): libnccom-net.so pins it.
  EXPECT_EQ(s.at("libfabric_after_unload"), "loaded") << describe(s);
  EXPECT_EQ(s.at("reload_status"), "0");
  EXPECT_EQ(s.at("reload_dlsym_count"), "37");
  EXPECT_EQ(s.child.err, "") << "a successful load prints nothing at the default log level";
}

TEST(EmuLoader, IncompatibleCompatIdIsRejectedBeforeAnyOtherDlsym) {
  const Scenario s = run_driver({{"LD_LIBRARY_PATH", COMPAT88_DIR}});
  const std::string message =
      "Incompatible version of aws-neuronx-collectives.  Compatibility id: 88, expected: 89";
  ASSERT_EQ(s.child.exit_code, 0) << describe(s);
  EXPECT_EQ(s.at("status"), "1") << describe(s);
  EXPECT_EQ(s.at("status_all_threads_same"), "1");
  EXPECT_EQ(s.at("path"), std::string(COMPAT88_DIR) + "/libnccom.so");
  EXPECT_EQ(s.at("compat"), "88");
  EXPECT_EQ(s.at("last_error"), message);
  EXPECT_EQ(s.at("dlsym_count"), "1") << "only neuronGetVersionInfo may be looked up";
  EXPECT_EQ(s.at("table"), "null");
  EXPECT_EQ(s.at("slots_non_null"), "0");
  EXPECT_EQ(s.count_in_log("[nrt] WARN: " + message + "\n"), 1) << s.log;
  EXPECT_EQ(s.count_in_log("Using CCOM"), 0) << s.log;
  EXPECT_NE(s.child.err.find(message), std::string::npos) << "WARN lines reach stderr by default";
  EXPECT_EQ(s.at("net_msg"), kNotLoadedBecauseNccomFailed);
  EXPECT_EQ(s.at("reload_status"), "1");
  EXPECT_EQ(s.at("reload_dlsym_count"), "1");
}

TEST(EmuLoader, MissingExportLeavesAllSlotsNull) {
  const Scenario s = run_driver({{"LD_LIBRARY_PATH", MISSING_EXPORT_DIR}});
  ASSERT_EQ(s.child.exit_code, 0) << describe(s);
  EXPECT_EQ(s.at("status"), "1") << describe(s);
  const std::string prefix = "cannot find symbol \"neuronNetCloseListen\" in NCCL. Reason: ";
  const std::string error = s.at("last_error");
  EXPECT_EQ(error.rfind(prefix, 0), 0u) << error;
  EXPECT_NE(error.find("undefined symbol: neuronNetCloseListen", prefix.size()), std::string::npos)
      << "the reason is dlerror's text: " << error;
  EXPECT_EQ(s.at("dlsym_count"), "37") << "36 found in slot order, the 37th missing";
  EXPECT_EQ(s.at("slots_non_null"), "0") << "the 36 resolved slots must be zeroed too";
  EXPECT_EQ(s.at("table"), "null");
  EXPECT_EQ(s.count_in_log("Using CCOM 2.31.24.0-"), 1) << "the version gate passed first";
  EXPECT_EQ(s.count_in_log("[nrt] WARN: " + error + "\n"), 1) << s.log;
}

TEST(EmuLoader, MissingVersionProbeStopsAtTheFirstDlsym) {
  const Scenario s = run_driver({{"LD_LIBRARY_PATH", MISSING_VERSION_DIR}});
  ASSERT_EQ(s.child.exit_code, 0) << describe(s);
  EXPECT_EQ(s.at("status"), "1") << describe(s);
  EXPECT_EQ(s.at("last_error"),
            "Get Version Info API is not implemented by aws-neuronx-collectives.");
  EXPECT_EQ(s.at("dlsym_count"), "1") << "no other symbol may be looked up";
  EXPECT_EQ(s.at("table"), "null");
  EXPECT_EQ(s.count_in_log("Using CCOM"), 0) << s.log;
}

TEST(EmuLoader, MissingLibnccomGivesTheOpenError) {
  TempDir dir;
  copy_runtime_into(dir.path());
  const Scenario s = run_driver({{"LD_LIBRARY_PATH", dir.path()}});
  ASSERT_EQ(s.child.exit_code, 0) << describe(s);
  EXPECT_EQ(s.at("libnrt"), dir.path() + "/libnrt.so.1") << "the copy must be the runtime in use";
  EXPECT_EQ(s.at("status"), "1");
  const std::string prefix = "Error opening libnccom.so, cannot use collective operations! ... ";
  const std::string error = s.at("last_error");
  EXPECT_EQ(error.rfind(prefix, 0), 0u) << error;
  EXPECT_NE(error.find("libnccom.so: cannot open shared object file", prefix.size()),
            std::string::npos)
      << error;
  EXPECT_EQ(s.at("dlsym_count"), "0");
  EXPECT_EQ(s.at("version"), "(none)");
  EXPECT_EQ(s.at("path"), "(null)");
  EXPECT_EQ(s.at("net_msg"), kNotLoadedBecauseNccomFailed);
}

TEST(EmuLoader, StickyInitErrorIsReportedOnceThenCleared) {
  TempDir dir;
  copy_runtime_into(dir.path());
  const Scenario s = run_driver({{"LD_LIBRARY_PATH", dir.path()}});
  ASSERT_EQ(s.child.exit_code, 0) << describe(s);
  EXPECT_EQ(s.at("guard1"), "1") << "NRT_FAILURE on the first guarded call";
  EXPECT_EQ(s.at("guard2"), "13") << "then NRT_UNINITIALIZED: the error was cleared";
  EXPECT_EQ(s.count_in_log("[nrt] WARN: NCCL init error: " + s.at("last_error") + "\n"), 1)
      << s.log;
}

TEST(EmuLoader, NoNetPluginIsNotFatalAndSaysWhy) {
  TempDir dir;
  copy_runtime_into(dir.path());
  fs::create_symlink(fs::path(NCCOM_LIBRARY_DIR) / "libnccom.so",
                     fs::path(dir.path()) / "libnccom.so");
  const Scenario s = run_driver({{"LD_LIBRARY_PATH", dir.path()}});
  ASSERT_EQ(s.child.exit_code, 0) << describe(s);
  EXPECT_EQ(s.at("status"), "0") << describe(s);
  EXPECT_EQ(s.at("path"), dir.path() + "/libnccom.so");
  EXPECT_EQ(s.at("net_handle"), "null");
  EXPECT_EQ(s.at("net_err"), "1");
  EXPECT_NE(s.at("net_msg").find("libnccom-net.so: cannot open shared object file"),
            std::string::npos)
      << "the dlerror text recorded at load: " << s.at("net_msg");
  EXPECT_NE(s.at("net_hint").find("libfabric"), std::string::npos) << s.at("net_hint");
  EXPECT_EQ(s.count_in_log("[nrt] INFO: libnccom-net.so not loaded"), 1) << s.log;
  EXPECT_EQ(s.count_in_log("dlopened libnccom-net.so"), 0) << s.log;
}

TEST(EmuLoader, NetPluginHandleIsHandedToLibnccom) {
  const Scenario s = run_driver({{"LD_LIBRARY_PATH", WITH_NET_DIR}});
  ASSERT_EQ(s.child.exit_code, 0) << describe(s);
  EXPECT_EQ(s.at("status"), "0") << describe(s);
  EXPECT_EQ(s.at("net_handle"), "non-null");
  EXPECT_EQ(s.at("net_err"), "0");
  EXPECT_EQ(s.at("net_msg"), "");
  EXPECT_EQ(s.at("net_handle_matches"), "1");
  EXPECT_EQ(s.at("net_marker"), "nccom emu dummy libnccom-net.so");
  EXPECT_EQ(s.count_in_log("[nrt] INFO: dlopened libnccom-net.so\n"), 1) << s.log;
  EXPECT_EQ(s.at("unloaded_net"), "null");
}

}  // namespace
