// nccom-test end to end: the built binary starting its own ranks through
// the reference runtime's collective engine (1 and 2 emulated hosts, every
// operation with --check), its JSON and plot, a rank killed during a
// collective, and 4 processes under a real mpirun.
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
#include <fstream>
#include <iterator>
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
  // Named by its end alone: what it printed before the signal is not its cause.
  EXPECT_NE(r.err.find("nccom-test: rank 1 (host 0, local rank 1) was killed by signal 9 (Killed); "
                       "stopped the other "
                       "ranks\n"),
            std::string::npos)
      << r.err;
  EXPECT_LT(s, 60.0);
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
