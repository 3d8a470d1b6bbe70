// nccom-test end to end: the built binary starting its own ranks through
// the reference runtime's collective engine (1 and 2 emulated hosts, every
// operation with --check), its JSON and plot, a rank killed during a
// collective, a configuration with a typo, and 4 processes under a real
// mpirun.
#include "build_paths.h"
#include "child_process.h"
#include "machine.h"
#include "nccom_test_table.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";
const std::map<std::string, std::string> kEnv = {{"NCCOM_CONFIG", ""}, {"NCCL_DEBUG", "WARN"}};

nccom_test::ChildResult run(const std::vector<std::string>& args,
                            std::map<std::string, std::string> env = kEnv) {
  return nccom_test::run_child(kTool, args, env);
}

// The launcher's own lines ("nccom-test: ..." but not a rank's own
// "nccom-test: rank N: ..." line, nor a line relayed with "[rank N]").
std::vector<std::string> launcher_lines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("nccom-test: ", 0) == 0 &&
        !std::regex_search(line, std::regex("^nccom-test: rank [0-9]+: ")))
      out.push_back(line);
  }
  return out;
}

std::vector<std::vector<std::string>> rows(const std::string& out) {
  return nccom_test::table_rows(out);
}

// Every row has 13 columns and 0 wrong elements in both groups (in place
// N/A for the operations without an in-place form).
void expect_clean_table(const nccom_test::ChildResult& r, size_t want_rows, bool in_place = true) {
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto t = rows(r.out);
  ASSERT_EQ(t.size(), want_rows) << r.out;
  for (const auto& row : t) {
    ASSERT_EQ(row.size(), 13u) << r.out;
    EXPECT_EQ(row[8], "0") << r.out;
    EXPECT_EQ(row[12], in_place ? "0" : "N/A") << r.out;
  }
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos);
  EXPECT_NE(r.out.find("# Wrong elements       : 0 OK"), std::string::npos);
}

// Results that reach nobody are a failure, not exit 0: stdout closed from
// the start, or its reader gone while SIGPIPE is ignored.
TEST(NccomTestE2e, ResultsNobodyReceivesFailTheRun) {
  const auto closed = nccom_test::run_child(
      "/bin/sh", {"-c", "'" + kTool + "' -r 2 -b 8 -e 64 allr >&-; echo rc=$? >&2"}, kEnv);
  EXPECT_NE(closed.err.find("nccom-test: stdout is closed: the results would go nowhere"),
            std::string::npos)
      << closed.err;
  EXPECT_NE(closed.err.find("rc=1"), std::string::npos) << closed.err;
  // A pipe whose reader is gone before the run starts: every write fails
  // with EPIPE (SIGPIPE ignored, as the child inherits it).
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  const std::string err_file =
      ::testing::TempDir() + "/nccom-test-epipe-" + std::to_string(::getpid());
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_IGN);
    ::dup2(fds[1], STDOUT_FILENO);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, STDERR_FILENO);
    ::setenv("NCCOM_CONFIG", "", 1);
    ::setenv("NCCL_DEBUG", "WARN", 1);
    ::execl(kTool.c_str(), kTool.c_str(), "-r", "2", "-b", "8", "-e", "64", "allr", nullptr);
    ::_exit(127);
  }
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  std::ifstream in(err_file);
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ::unlink(err_file.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  nccom_test::ChildResult gone_status;
  gone_status.err = err + "rc=" + std::to_string(WEXITSTATUS(status));
  EXPECT_NE(gone_status.err.find("writing the results to stdout failed"), std::string::npos)
      << gone_status.err;
  EXPECT_NE(gone_status.err.find("rc=1"), std::string::npos) << gone_status.err;
}

TEST(NccomTestE2e, TwoRanksOneHostAllReduceChecked) {
  // 8 B .. 64 KiB by 2: 14 sizes.
  expect_clean_table(
      run({"-r", "2", "-b", "8", "-e", "64K", "-n", "3", "-w", "1", "--check", "allr"}), 14);
}

