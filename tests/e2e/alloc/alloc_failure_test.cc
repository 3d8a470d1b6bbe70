// Allocation failure and address-space limits, end to end: two ranks of
// the reference engine (engine_rank_driver, socket net, 2 emulated hosts)
// bring a communicator up and run a checked all-reduce, while rank 1's
// allocations fail.
//
//   - AllocationSweep: rank 1 runs with libnccom_fail_alloc.so preloaded,
//     failing its n-th operator new once, for n sampled over the whole run
//     (init, graph, transports, the collective, teardown);
//   - AddressSpaceSweep: rank 1 runs under prlimit --as at limits from
//     below what init needs to above what the run needs.
//
// Every outcome must be a success or a clean error: each rank exits 0 or
// exits 1 having said why (error=...); none is ended by a signal
// (std::terminate's SIGABRT, SIGSEGV) and none hangs past its bound.
#include "build_paths.h"
#include "child_process.h"
#include "machine.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

#ifndef ALLOC_FAILURE_LONG
constexpr int kSamples = 8;
#else
constexpr int kSamples = 150;
#endif

struct PairRun {
  nccom_test::ChildResult rank0, rank1;
};

const std::vector<std::string> kArgs = {"colls=allr",  "dtypes=fp32", "ops=sum",
                                        "counts=5003", "inplace=0",   "timeout_ms=10000"};

