// EngineE2E/*: the reference device engine end to end — ranks as processes
// on 1-2 emulated hosts, brought up through NEURON_RT_ROOT_COMM_ID, running
// every collective over every data type and reduction, checked exactly
// (engine_rank_driver, reference.h), over the socket net and libnccom-net
// (tcp;ofi_rxm). Also: the paths the engine takes (recursive doubling,
// direct reads) and ranks as threads sharing proxy workers. Ranks that
// leave, die or wait, and bad knobs: engine_lifecycle_e2e_test.cc.
#include "engine_e2e.h"

#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using engine_e2e::env_for;
using engine_e2e::run_all;
using engine_e2e::RunningChild;
using engine_e2e::Shape;
using engine_e2e::shape_name;
using engine_e2e::start;

class EngineE2E : public ::testing::TestWithParam<Shape> {};

// Every collective × every type × every reduction, sizes 0, 1, 13 and 5003
// elements (many 4 KiB slices, not a multiple of the rank count), in and out
// of place, twice each (the second execution reuses the cached plan).
TEST_P(EngineE2E, EveryCollectiveTypeAndReductionIsExact) { run_all(GetParam(), {"execs=2"}); }

#ifndef ENGINE_E2E_LONG
const Shape kShapes[] = {
    {1, 1, "socket"}, {2, 1, "socket"}, {3, 1, "socket"}, {4, 1, "socket"},
    {2, 2, "socket"}, {3, 2, "socket"}, {4, 2, "socket"}, {4, 2, "socket", "emu", true},
};
#else
// 8 ranks, and libnccom-net over tcp;ofi_rxm (~3 s of connection setup per
// rank pair on this provider); on trn2 (one device per host) every received
// slice is confirmed by the sidelink's 4-byte RMA read.
const Shape kShapes[] = {
    {8, 1, "socket"}, {8, 2, "socket"}, {2, 2, "ofi"},         {3, 2, "ofi"},
    {4, 2, "ofi"},    {8, 2, "ofi"},    {2, 2, "ofi", "trn2"}, {4, 2, "ofi", "emu", true},
};
#endif
INSTANTIATE_TEST_SUITE_P(Shapes, EngineE2E, ::testing::ValuesIn(kShapes), shape_name);

#ifndef ENGINE_E2E_LONG
// Small all-reduces (up to NEURON_RT_EMU_ALLREDUCE_RD_BYTES, capped to one
// slice: 4064 bytes with these tests' 4 KiB slices) run by recursive
// doubling, larger ones on the rings, and the knob at 0 turns it off; every
// result is checked exactly by the driver either way. The engine's closing
// line counts the executions each way.
class EngineRecursiveDoubling : public ::testing::TestWithParam<Shape> {};

// A count from the engine's closing line ("..., 7 by recursive doubling,
// ..."): the number before `what`; -1 when the line or the count is absent.
long long closing_count(const std::string& out, const std::string& what) {
  long long n = -1;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find("closing: ");
    const size_t what_at = line.find(what);
    if (line.rfind("engine=", 0) != 0 || at == std::string::npos || what_at == std::string::npos)
      continue;
    const size_t comma = line.rfind(", ", what_at);
    n = std::atoll(line.substr(comma + 2, what_at - comma - 2).c_str());
  }
  return n;
}

// Runs `args` once per (value of `knob`, "" for unset; recursive doubling
// runs expected): every rank must finish exact, run `runs` collectives and
// count the expected number of them by recursive doubling.
void expect_recursive_doubling(const Shape& s, const std::vector<std::string>& args,
                               const char* knob, long long runs,
                               const std::vector<std::pair<std::string, long long>>& cases) {
  for (const auto& [value, by_rd] : cases) {
    const nccom_test::LoopbackPort reserved;
    ASSERT_GT(reserved.port(), 0);
    auto env = env_for(s, reserved.port());
    if (!value.empty()) env[knob] = value;
    std::vector<RunningChild> kids = start(s, args, env);
    for (size_t r = 0; r < kids.size(); ++r) {
      nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
      auto rep = nccom_test::parse_report(res.out);
      ASSERT_EQ(rep["ok"], "1") << "rank " << r << ":\n" << res.out << res.err;
      EXPECT_EQ(rep["runs"], std::to_string(runs)) << res.out;
      EXPECT_EQ(closing_count(res.out, " by recursive doubling"), by_rd)
          << "rank " << r << " (" << knob << "=" << value << "):\n"
          << res.out;
    }
  }
}

TEST_P(EngineRecursiveDoubling, SmallAllReducesRunItAndLargeOnesTheRings) {
  // 2 types x 3 reductions x 2 placements x 2 executions per count; counts
  // 1 and 13 fit one slice in either type, 5003 does not.
  const long long per_count = 2 * 3 * 2 * 2;
  expect_recursive_doubling(GetParam(),
                            {"colls=allr", "dtypes=fp32,int8", "ops=sum,avg,max",
                             "counts=1,13,5003", "inplace=both", "execs=2"},
                            "NEURON_RT_EMU_ALLREDUCE_RD_BYTES", 3 * per_count,
                            {{"", 2 * per_count}, {"0", 0}});
}