TEST(NccomTestE2e, FourRanksTwoHostsAllReduceChecked) {
  const auto r =
      run({"-r", "4", "-N", "2", "-b", "8", "-e", "64K", "-n", "3", "-w", "1", "--check", "allr"});
  expect_clean_table(r, 14);
  EXPECT_NE(r.out.find("4 rank(s) on 2 host(s) (local)"), std::string::npos) << r.out;
}

TEST(NccomTestE2e, EveryOperationCheckedWithJsonAndPlot) {
  nccom_test::TempDir dir;
  const std::string svg = dir.path() + "/run.svg";
  const auto r =
      run({"-r",   "3",    "-b",     "8",        "-e",       "4K",      "-f",     "4",      "-n",
           "2",    "-w",   "1",      "-d",       "int32",    "--check", "--json", "--plot", svg,
           "allr", "allg", "redsct", "sendrecv", "alltoall", "bcast",   "reduce"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"wrong_total\": 0"), std::string::npos) << r.out;
  for (const char* op : {"allr", "allg", "redsct", "sendrecv", "alltoall", "bcast", "reduce"}) {
    EXPECT_NE(r.out.find(std::string("\"op\": \"") + op + "\""), std::string::npos) << op;
  }
  std::ifstream f(svg);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(text.str().rfind("<?xml", 0), 0u);
  EXPECT_NE(text.str().find("data-series=\"redsct\""), std::string::npos);
  EXPECT_NE(text.str().find("</svg>"), std::string::npos);
}

// Send/recv and all-to-all have no in-place form: those columns read N/A.
TEST(NccomTestE2e, SendRecvAndAllToAllChecked) {
  for (const char* op : {"sendrecv", "alltoall"}) {
    // 8 B .. 4 KiB by 4: 5 sizes.
    const auto r = run({"-r", "3", "-N", "3", "-b", "8", "-e", "4K", "-f", "4", "-n", "2", "-w",
                        "1", "--check", op});
    expect_clean_table(r, 5, /*in_place=*/false);
  }
}

// Uneven emulated hosts: 3 ranks on 2 hosts (2 + 1), every result checked.
TEST(NccomTestE2e, UnevenHostsChecked) {
  for (const char* op : {"allr", "allg", "redsct"}) {
    const auto r = run({"-r", "3", "-N", "2", "-b", "8", "-e", "64K", "-f", "8", "-n", "2", "-w",
                        "1", "--check", op});
    expect_clean_table(r, 5, /*in_place=*/true);
  }
}

TEST(NccomTestE2e, BothNetPluginsAcrossEmulatedHosts) {
  for (const char* net : {"socket", "ofi"}) {
    const auto r = run({"-r", "4", "-N", "2", "--net", net, "-b", "8", "-e", "64K", "-f", "8", "-n",
                        "2", "-w", "1", "--check", "allr", "allg"});
    ASSERT_EQ(r.exit_code, 0) << net << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(std::string("net ") + net), std::string::npos) << r.out;
    EXPECT_EQ(rows(r.out).size(), 2u * 5u) << r.out;  // 8, 64, 512, 4K, 32K for each operation
  }
}

TEST(NccomTestE2e, FloatTypesAndReductionsChecked) {
  for (const char* type : {"fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp64"}) {
    for (const char* op : {"sum", "prod", "min", "max", "avg"}) {
      const auto r = run({"-r", "3", "-b", "8", "-e", "1K", "-f", "8", "-n", "1", "-w", "0", "-d",
                          type, "-o", op, "--check", "allr", "redsct"});
      EXPECT_EQ(r.exit_code, 0) << type << " " << op << "\n" << r.out << r.err;
    }
  }
}

