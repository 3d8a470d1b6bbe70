// nccom-test's context end to end: the placement block (every rank's real
// pid, this machine's host name, emulated host and device), the platform and
// version header, the algorithm column flipping where the engine's
// recursive-doubling threshold (moved by its variable) says, min <= avg <=
// max across ranks, --stats percentiles in order, and the JSON's
// configuration digest against nccom-config --json under the same
// environment. Two small runs: 2 ranks on one host (text), 2 ranks on 2
// emulated hosts (JSON).
#include "build_paths.h"
#include "child_process.h"
#include "json_check.h"
#include "nccom_test_table.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";
const std::string kConfigTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-config";
// NCCL_DEBUG=VERSION: libnccom's one version line per rank on stderr, with
// the rank's pid in its prefix (host:pid:tid [dev]).
const std::map<std::string, std::string> kEnv = {{"NCCOM_CONFIG", ""}, {"NCCL_DEBUG", "VERSION"}};

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Each rank's pid as its own log lines give it: rank 0's lines come as they
// are, the others' with a "[rank i] " prefix (the local launcher's relay).
std::map<int, std::string> pids_from_log(const std::string& err) {
  std::map<int, std::string> pids;
  const std::regex line(R"(^(?:\[rank (\d+)\] )?[^ :]+:(\d+):\d+ \[\d+\] .* CCOM )");
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) pids[m[1].matched ? std::stoi(m[1]) : 0] = m[2];
  }
  return pids;
}

// Every number after "key": in document order.
std::vector<double> numbers(const std::string& json, const std::string& key) {
  std::vector<double> out;
  const std::string k = "\"" + key + "\": ";
  for (size_t at = json.find(k); at != std::string::npos; at = json.find(k, at + 1)) {
    const char* p = json.c_str() + at + k.size();
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end != p) out.push_back(v);
  }
  return out;
}

// The string after "key": (first occurrence), or "(none)".
std::string text(const std::string& json, const std::string& key) {
  const std::regex re("\"" + key + "\": \"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(json, m, re) ? m[1].str() : "(none)";
}

TEST(NccomTestContext, TwoRanksPlacementHeaderAlgorithmAndStats) {
  const auto r = nccom_test::run_child(kTool,
                                       {"-r", "2", "-b", "8", "-e", "512", "-f", "8", "-n", "5",
                                        "-w", "0", "--stats", "--show-algorithm", "allr"},
                                       kEnv);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The header names the parts of this build and the runtime's platform.
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(^# nccom-test \d+\.\d+\.\d+\.\d+ \(git \S+\), )"
                                          R"(libnccom \d+\.\d+\.\d+\.\d+ \(git \S+\), )"
                                          R"(runtime \d+\.\d+\.\d+\.\d+ \(git \S+\), )"
                                          R"(platform emu\n)")))
      << r.out;
  // One placement line per rank, with the pid its own log line shows.
  const auto pids = pids_from_log(r.err);
  ASSERT_EQ(pids.size(), 2u) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    char want[256];
    std::snprintf(want, sizeof want, "#  Rank %2d Pid %6s on %10s emulated host 0 device %2d\n",
                  rank, pids.at(rank).c_str(), this_host().c_str(), rank);
    EXPECT_NE(r.out.find(want), std::string::npos) << want << r.out;
  }
  // After the last table: the measured operations are the run's first collectives.
  EXPECT_GT(r.out.find("#  Rank  0 Pid"), r.out.find("# Avg bus bandwidth")) << r.out;
  // The default table's 13 columns, and an algo column per placement.
  const auto rows = nccom_test::table_rows(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;  // 8, 64, 512
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 15u) << r.out;
    EXPECT_EQ(row[9], "rd") << r.out;  // 2 ranks on one host: rd up to 32 KiB by default
    EXPECT_EQ(row[14], "rd") << r.out;
  }
  EXPECT_NE(r.out.find("# Algorithm            : rd\n"), std::string::npos) << r.out;
  // --stats: min <= p50 <= p90 <= p99 <= max for each size and placement.
  const std::regex stat(R"(^#\s+(\d+)\s+(out-of-place|in-place)((?:\s+[\d.]+){5})$)");
  std::istringstream in(r.out);
  int stat_rows = 0;
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, stat)) continue;
    ++stat_rows;
    std::istringstream v(m[3].str());
    double q[5];
    for (double& x : q) v >> x;
    for (int i = 0; i < 4; ++i) EXPECT_LE(q[i], q[i + 1]) << l;
    EXPECT_GT(q[0], 0) << l;
  }
  EXPECT_EQ(stat_rows, 6) << r.out;
}

