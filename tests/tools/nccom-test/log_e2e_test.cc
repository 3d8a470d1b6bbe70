// nccom-test's output and libnccom's log lines, end to end: the JSON
// document on stdout parses (with Python's json module) at every log level;
// log lines carry a timestamp and the device; INFO names where each value
// came from and the root address once; the runtime's EFA plugin failing is
// a WARN only where EFA is present.
#include "build_paths.h"
#include "child_process.h"

#include <nccom/util/efa.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";
const std::string kLoopbackDev =
    std::string(NCCOM_SOURCE_DIR) + "/config/clusters/loopback-dev.toml";

using Env = std::map<std::string, std::string>;

// Two local ranks, one all-reduce of 8 bytes: seconds.
nccom_test::ChildResult run(Env env, std::vector<std::string> extra = {}) {
  env.try_emplace("NCCOM_CONFIG", "");
  std::vector<std::string> args = {"-r", "2", "-b", "8", "-e", "8", "-n", "1", "-w", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("allr");
  return nccom_test::run_child(kTool, args, env);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The 1-based line of `needle` in `path`, or 0.
int line_of(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

// stdout is the JSON document and nothing else, whatever the log level and
// subsystems — even when the configuration asks for log lines on stdout:
// they go to stderr, where they still arrive.
TEST(NccomTestLog, JsonParsesAtEveryLogLevel) {
  for (const char* level : {"VERSION", "WARN", "INFO", "TRACE"}) {
    SCOPED_TRACE(level);
    const auto r =
        run({{"NCCL_DEBUG", level}, {"NCCL_DEBUG_SUBSYS", "ALL"}, {"NCCOM_DEBUG_STREAM", "stdout"}},
            {"--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(nccom_test::python_json_error(r.out), "") << r.out;
    // No log line (" CCOM INFO ..."); the document itself names variables
    // such as NCCOM_DEBUG_STREAM (config.launch_env).
    EXPECT_EQ(r.out.find(" CCOM "), std::string::npos) << r.out;
    // The banner is printed from VERSION on, on every rank.
    EXPECT_EQ(count(r.err, "CCOM INFO NCCL version "), 2) << r.err;
    if (std::string(level) == "INFO" || std::string(level) == "TRACE") {
      EXPECT_NE(r.err.find("CCOM INFO NET/Plugin: using "), std::string::npos) << r.err;
    }
  }
}

// Without --json the tables are stdout's only content too.
TEST(NccomTestLog, TablesCarryNoLogLines) {
  const auto r = run({{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "ALL"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("CCOM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("CCOM INFO"), std::string::npos) << r.err;
}

// host:pid:tid [dev] YYYY-MM-DD HH:MM:SS.uuuuuu CCOM ..., with each rank's
// device from its first communicator on (every line here is logged after
// the runtime asked for one).
TEST(NccomTestLog, LinesCarryTimestampAndTheRanksDevice) {
  const auto r = run({{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "ALL"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::regex line_re(
      R"(^(\[rank 1\] )?[^ :]+:\d+:\d+ \[(-?\d+)\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} )"
      R"((\S+:\d+ )?CCOM (INFO|WARN|TRACE) .*$)");
  const std::regex complete_re(R"(\[(\d+)\] .* rank (\d) nranks 2 cudaDev (\d+) .*Init COMPLETE)");
  int ccom_lines = 0;
  std::map<int, int> device_of_rank;
  for (const std::string& line : lines_of(r.err)) {
    if (line.find(" CCOM ") == std::string::npos) continue;
    ++ccom_lines;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << line;
    EXPECT_NE(m[2].str(), "-1") << "a line without its device: " << line;
    if (std::regex_search(line, m, complete_re)) {
      EXPECT_EQ(m[1].str(), m[3].str()) << line;
      device_of_rank[std::stoi(m[2].str())] = std::stoi(m[3].str());
    }
  }
  EXPECT_GT(ccom_lines, 10) << r.err;
  EXPECT_EQ(device_of_rank.size(), 2u) << r.err;
}

// Each INFO about a configured value names where it was set: another
// variable of the knob, the file and line of a cluster section; the root
// address is announced once per rank.
TEST(NccomTestLog, InfoNamesWhereEachValueCameFrom) {
  const int family_line = line_of(kLoopbackDev, "socket_family = ");
  ASSERT_GT(family_line, 0);
  // The launcher sets CCOM_SOCKET_IFNAME=lo; loopback-dev sets the family.
  const auto r = run({{"NCCOM_CONFIG", kLoopbackDev}, {"NCCL_DEBUG", "INFO"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(
      count(r.err, "CCOM INFO NCCL_SOCKET_IFNAME set by environment CCOM_SOCKET_IFNAME to lo"), 2)
      << r.err;
  EXPECT_EQ(count(r.err, "CCOM INFO NCCL_SOCKET_FAMILY set by " + kLoopbackDev + ":" +
                             std::to_string(family_line) + " (cluster loopback-dev) to AF_INET"),
            2)
      << r.err;
  EXPECT_EQ(r.err.find("set by environment to AF_INET"), std::string::npos) << r.err;
  EXPECT_EQ(count(r.err,
                  "CCOM INFO Root comm ID set by environment NEURON_RT_ROOT_COMM_ID to "
                  "127.0.0.1:"),
            2)
      << "once on each rank:\n"
      << r.err;
  EXPECT_EQ(count(r.err, "Root comm I"), 2) << r.err;

  // The variable NCCL names itself: NCCL's own words.
  const auto n = run({{"NCCL_SOCKET_IFNAME", "lo"}, {"NCCL_DEBUG", "INFO"}});
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  EXPECT_EQ(count(n.err, "CCOM INFO NCCL_SOCKET_IFNAME set by environment to lo"), 2) << n.err;
}

// Settings nothing uses, in a real two-rank job: a logging variable with a
// bad value and a misspelt variable are one WARN each per process (the
// misspelt one with its did-you-mean) and the job runs; an NCCL setting
// nccom ignores is an INFO (ENV); a [plugins.<name>] section with a
// misspelt plugin name is a WARN with the right name. Nothing else warns:
// what nccom-test and the runtime set is known.
TEST(NccomTestLog, SettingsNothingUsesAreNamedOncePerProcess) {
  const std::string level_warn =
      "CCOM WARN NCCL_DEBUG=\"verbose\" is not valid: expected one of \"NONE\", \"VERSION\", "
      "\"WARN\", \"INFO\", \"ABORT\", \"TRACE\" (any letter case); ignored, using \"WARN\" "
      "(log.level at ";
  const std::string misspelt_warn =
      "CCOM WARN NCCOM_BOOTSTRAP_PROTOKOL is not a variable nccom reads; did you mean "
      "NCCOM_BOOTSTRAP_PROTOCOL?\n";
  const std::string algo_info = "CCOM INFO NCCL_ALGO is an NCCL setting nccom does not read\n";
  const Env env = {
      {"NCCOM_BOOTSTRAP_PROTOKOL", "x"}, {"NCCL_ALGO", "ring"}, {"NCCOM_NET_EFA", "no"}};

  Env verbose = env;
  verbose["NCCL_DEBUG"] = "verbose";
  const auto r = run(verbose);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.err, level_warn), 2) << r.err;
  EXPECT_EQ(count(r.err, misspelt_warn), 2) << r.err;
  EXPECT_EQ(count(r.err, "NCCL_ALGO"), 0) << "INFO only\n" << r.err;
  EXPECT_EQ(count(r.err, " CCOM WARN "), 4) << r.err;

  Env info = env;
  info["NCCL_DEBUG"] = "INFO";
  const auto i = run(info);
  ASSERT_EQ(i.exit_code, 0) << i.out << i.err;
  EXPECT_EQ(count(i.err, algo_info), 2) << i.err;
  EXPECT_EQ(count(i.err, misspelt_warn), 2) << i.err;
  EXPECT_EQ(count(i.err, " CCOM WARN "), 2) << i.err;

  const std::string file = ::testing::TempDir() + "nccom-sockets-section.toml";
  std::ofstream(file) << "[plugins.sockets]\nnthreads = 2\n";
  const auto s = run({{"NCCOM_CONFIG", file}, {"NCCOM_NET_EFA", "no"}});
  std::remove(file.c_str());
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_EQ(count(s.err, "CCOM WARN [plugins.sockets] (" + file +
                             ":2) names no plugin nccom can "
                             "find"),
            2)
      << s.err;
  EXPECT_EQ(count(s.err, "did you mean [plugins.socket]?\n"), 2) << s.err;
  EXPECT_EQ(count(s.err, " CCOM WARN "), 2) << s.err;
}

// A bring-up that fails still names the misspelt variable (it may be the
// cause), before its own WARN: the runtime's error carries the failure,
// never the note.
TEST(NccomTestLog, AFailedBringUpStillNamesUnreadVariablesAndReportsItsOwnCause) {
  const auto r = run({{"NCCOM_BOOTSTRAP_PROTOKOL", "x"},
                      {"NCCOM_TRANSPORT_PLUGINS", "nope"},
                      {"NCCOM_NET_EFA", "no"}});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(count(r.err,
                  "CCOM WARN NCCOM_BOOTSTRAP_PROTOKOL is not a variable nccom reads; did "
                  "you mean NCCOM_BOOTSTRAP_PROTOCOL?\n"),
            2)
      << r.err;
  for (const char* rank : {"0", "1"}) {
    // The rank's line starts with the failure's own cause, not the note; the
    // runtime's line says what the runtime was doing (libnccom logged the
    // cause itself).
    EXPECT_EQ(count(r.err, std::string("nccom-test: rank ") + rank +
                               ": no transport plugin is loaded (transport.plugins = \"nope\"; "
                               "see the WARN lines above) (neuronBuildGraphComm, rank " +
                               rank + " of 2: connecting the rings) (joining the communicator"),
              1)
        << r.err;
    EXPECT_EQ(count(r.err, std::string("nrt-emu ERROR: nrt_emu_ccom_init failed (rank ") + rank +
                               " of 2: neuronBuildGraphComm returned status 1)\n"),
              1)
        << r.err;
  }
  EXPECT_EQ(count(r.err, "nrt-emu ERROR: NCCOM_BOOTSTRAP_PROTOKOL"), 0) << r.err;
  EXPECT_EQ(count(r.err, "rank 0: NCCOM_BOOTSTRAP_PROTOKOL"), 0) << r.err;
}

// loopback-dev is for machines without EFA: the runtime's libfabric plugin
// finding no EFA provider there is an INFO (its own line and the host's),
// never a WARN.
TEST(NccomTestLog, LoopbackDevClusterPrintsNoWarn) {
  const auto r = run({{"NCCOM_CONFIG", kLoopbackDev}, {"NCCL_DEBUG", "INFO"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("WARN"), std::string::npos) << r.err;
  EXPECT_EQ(count(r.err, "CCOM INFO OFI plugin initNet() failed is EFA enabled? AWS Libfabric"), 2)
      << r.err;
  EXPECT_EQ(count(r.err, "; expected here: net.efa is no (cluster loopback-dev " + kLoopbackDev), 2)
      << r.err;
  EXPECT_EQ(count(r.err, "CCOM INFO NET/OFI No eligible providers were found (provider efa"), 2)
      << r.err;
}

// The fallback from the runtime's plugin: a WARN (its line and the host's)
// where EFA is present, nothing at the default level where it is absent;
// auto asks this machine's sysfs.
TEST(NccomTestLog, EfaFallbackIsAWarnOnlyWhereEfaIsPresent) {
  const auto present = run({{"NCCOM_NET_EFA", "yes"}});
  ASSERT_EQ(present.exit_code, 0) << present.out << present.err;
  EXPECT_EQ(count(present.err, "CCOM WARN OFI plugin initNet() failed is EFA enabled? "), 2)
      << present.err;
  EXPECT_EQ(count(present.err, "CCOM WARN NET/OFI No eligible providers were found (provider efa"),
            2)
      << present.err;

  const auto absent = run({{"NCCOM_NET_EFA", "no"}});
  ASSERT_EQ(absent.exit_code, 0) << absent.out << absent.err;
  EXPECT_EQ(absent.err.find("WARN"), std::string::npos) << absent.err;

  const auto detected = run({});
  ASSERT_EQ(detected.exit_code, 0) << detected.out << detected.err;
  if (nccom::efa_device().empty()) {
    EXPECT_EQ(detected.err.find("WARN"), std::string::npos) << "no EFA device on this machine\n"
                                                            << detected.err;
  } else {  // the plugin may work here; if it fails, that is a WARN
    EXPECT_EQ(detected.err.find("CCOM INFO OFI plugin initNet() failed"), std::string::npos)
        << "EFA device " << nccom::efa_device() << " on this machine\n"
        << detected.err;
  }
}

}  // namespace
