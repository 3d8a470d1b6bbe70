// KangaE2E/*: the reference device engine on an emulated Trn3 Switch-V1
// node (NEURON_RT_EMU_PLATFORM=trn3-switch-v1: 16 devices, LNC 2, 4 logical
// cores per device, ranks filling devices in local-rank order). libnccom
// builds kangaRing paths there; the engine must run all-reduce, all-gather
// and reduce-scatter over them (lane k = path k, in its own rotation) and
// everything else over the ring channels, with exact results. Evidence that
// the lanes ran: each rank's runtime log (engine_rank_driver prints the
// engine's lines) names its lanes at init and, at close, how many
// executions ran on them — which must be exactly the driver's count of
// all-reduce/all-gather/reduce-scatter runs.
#include "build_paths.h"
#include "child_process.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nccom_test::RunningChild;

std::map<std::string, std::string> switch_env(int port) {
  // NEURON_RT_EMU_DEVICES and NEURON_RT_VIRTUAL_CORE_SIZE stay unset: the
  // platform's own values (16, 2) are the defaults.
  return {{"CCOM_SOCKET_IFNAME", "lo"},
          {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "30000"},
          {"NEURON_CCOM_SOCK_TIMEOUT", "30000"},
          {"NCCOM_CONFIG", ""},
          {"NCCL_DEBUG", "WARN"},
          {"NCCOM_BOOTSTRAP_SECRET", "kanga-e2e-" + std::to_string(port)},
          {"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:" + std::to_string(port)},
          {"NEURON_RT_EMU_PLATFORM", "trn3-switch-v1"},
          {"NEURON_RT_EMU_SLICE_BYTES", "4096"},  // many slices, rounds and lanes on small buffers
          {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"},
          {"NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS", "30000"}};
}

struct RankReport {
  int exit_code = -1;
  std::map<std::string, std::string> kv;
  std::vector<std::vector<int>> lanes;  // from "kangaRing lane k: ..." lines, by k
  long long executions = -1, on_lanes = -1;
  std::vector<long long> lane_steps;  // slice steps each lane ran
  bool lanes_declined = false;        // "kangaRing paths not used" (multi-host)
  std::string text;
};

// Reads the engine= lines of one rank's report.
void parse_engine_lines(int rank, RankReport* r) {
  std::istringstream in(r->text);
  const std::string me = "[engine rank " + std::to_string(rank) + "] ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("engine=", 0) != 0) continue;
    const size_t at = line.find(me);
    if (at == std::string::npos) continue;
    const std::string rest = line.substr(at + me.size());
    int k = -1;
    if (std::sscanf(rest.c_str(), "kangaRing lane %d:", &k) == 1 && k >= 0 && k < 64) {
      std::istringstream ranks(rest.substr(rest.find(':') + 1));
      std::vector<int> path;
      for (int x; ranks >> x;) path.push_back(x);
      if (static_cast<int>(r->lanes.size()) <= k) r->lanes.resize(static_cast<size_t>(k) + 1);
      r->lanes[static_cast<size_t>(k)] = path;
    }
    long long e = 0, l = 0;
    if (std::sscanf(rest.c_str(), "closing: %lld executions, %lld on kangaRing lanes", &e, &l) ==
        2) {
      r->executions = e;
      r->on_lanes = l;
      const size_t colon = rest.find("per lane:");
      std::istringstream steps(colon == std::string::npos ? "" : rest.substr(colon + 9));
      for (long long x; steps >> x;) r->lane_steps.push_back(x);
    }
    if (rest.find("kangaRing paths not used") != std::string::npos) r->lanes_declined = true;
  }
}