// All-gathers whose whole output fits NEURON_RT_EMU_ALLGATHER_RD_BYTES (and
// one slice) run by recursive doubling too, folded ranks included, on one
// host and across hosts alike.
TEST_P(EngineRecursiveDoubling, SmallAllGathersRunItAndLargeOnesTheRings) {
  // 2 types x 2 placements x 2 executions per count; counts 1 and 13 give
  // outputs of at most 7 x 13 x 4 bytes, inside a slice; 5003 do not.
  const long long per_count = 2 * 2 * 2;
  expect_recursive_doubling(
      GetParam(),
      {"colls=allg", "dtypes=fp32,int8", "ops=sum", "counts=1,13,5003", "inplace=both", "execs=2"},
      "NEURON_RT_EMU_ALLGATHER_RD_BYTES", 3 * per_count,
      {{"", 2 * per_count}, {"65536", 2 * per_count}, {"0", 0}});
}

// On a DIRECT link a slice whose data the step leaves final in the output
// passes by reference (the receiver copies it from the sender's memory);
// NEURON_RT_EMU_DIRECT_READ=0 copies every slice through the slot. Exact
// either way; in-place calls follow out-of-place ones on the same memory,
// so a sender that returned before its slices were read would be caught.
class EngineDirectRead : public ::testing::TestWithParam<Shape> {};

TEST_P(EngineDirectRead, FinalSlicesPassByReferenceUnlessTurnedOff) {
  const Shape s = GetParam();
  const std::vector<std::string> args = {"colls=allg,bcast,allr", "dtypes=fp32,int8", "ops=sum",
                                         "counts=5003",           "inplace=both",     "execs=2"};
  for (const char* knob : {"", "0"}) {
    const nccom_test::LoopbackPort reserved;
    ASSERT_GT(reserved.port(), 0);
    auto env = env_for(s, reserved.port());
    if (*knob != '\0') env["NEURON_RT_EMU_DIRECT_READ"] = knob;
    std::vector<RunningChild> kids = start(s, args, env);
    long long total = 0;
    for (size_t r = 0; r < kids.size(); ++r) {
      nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
      auto rep = nccom_test::parse_report(res.out);
      ASSERT_EQ(rep["ok"], "1") << "rank " << r << ":\n" << res.out << res.err;
      const long long by_ref = closing_count(res.out, " direct slices passed by reference");
      ASSERT_GE(by_ref, 0) << "rank " << r << ": no closing count\n" << res.out;
      total += by_ref;
      // On one host every rank sends over DIRECT links; across hosts the
      // ranks whose ring successor is on the other host send over the
      // network only.
      if (*knob == '\0' && s.hosts == 1) {
        EXPECT_GT(by_ref, 0) << "rank " << r << ":\n" << res.out;
      }
    }
    if (*knob == '\0') {
      EXPECT_GT(total, 0);
    } else {
      EXPECT_EQ(total, 0);
    }
  }
}

const Shape kDirectShapes[] = {{2, 1, "socket"}, {3, 1, "socket"}, {4, 2, "socket"}};
INSTANTIATE_TEST_SUITE_P(Shapes, EngineDirectRead, ::testing::ValuesIn(kDirectShapes), shape_name);

// 3 ranks fold one, 6 fold two, 7 three (a partner's folded range covers
// only part of its group); 2 hosts put exchanges on the network.
const Shape kRdShapes[] = {{2, 1, "socket"}, {3, 1, "socket"}, {6, 2, "socket"},
                           {3, 2, "socket"}, {4, 2, "socket"}, {7, 2, "socket"}};
INSTANTIATE_TEST_SUITE_P(Shapes, EngineRecursiveDoubling, ::testing::ValuesIn(kRdShapes),
                         shape_name);
#endif

// Ranks as threads of one process, 2 emulated hosts × 2 ranks: with
// NEURON_RT_RANKS_PER_NETWORK_PROXY=2 both local ranks of every host (and
// the two hosts' comms, whose local ranks coincide) share one proxy worker;
// with 1, each local rank has its own.
class EngineThreads : public ::testing::TestWithParam<int> {};

TEST_P(EngineThreads, RanksShareProxyWorkersByGroup) {
  const int per_proxy = GetParam();
  const nccom_test::LoopbackPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0);
  auto env = env_for(Shape{4, 2, "socket"}, port);
  env["NEURON_RT_RANKS_PER_NETWORK_PROXY"] = std::to_string(per_proxy);
  nccom_test::ChildResult res = nccom_test::run_child(ENGINE_THREAD_DRIVER, {"4", "2"}, env);
  auto rep = nccom_test::parse_report(res.out);
  ASSERT_EQ(res.exit_code, 0) << res.out << res.err;
  EXPECT_EQ(rep["ok"], "1") << res.out << res.err;
  EXPECT_EQ(rep["workers"], per_proxy == 1 ? "2" : "1") << res.out;
}

INSTANTIATE_TEST_SUITE_P(PerProxy, EngineThreads, ::testing::Values(1, 2));

}  // namespace