TEST(NccomTestContext, TwoHostsJsonAlgorithmFlipsAndDigestMatchesNccomConfig) {
  auto env = kEnv;
  // Recursive doubling up to 128 B (the default across hosts is 64 KiB):
  // 64 and 128 B by rd, 256 B on the rings.
  env["NEURON_RT_EMU_ALLREDUCE_RD_BYTES"] = "128";
  const std::string before = utc_now();
  const auto r =
      nccom_test::run_child(kTool,
                            {"-r", "2", "-N", "2", "--net", "socket", "-b", "64", "-e", "256", "-n",
                             "4", "-w", "0", "-a", "2", "--stats", "--json", "allr"},
                            env);
  const std::string after = utc_now();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string& j = r.out;
  std::string why;
  ASSERT_TRUE(json_check::valid(j, &why)) << why << "\n" << j;
  EXPECT_NE(j.find("\"schema\": 2,"), std::string::npos) << j;
  EXPECT_EQ(text(j, "platform"), "emu");
  const std::string started = text(j, "started_utc");
  EXPECT_TRUE(std::regex_match(started, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << started;
  EXPECT_LE(before, started);
  EXPECT_LE(started, after);
  for (const char* key : {"nccom_test", "libnccom", "runtime"})
    EXPECT_TRUE(std::regex_match(text(j, key), std::regex(R"(\d+\.\d+\.\d+\.\d+)"))) << key << j;
  EXPECT_NE(j.find("\"hosts\": [\"" + this_host() + "\"],"), std::string::npos) << j;
  EXPECT_NE(j.find("\"emulated_hosts\": 2,"), std::string::npos) << j;
  EXPECT_EQ(text(j, "net"), "socket");
  EXPECT_EQ(text(j, "net_requested"), "socket");

  // Placement: each rank's pid (from its log line), this machine, host r, device 0.
  const auto pids = pids_from_log(r.err);
  ASSERT_EQ(pids.size(), 2u) << r.err;
  const std::string digest = text(j, "digest");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string want = "{\"rank\": " + std::to_string(rank) + ", \"pid\": " + pids.at(rank) +
                             ", \"hostname\": \"" + this_host() +
                             "\", \"host\": " + std::to_string(rank) +
                             ", \"device\": 0, \"config_digest\": \"" + digest + "\"}";
    EXPECT_NE(j.find(want), std::string::npos) << want << "\n" << j;
  }
  EXPECT_NE(j.find("\"same_on_every_rank\": true"), std::string::npos) << j;

  // The engine's decision on each side of the moved threshold.
  EXPECT_EQ(text(j, "algorithm_summary"), "rd up to 128 B, ring above");
  const std::regex algos("\"algorithm\": \"(\\w+)\", \"stats\"");
  std::vector<std::string> seen;
  for (std::sregex_iterator it(j.begin(), j.end(), algos), end; it != end; ++it)
    seen.push_back((*it)[1]);
  EXPECT_EQ(seen, (std::vector<std::string>{"rd", "rd", "rd", "rd", "ring", "ring"})) << j;

  // -a 2: the time column is the fastest rank's; min <= avg <= max.
  const auto t = numbers(j, "time_us"), lo = numbers(j, "time_min_us"),
             avg = numbers(j, "time_avg_us"), hi = numbers(j, "time_max_us");
  ASSERT_EQ(t.size(), 6u) << j;
  ASSERT_EQ(lo.size(), 6u);
  ASSERT_EQ(avg.size(), 6u);
  ASSERT_EQ(hi.size(), 6u);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_GT(lo[i], 0);
    EXPECT_LE(lo[i], avg[i]);
    EXPECT_LE(avg[i], hi[i]);
    EXPECT_EQ(t[i], lo[i]);
  }
  // --stats per placement: ordered, over the 4 iterations.
  const auto iters = numbers(j, "iters");
  EXPECT_EQ(iters, (std::vector<double>{4, 4, 4, 4, 4, 4, 4})) << j;  // "iters": 4 at the top too
  const auto mn = numbers(j, "min_us"), p50 = numbers(j, "p50_us"), p90 = numbers(j, "p90_us"),
             p99 = numbers(j, "p99_us"), mx = numbers(j, "max_us");
  ASSERT_EQ(mn.size(), 6u) << j;
  for (size_t i = 0; i < mn.size(); ++i) {
    EXPECT_LE(mn[i], p50[i]);
    EXPECT_LE(p50[i], p90[i]);
    EXPECT_LE(p90[i], p99[i]);
    EXPECT_LE(p99[i], mx[i]);
  }

  // nccom-config --json in the ranks' environment (what nccom-test set for
  // them, as the JSON lists it) prints the same digest.
  const std::regex launch("\"launch_env\": \\{([^}]*)\\}");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(j, m, launch)) << j;
  const std::string vars = m[1];
  auto config_env = env;
  const std::regex pair("\"(\\w+)\": \"([^\"]*)\"");
  for (std::sregex_iterator it(vars.begin(), vars.end(), pair), end; it != end; ++it)
    config_env[(*it)[1]] = (*it)[2];
  EXPECT_EQ(config_env["NCCL_NET_PLUGIN"], "socket") << vars;  // --net's, set before the digest
  EXPECT_EQ(config_env.count("NEURON_RT_ROOT_COMM_ID"), 1u) << vars;
  const auto c = nccom_test::run_child(kConfigTool, {"--json"}, config_env);
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const std::regex config_digest("\"digest\":\"([^\"]+)\"");
  ASSERT_TRUE(std::regex_search(c.out, m, config_digest)) << c.out;
  EXPECT_EQ(m[1].str(), digest);
  EXPECT_EQ(digest.rfind("fnv1a64:", 0), 0u) << digest;
  // Without nccom-test's variables the configuration differs (the root
  // address is a knob): the digest really covers what the ranks ran with.
  const auto plain = nccom_test::run_child(kConfigTool, {"--json"}, env);
  ASSERT_TRUE(std::regex_search(plain.out, m, config_digest)) << plain.out;
  EXPECT_NE(m[1].str(), digest);
}

}  // namespace