std::vector<RankReport> run_ranks(int ranks, int hosts, const std::vector<std::string>& args,
                                  std::map<std::string, std::string> extra = {}) {
  const nccom_test::LoopbackPort reserved;
  const int port = reserved.port();
  EXPECT_GT(port, 0);
  auto env = switch_env(port);
  for (auto& [k, v] : extra) env[k] = v;
  const int per = ranks / hosts;
  std::vector<RunningChild> kids;
  for (int r = 0; r < ranks; ++r) {
    std::vector<std::string> a = {std::to_string(r), std::to_string(ranks), std::to_string(r / per),
                                  std::to_string(r % per), std::to_string(per)};
    a.insert(a.end(), args.begin(), args.end());
    kids.push_back(nccom_test::start_child(ENGINE_RANK_DRIVER, a, env));
  }
  std::vector<RankReport> out(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    nccom_test::ChildResult res = nccom_test::finish_child(kids[static_cast<size_t>(r)]);
    RankReport& rep = out[static_cast<size_t>(r)];
    rep.exit_code = res.exit_code;
    rep.kv = nccom_test::parse_report(res.out);
    rep.text = res.out + res.err;
    parse_engine_lines(r, &rep);
  }
  return out;
}

// The lane rule (docs/decisions/topo-neuron.md, "kangaRingPaths(base, lanes)"): lane k is the
// base ring rotated by k·n/4 positions; each lane holds every rank once.
void expect_lanes_are_rotations(const std::vector<std::vector<int>>& lanes, int n) {
  ASSERT_FALSE(lanes.empty());
  const std::vector<int>& base = lanes[0];
  std::vector<int> sorted = base;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> all(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  EXPECT_EQ(sorted, all) << "lane 0 is not a ring over every rank";
  for (size_t k = 1; k < lanes.size(); ++k) {
    std::vector<int> want = base;
    std::rotate(want.begin(), want.begin() + static_cast<long>(k * static_cast<size_t>(n) / 4),
                want.end());
    EXPECT_EQ(lanes[k], want) << "lane " << k;
  }
}

void expect_kanga_run(const std::vector<RankReport>& reps, int n) {
  for (int r = 0; r < n; ++r) {
    const RankReport& rep = reps[static_cast<size_t>(r)];
    ASSERT_EQ(rep.exit_code, 0) << "rank " << r << ":\n" << rep.text;
    ASSERT_EQ(rep.kv.at("ok"), "1") << "rank " << r << ":\n" << rep.text;
    const int channels = std::stoi(rep.kv.at("channels"));
    // Lane k = engine channel k: as many lanes as channels, at most 4 paths.
    EXPECT_EQ(static_cast<int>(rep.lanes.size()), std::min(4, channels)) << "rank " << r << ":\n"
                                                                         << rep.text;
    EXPECT_EQ(rep.lanes, reps[0].lanes) << "rank " << r << " runs other lanes than rank 0";
    expect_lanes_are_rotations(rep.lanes, n);
    // The engine says so before running anything (nrt_emu_ccom_algorithm).
    EXPECT_EQ(rep.kv.at("algorithm_allr"), "kangaring") << "rank " << r;
    EXPECT_EQ(rep.kv.at("algorithm_allg"), "kangaring") << "rank " << r;
    EXPECT_EQ(rep.kv.at("algorithm_redsct"), "kangaring") << "rank " << r;
    EXPECT_EQ(rep.kv.at("algorithm_bcast"), "ring") << "rank " << r;
    EXPECT_EQ(rep.kv.at("algorithm_alltoall"), "peer") << "rank " << r;
    // Every all-reduce, all-gather and reduce-scatter ran on the lanes; the
    // other collectives did not.
    EXPECT_EQ(rep.executions, std::stoll(rep.kv.at("runs"))) << "rank " << r << ":\n" << rep.text;
    EXPECT_EQ(rep.on_lanes, std::stoll(rep.kv.at("ring_runs"))) << "rank " << r << ":\n"
                                                                << rep.text;
    EXPECT_GT(rep.on_lanes, 0);
    EXPECT_LT(rep.on_lanes, rep.executions);
    // Large enough operations spread over every lane.
    EXPECT_EQ(rep.lane_steps.size(), rep.lanes.size()) << rep.text;
    for (size_t k = 0; k < rep.lane_steps.size(); ++k)
      EXPECT_GT(rep.lane_steps[k], 0) << "lane " << k << " never ran";
  }
}

#ifndef ENGINE_E2E_LONG

// The 4 logical cores of one device as threads of one process (as libnrt
// runs them): 3 rounds of all-reduce, all-gather and all-to-all, exact; the
// 6 all-reduce/all-gather runs of every rank on its lanes, the 3 all-to-all
// runs not.
TEST(KangaE2E, FourRanksAsThreadsOfOneProcess) {
  const nccom_test::LoopbackPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0);
  nccom_test::ChildResult res =
      nccom_test::run_child(ENGINE_THREAD_DRIVER, {"4", "1"}, switch_env(port));
  ASSERT_EQ(res.exit_code, 0) << res.out << res.err;
  EXPECT_EQ(nccom_test::parse_report(res.out)["ok"], "1") << res.out << res.err;
  for (int r = 0; r < 4; ++r) {
    RankReport rep;
    rep.text = res.out;
    parse_engine_lines(r, &rep);
    EXPECT_EQ(rep.lanes.size(), 2u) << "rank " << r << ":\n"
                                    << res.out;  // 2 ring channels on 4 ranks
    expect_lanes_are_rotations(rep.lanes, 4);
    EXPECT_EQ(rep.executions, 9) << "rank " << r << ":\n" << res.out;
    EXPECT_EQ(rep.on_lanes, 6) << "rank " << r << ":\n" << res.out;
  }
}