TEST(NccomTestE2e, AKilledRankIsNamedAndTheOthersStopped) {
  auto env = kEnv;
  env["NCCOM_TEST_DEBUG_KILL_RANK"] = "1";
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run({"-r", "3", "-b", "1K", "-e", "1K", "--timeout-ms", "5000", "allr"}, env);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 1);
  // One summary line, the killed rank first, named by its end alone (what
  // it printed before the signal is not its cause); the others failed
  // because it left, or were stopped.
  const std::vector<std::string> summary = launcher_lines(r.err);
  ASSERT_EQ(summary.size(), 1u) << r.err;
  EXPECT_EQ(summary[0].rfind("nccom-test: rank 1 (host 0) was killed by signal 9 (SIGKILL)", 0), 0u)
      << r.err;
  EXPECT_TRUE(summary[0] ==
                  "nccom-test: rank 1 (host 0) was killed by signal 9 (SIGKILL); ranks 0, 2 "
                  "failed because it left" ||
              summary[0].find("; stopped rank") != std::string::npos)
      << summary[0];
  EXPECT_LE(summary[0].size(), 200u) << summary[0];
  EXPECT_LT(s, 60.0);
}

// A configuration with a typo: each rank says the cause first, once, as
// libnccom forwarded it to the runtime's log (not "no reason"); the
// launcher says it once for both ranks.
TEST(NccomTestE2e, ABadConfigurationIsSaidCauseFirstOnce) {
  char dir[] = "/tmp/nccom-test-config-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/bad.toml";
  std::ofstream(file) << "[bootstrap]\nprotokol = \"tcp\"\n";
  auto env = kEnv;
  env["NCCOM_CONFIG"] = file;
  env["NEURON_RT_LOG_LEVEL"] = "INFO";  // the runtime echoes what libnccom forwarded to it
  const auto r = run({"-r", "2", "-b", "8", "-e", "8", "allr"}, env);
  std::remove(file.c_str());
  ::rmdir(dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string cause = file +
                            ":2:1: unknown key \"bootstrap.protokol\"; did you mean "
                            "\"bootstrap.protocol\"? (nccom configuration is invalid: fix it, or "
                            "point NCCOM_CONFIG at a good file)";
  EXPECT_NE(r.err.find("nrt-emu nccom: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(cause), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("forwarded no reason"), std::string::npos) << r.err;
  for (const char* rank : {"0", "1"}) {
    const std::string own = std::string("nccom-test: rank ") + rank + ": ";
    const size_t at = r.err.find(own);
    ASSERT_NE(at, std::string::npos) << r.err;
    EXPECT_EQ(r.err.compare(at + own.size(), cause.size(), cause), 0) << r.err;
    EXPECT_EQ(r.err.find(own, at + 1), std::string::npos) << "said twice:\n" << r.err;
  }
  const std::vector<std::string> summary = launcher_lines(r.err);
  ASSERT_EQ(summary.size(), 1u) << r.err;
  EXPECT_EQ(summary[0].rfind("nccom-test: ranks 0-1 failed: " + file + ":2:1: unknown key", 0), 0u)
      << summary[0];
  EXPECT_LE(summary[0].size(), 200u) << summary[0];
}

// Open MPI's mpirun, where Debian's openmpi-bin puts it.
constexpr const char* kMpirun = "/usr/bin/mpirun";

TEST(NccomTestE2e, FourProcessesUnderMpirun) {
  if (std::string why = nccom_test::machine::program(kMpirun); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kProgram) << why << " (openmpi-bin)";
  std::vector<std::string> args;
  if (geteuid() == 0) args = {"--allow-run-as-root", "--oversubscribe"};
  for (const char* a : {"-np", "4", "-x", "NCCOM_CONFIG", "-x", "NCCL_DEBUG"}) args.push_back(a);
  args.push_back(kTool);
  for (const char* a : {"-N", "2", "-b", "8", "-e", "64K", "-n", "3", "-w", "1", "--check", "allr"})
    args.push_back(a);
  const auto r = nccom_test::run_child(kMpirun, args, kEnv);
  expect_clean_table(r, 14);
  EXPECT_NE(r.out.find("4 rank(s) on 2 host(s) (mpirun)"), std::string::npos) << r.out;
}

}  // namespace
