#include "graph_launch.h"

#include "build_paths.h"

#include <gtest/gtest.h>

namespace graph_comm_test {

Started start_ranks(const Launch& launch) {
  const int nranks = launch.hosts * launch.per_host;
  Started started;
  started.env = {{"CCOM_SOCKET_IFNAME", "lo"},
                 {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "30000"},
                 {"NEURON_CCOM_SOCK_TIMEOUT", "30000"},
                 {"NCCOM_CONFIG", ""},
                 {"NCCL_DEBUG", "WARN"},
                 {"NEURON_RT_EMU_DEVICES", std::to_string(launch.per_host)},
                 {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"},
                 {"NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS", "30000"}};
  for (const auto& [k, v] : launch.env) started.env[k] = v;
  auto extra = [&](int r) { return launch.args ? launch.args(r) : std::vector<std::string>{}; };
  std::vector<std::string> args0 = {std::to_string(nranks), "0", "0", "0", "--make-id"};
  for (const std::string& a : extra(0)) args0.push_back(a);
  std::map<std::string, std::string> env0 = started.env;
  if (launch.rank_env) {
    for (const auto& [k, v] : launch.rank_env(0)) env0[k] = v;
  }
  started.children.push_back(nccom_test::start_child(GRAPH_RANK_DRIVER, args0, env0));
  const std::string first = nccom_test::read_line(started.children[0], std::chrono::seconds(30));
  EXPECT_EQ(first.rfind("id=", 0), 0u) << "rank 0 said: " << first;
  if (first.rfind("id=", 0) != 0) {
    nccom_test::finish_child(started.children[0]);
    started.children.clear();
    return started;
  }
  started.id_hex = first.substr(3);
  for (int r = 1; r < nranks; ++r)
    started.children.push_back(start_rank(launch, started, r, extra(r)));
  return started;
}

nccom_test::RunningChild start_rank(const Launch& launch, const Started& started, int rank,
                                    const std::vector<std::string>& args,
                                    const std::map<std::string, std::string>& env) {
  std::vector<std::string> a = {std::to_string(launch.hosts * launch.per_host),
                                std::to_string(rank),
                                std::to_string(rank / launch.per_host),
                                std::to_string(rank % launch.per_host),
                                "--id",
                                started.id_hex};
  a.insert(a.end(), args.begin(), args.end());
  std::map<std::string, std::string> e = started.env;
  if (launch.rank_env) {
    for (const auto& [k, v] : launch.rank_env(rank)) e[k] = v;
  }
  for (const auto& [k, v] : env) e[k] = v;
  return nccom_test::start_child(GRAPH_RANK_DRIVER, a, e);
}

std::vector<Report> run_ranks(const Launch& launch) {
  Started started = start_ranks(launch);
  if (started.children.empty()) return {};
  std::vector<Report> reports;
  bool failed = false;
  for (std::size_t r = 0; r < started.children.size(); ++r) {
    nccom_test::ChildResult res = nccom_test::finish_child(started.children[r]);
    Report report = nccom_test::parse_report(res.out);
    EXPECT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_EQ(report["ok"], "1") << "rank " << r;
    failed = failed || res.exit_code != 0 || report["ok"] != "1";
    reports.push_back(std::move(report));
  }
  return failed ? std::vector<Report>{} : reports;
}

}  // namespace graph_comm_test