// One device × 4 logical cores: every collective, a few types and
// reductions, 0, 1, 13 and 5003 elements, in and out of place, twice.
TEST(KangaE2E, FourRanksOnOneDeviceAreExactAndUseTheLanes) {
  const auto reps = run_ranks(4, 1, {"execs=2", "dtypes=fp32,bf16,int64", "ops=sum,min,avg"});
  expect_kanga_run(reps, 4);
}

// A wrong combination fails at init and says what to set.
TEST(KangaE2E, WrongLncOrDeviceCountFailsSayingWhatToSet) {
  struct Case {
    const char* var;
    const char* value;
    const char* says;
  };
  for (const Case& c :
       {Case{"NEURON_RT_VIRTUAL_CORE_SIZE", "1", "set NEURON_RT_VIRTUAL_CORE_SIZE=2"},
        Case{"NEURON_RT_EMU_DEVICES", "4", "set NEURON_RT_EMU_DEVICES=16"}}) {
    const auto reps =
        run_ranks(1, 1, {"colls=allr", "dtypes=fp32", "ops=sum", "counts=1"}, {{c.var, c.value}});
    EXPECT_EQ(reps[0].exit_code, 1) << c.var << ":\n" << reps[0].text;
    const std::string error = reps[0].kv.count("error") ? reps[0].kv.at("error") : "";
    EXPECT_NE(error.find(c.says), std::string::npos) << c.var << ": " << error;
    EXPECT_NE(error.find("trn3-switch-v1"), std::string::npos) << error;
  }
}

#else

// Four devices × 4 logical cores (8 ranks would be 2 devices, which the
// Switch-V1 topology refuses: 1, 4, 8 or 16 local devices).
TEST(KangaE2E, SixteenRanksOnFourDevicesAreExactAndUseFourLanes) {
  const auto reps =
      run_ranks(16, 1, {"execs=2", "dtypes=fp32,bf16", "ops=sum,max", "counts=0,13,5003,40000"});
  expect_kanga_run(reps, 16);
  EXPECT_EQ(reps[0].lanes.size(), 4u);
}

// Two Switch-V1 hosts × 4 ranks (one device each): libnccom's paths cover
// one node, so the engine declines them and every collective runs, exactly,
// on the ring channels (one pod, host h = pod node h).
TEST(KangaE2E, TwoHostsKeepTheRingChannels) {
  const auto reps = run_ranks(8, 2, {"execs=2", "dtypes=fp32,int8", "ops=sum,avg"});
  for (int r = 0; r < 8; ++r) {
    const RankReport& rep = reps[static_cast<size_t>(r)];
    ASSERT_EQ(rep.exit_code, 0) << "rank " << r << ":\n" << rep.text;
    EXPECT_EQ(rep.kv.at("ok"), "1") << rep.text;
    EXPECT_TRUE(rep.lanes_declined) << rep.text;
    EXPECT_TRUE(rep.lanes.empty()) << rep.text;
    EXPECT_EQ(rep.executions, std::stoll(rep.kv.at("runs"))) << rep.text;
    EXPECT_EQ(rep.on_lanes, 0) << rep.text;
  }
}

#endif

}  // namespace