std::map<std::string, std::string> common_env(int port) {
  return {{"CCOM_SOCKET_IFNAME", "lo"},
          {"NCCOM_CONFIG", ""},
          {"NCCL_DEBUG", "WARN"},
          {"NCCOM_BOOTSTRAP_SECRET", "alloc-" + std::to_string(port)},
          {"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:" + std::to_string(port)},
          {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"},
          {"NEURON_RT_EMU_SLICE_BYTES", "4096"},
          {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "10000"},
          {"NEURON_CCOM_SOCK_TIMEOUT", "10000"},
          {"NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS", "10000"}};
}

// Rank 0 as it is; rank 1 with `env1` added, run through `wrapper` (a
// program and its arguments before the driver's) when given.
PairRun run_pair(const std::map<std::string, std::string>& env1,
                 const std::vector<std::string>& wrapper = {}) {
  const nccom_test::LoopbackPort reserved;
  const auto env = common_env(reserved.port());
  std::vector<std::string> a0 = {"0", "2", "0", "0", "1"};
  a0.insert(a0.end(), kArgs.begin(), kArgs.end());
  auto r0 = nccom_test::start_child(ENGINE_RANK_DRIVER, a0, env);
  std::vector<std::string> a1 = {"1", "2", "1", "0", "1"};
  a1.insert(a1.end(), kArgs.begin(), kArgs.end());
  auto e1 = env;
  for (const auto& [k, v] : env1) e1[k] = v;
  std::string program = ENGINE_RANK_DRIVER;
  if (!wrapper.empty()) {
    a1.insert(a1.begin(), program);
    a1.insert(a1.begin(), wrapper.begin() + 1, wrapper.end());
    program = wrapper[0];
  }
  auto r1 = nccom_test::start_child(program, a1, e1);
  PairRun run;
  run.rank1 = nccom_test::finish_child(r1);
  run.rank0 = nccom_test::finish_child(r0);
  return run;
}

// "success", "clean error" or, for what must never happen, a description.
std::string classify(const nccom_test::ChildResult& r) {
  if (r.exit_code == 0) return "success";
  if (r.exit_code == 1 && r.out.find("error=") != std::string::npos) return "clean error";
  if (r.signal != 0) return "ended by signal " + std::to_string(r.signal);
  return "exit " + std::to_string(r.exit_code) + " without saying why";
}

void expect_clean(const PairRun& run, const std::string& what, std::map<std::string, int>* tally) {
  for (const auto* r : {&run.rank0, &run.rank1}) {
    const std::string c = classify(*r);
    ++(*tally)[c];
    EXPECT_TRUE(c == "success" || c == "clean error")
        << what << ", rank " << (r == &run.rank0 ? 0 : 1) << ": " << c << "\n"
        << r->out << r->err;
  }
}

std::string tally_text(const std::map<std::string, int>& tally) {
  std::string text;
  for (const auto& [k, v] : tally) text += (text.empty() ? "" : ", ") + k + " " + std::to_string(v);
  return text;
}

TEST(AllocationSweep, EveryFailedAllocationIsACleanErrorOrSurvived) {
  const std::string count_file =
      ::testing::TempDir() + "/alloc-count-" + std::to_string(::getpid());
  const std::string preload = nccom_test::in_build("lib/test/libnccom_fail_alloc.so");
  const PairRun clean =
      run_pair({{"LD_PRELOAD", preload}, {"NCCOM_FAIL_ALLOC_COUNT_TO", count_file}});
  ASSERT_EQ(clean.rank0.exit_code, 0) << clean.rank0.out << clean.rank0.err;
  ASSERT_EQ(clean.rank1.exit_code, 0) << clean.rank1.out << clean.rank1.err;
  long total = 0;
  std::ifstream(count_file) >> total;
  ::unlink(count_file.c_str());
  ASSERT_GT(total, 100) << "the preloaded allocator counted nothing: is it loaded?";
  std::map<std::string, int> tally;
  for (int i = 0; i < kSamples; ++i) {
    // Evenly over the run, never twice the same allocation.
    const long n = 1 + (total - 1) * i / (kSamples - 1);
    const PairRun run = run_pair({{"LD_PRELOAD", preload},
                                  {"NCCOM_FAIL_ALLOC_AT", std::to_string(n)},
                                  {"NCCOM_FAIL_ALLOC_MODE", "once"}});
    expect_clean(run, "allocation " + std::to_string(n) + " of " + std::to_string(total), &tally);
  }
  ::testing::Test::RecordProperty("allocations", std::to_string(total));
  ::testing::Test::RecordProperty("outcomes", tally_text(tally));
  std::printf("allocations of rank 1: %ld; %d sampled; outcomes: %s\n", total, kSamples,
              tally_text(tally).c_str());
}

TEST(AddressSpaceSweep, EveryLimitIsACleanErrorOrSurvived) {
  if (std::string why = nccom_test::machine::program("prlimit"); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kProgram) << why;
  std::map<std::string, int> tally;
  // From far below what a process with libnccom's threads maps to far above.
  for (long mib : {64L, 200L, 400L, 600L, 700L, 800L, 900L, 1000L, 1200L, 1600L, 2400L, 4096L}) {
    const PairRun run = run_pair({}, {"/usr/bin/prlimit", "--as=" + std::to_string(mib << 20)});
    expect_clean(run, "RLIMIT_AS " + std::to_string(mib) + " MiB", &tally);
  }
  ::testing::Test::RecordProperty("outcomes", tally_text(tally));
  std::printf("address-space limits: outcomes: %s\n", tally_text(tally).c_str());
}

// The limit lowered on a running rank (prlimit --pid), after its
// communicator is up: below what it has mapped (every later mapping fails,
// as an address space that is full) and just above it.
TEST(AddressSpaceSweep, ALimitLoweredOnARunningRankIsACleanErrorOrSurvived) {
  if (std::string why = nccom_test::machine::program("prlimit"); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kProgram) << why;
  std::map<std::string, int> tally;
  for (const char* how : {"half", "just above"}) {
    const nccom_test::LoopbackPort reserved;
    const auto env = common_env(reserved.port());
    const std::vector<std::string> args = {"colls=allr,allg,redsct",
                                           "dtypes=fp32,int8,fp16",
                                           "ops=sum",
                                           "counts=1,5003,100000",
                                           "execs=50",
                                           "timeout_ms=10000"};
    std::vector<std::string> a0 = {"0", "2", "0", "0", "1"}, a1 = {"1", "2", "1", "0", "1"};
    a0.insert(a0.end(), args.begin(), args.end());
    a1.insert(a1.end(), args.begin(), args.end());
    auto r0 = nccom_test::start_child(ENGINE_RANK_DRIVER, a0, env);
    auto r1 = nccom_test::start_child(ENGINE_RANK_DRIVER, a1, env);
    // Its first line of its own (the library's banner may come before it).
    std::string first;
    for (int i = 0; i < 10 && first.rfind("channels=", 0) != 0; ++i)
      first = nccom_test::read_line(r1, std::chrono::seconds(60));
    long vm_kib = 0;
    if (first.rfind("channels=", 0) == 0) {
      std::ifstream status("/proc/" + std::to_string(r1.pid) + "/status");
      for (std::string line; std::getline(status, line);) {
        if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stol(line.substr(7));
      }
    }
    if (vm_kib > 0) {
      const long limit = std::string(how) == "half" ? vm_kib * 1024 / 2 : (vm_kib + 1024) * 1024;
      const auto set = nccom_test::run_child(
          "/usr/bin/prlimit", {"--pid", std::to_string(r1.pid), "--as=" + std::to_string(limit)},
          {});
      EXPECT_EQ(set.exit_code, 0) << set.err;
    }
    PairRun run;
    run.rank1 = nccom_test::finish_child(r1);
    run.rank0 = nccom_test::finish_child(r0);
    ASSERT_GT(vm_kib, 0) << "rank 1 never came up: " << first << "\n"
                         << run.rank1.out << run.rank1.err;
    expect_clean(run, std::string("RLIMIT_AS lowered to ") + how + " the mapped size", &tally);
  }
  std::printf("address-space limit lowered on a running rank: outcomes: %s\n",
              tally_text(tally).c_str());
}

}  // namespace
