#include "e2e_launch.h"

#include "build_paths.h"

namespace proxy_e2e_test {

using nccom_test::RunningChild;

namespace {
const std::string kDriver = E2E_RANK_DRIVER;

// NCCL_P2P_DISABLE=1: these cases test the network proxy on every ring hop,
// also between ranks of one emulated host, which would otherwise be P2P
// hops without a network connector (README, "P2P off").
std::map<std::string, std::string> env_for(Shape shape) {
  return {{"NCCL_P2P_DISABLE", "1"},
          {"CCOM_SOCKET_IFNAME", "lo"},
          {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "30000"},
          {"NEURON_CCOM_SOCK_TIMEOUT", "30000"},
          {"NCCOM_CONFIG", ""},
          {"NCCL_DEBUG", "WARN"},
          {"NEURON_RT_EMU_DEVICES", std::to_string(shape.per_host)},
          {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"},
          {"NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS", "30000"}};
}
}  // namespace

std::vector<RunningChild> start_ranks(Shape shape, const std::vector<std::string>& args,
                                      const std::map<std::string, std::string>& extra_env) {
  auto env = env_for(shape);
  for (const auto& [k, v] : extra_env) env[k] = v;
  const int n = shape.ranks();
  std::vector<RunningChild> children;
  std::vector<std::string> a0 = {std::to_string(n), "0", "0", "0", "--make-id"};
  a0.insert(a0.end(), args.begin(), args.end());
  children.push_back(nccom_test::start_child(kDriver, a0, env));
  const std::string first = nccom_test::read_line(children[0], std::chrono::seconds(30));
  EXPECT_EQ(first.rfind("id=", 0), 0u) << "rank 0 said: " << first;
  if (first.rfind("id=", 0) != 0) return children;
  for (int r = 1; r < n; ++r) {
    std::vector<std::string> a = {std::to_string(n),
                                  std::to_string(r),
                                  std::to_string(r / shape.per_host),
                                  std::to_string(r % shape.per_host),
                                  "--id",
                                  first.substr(3)};
    a.insert(a.end(), args.begin(), args.end());
    children.push_back(nccom_test::start_child(kDriver, a, env));
  }
  return children;
}

std::string wait_for(RunningChild& child, const std::string& prefix,
                     std::chrono::steady_clock::time_point deadline, std::string* seen) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return "";
    const std::string line = nccom_test::read_line(child, left);
    if (line.empty()) return "";  // timeout or EOF: the driver never prints an empty line
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    if (seen != nullptr) *seen += line + "\n";
  }
}

std::vector<Report> run_ranks(Shape shape, const std::vector<std::string>& args,
                              const std::map<std::string, std::string>& extra_env) {
  std::vector<RunningChild> children = start_ranks(shape, args, extra_env);
  std::vector<Report> reports;
  for (size_t r = 0; r < children.size(); ++r) {
    nccom_test::ChildResult res = nccom_test::finish_child(children[r]);
    Report report = nccom_test::parse_report(res.out);
    EXPECT_EQ(res.exit_code, 0) << "rank " << r << ":\n" << res.out << res.err;
    EXPECT_EQ(report["ok"], "1") << "rank " << r << ":\n" << res.out << res.err;
    reports.push_back(report);
  }
  if (static_cast<int>(children.size()) != shape.ranks()) ADD_FAILURE() << "not every rank started";
  return reports;
}

}  // namespace proxy_e2e_test
