// What the suites of the engine's end-to-end tests share (engine_e2e_test.cc,
// engine_lifecycle_e2e_test.cc): the shape of a run, its environment, its
// ranks as engine_rank_driver processes on emulated hosts, and a run in
// which every rank must finish exact.
#pragma once

#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace engine_e2e {

using nccom_test::RunningChild;

struct Shape {
  int ranks;
  int hosts;
  std::string net;               // "socket" or "ofi"
  std::string platform = "emu";  // NEURON_RT_EMU_PLATFORM (trn2: the sidelink path)
  // NEURON_RT_EMU_PROXY_HELP=0: only the proxy worker calls libnccom's
  // progress, as libnrt's does, beside the device loop that publishes.
  bool worker_only = false;
};

inline void PrintTo(const Shape& s, std::ostream* os) {
  *os << s.ranks << " ranks on " << s.hosts << " hosts, " << s.net << ", " << s.platform
      << (s.worker_only ? ", proxy worker only" : "");
}

inline std::string shape_name(const ::testing::TestParamInfo<Shape>& p) {
  return std::to_string(p.param.ranks) + "ranks_" + std::to_string(p.param.hosts) + "hosts_" +
         p.param.net + (p.param.platform == "emu" ? "" : "_" + p.param.platform) +
         (p.param.worker_only ? "_worker_only" : "");
}

inline std::map<std::string, std::string> env_for(const Shape& s, int port) {
  std::map<std::string, std::string> env = {
      {"CCOM_SOCKET_IFNAME", "lo"},
      {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "30000"},
      {"NEURON_CCOM_SOCK_TIMEOUT", "30000"},
      {"NCCOM_CONFIG", ""},
      {"NCCL_DEBUG", "WARN"},
      {"NCCOM_BOOTSTRAP_SECRET", "engine-e2e-" + std::to_string(port)},
      {"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:" + std::to_string(port)},
      {"NEURON_RT_EMU_PLATFORM", s.platform},
      // Small slices: many slices, rounds and channels on small buffers.
      {"NEURON_RT_EMU_SLICE_BYTES", "4096"},
      {"NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS", "30000"}};
  if (s.worker_only) env["NEURON_RT_EMU_PROXY_HELP"] = "0";
  if (s.net == "socket") {
    env["NCCOM_NET_USE_RUNTIME_PLUGIN"] = "false";
  } else {
    env["NCCOM_NET_USE_RUNTIME_PLUGIN"] = "true";
    env["FI_PROVIDER"] = "tcp;ofi_rxm";
  }
  return env;
}

// Rank r's process of shape `s`.
inline RunningChild start_rank(const Shape& s, int r, const std::vector<std::string>& args,
                               const std::map<std::string, std::string>& env) {
  // Blocks of consecutive ranks, the first ranks % hosts hosts one more
  // (3 on 2: 2 + 1). Each host's device count is its rank count (the
  // engine takes local_n as its process's device count).
  std::vector<int> host_of, local_of, count(static_cast<size_t>(s.hosts), s.ranks / s.hosts);
  for (int h = 0; h < s.ranks % s.hosts; ++h) ++count[static_cast<size_t>(h)];
  for (int h = 0; h < s.hosts; ++h) {
    for (int l = 0; l < count[static_cast<size_t>(h)]; ++l) {
      host_of.push_back(h);
      local_of.push_back(l);
    }
  }
  const int h = host_of[static_cast<size_t>(r)];
  std::vector<std::string> a = {std::to_string(r), std::to_string(s.ranks), std::to_string(h),
                                std::to_string(local_of[static_cast<size_t>(r)]),
                                std::to_string(count[static_cast<size_t>(h)])};
  a.insert(a.end(), args.begin(), args.end());
  return nccom_test::start_child(ENGINE_RANK_DRIVER, a, env);
}

inline std::vector<RunningChild> start(const Shape& s, const std::vector<std::string>& args,
                                       const std::map<std::string, std::string>& env) {
  std::vector<RunningChild> kids;
  for (int r = 0; r < s.ranks; ++r) kids.push_back(start_rank(s, r, args, env));
  return kids;
}

inline void run_all(const Shape& s, const std::vector<std::string>& args) {
  const nccom_test::LoopbackPort reserved;
  const int port = reserved.port();
  ASSERT_GT(port, 0);
  std::vector<RunningChild> kids = start(s, args, env_for(s, port));
  for (size_t r = 0; r < kids.size(); ++r) {
    nccom_test::ChildResult res = nccom_test::finish_child(kids[r]);
    auto rep = nccom_test::parse_report(res.out);
    EXPECT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_EQ(rep["ok"], "1") << "rank " << r << ":\n" << res.out << res.err;
    // On the emu platform a host has as many devices as ranks: the first
    // ranks % hosts hosts one rank more (start_rank).
    const int rank = static_cast<int>(r), base = s.ranks / s.hosts, extra = s.ranks % s.hosts;
    const int host =
        rank < extra * (base + 1) ? rank / (base + 1) : extra + (rank - extra * (base + 1)) / base;
    if (s.platform == "emu") {
      EXPECT_EQ(rep["host_devices"], std::to_string(base + (host < extra ? 1 : 0)))
          << "rank " << r << ":\n"
          << res.out;
    }
    if (r == 0) ::testing::Test::RecordProperty("cases", rep["cases"]);
  }
}

}  // namespace engine_e2e
