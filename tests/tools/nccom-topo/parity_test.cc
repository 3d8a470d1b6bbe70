// nccom-topo against real communicators: for a platform and node count, what
// the tool prints (--json, for several ranks) must be exactly what the
// communicator of that shape builds under the same configuration and
// environment — channel count, every channel's ring order from that rank,
// which channels are doubled, and the NIC of every channel.
//
// The communicator is topo_parity_comm: every rank a thread with its own
// Communicator over the real bootstrap, each running
// graphbuild::build_comm_graph (neuronBuildGraphComm's graph half) with the
// process's context and the machine the reference runtime reports for
// NEURON_RT_EMU_PLATFORM. Both processes get the same environment: the
// shipped config/nccom.toml as NCCOM_CONFIG, the build's plugins, and the
// case's own settings.
//
// Built twice: without PARITY_LONG a representative subset (the unit
// suite); with it every platform the tool lists x 1, 2, 4 nodes, the OLD
// search by environment and a cluster section of a file (label `long`).
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nccom_test::ChildResult;

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-topo";
const std::string kShippedConfig = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";

// The configuration a case runs under (the same for the tool and the
// communicator).
enum class Setting {
  Shipped,       // config/nccom.toml as it ships
  OldByEnv,      // ... with NCCL_GRAPH_USE_NEW_ALGORITHM=0
  OldByCluster,  // a file whose active cluster section sets
                 // plugins.neuron.default_new_algorithm = false
};

struct Case {
  std::string platform;
  int nodes;
  Setting setting;
  int lnc = -1;      // -1: the platform's default
  int devices = -1;  // -1: the platform's default (its largest instance)
};

const char* setting_name(Setting s) {
  switch (s) {
    case Setting::Shipped: return "shipped";
    case Setting::OldByEnv: return "old_by_env";
    case Setting::OldByCluster: return "old_by_cluster";
  }
  return "?";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.platform;
  std::replace(n.begin(), n.end(), '-', '_');
  return n + "_nodes" + std::to_string(info.param.nodes) +
         (info.param.devices > 0 ? "_devices" + std::to_string(info.param.devices)
                                 : std::string()) +
         (info.param.lnc > 0 ? "_lnc" + std::to_string(info.param.lnc) : std::string()) + "_" +
         setting_name(info.param.setting);
}

// The platforms nccom-topo accepts: topo_neuron's list_platforms.
const std::vector<std::string> kPlatforms = {
    "trn1", "trn1n", "inf2", "trn2", "trn2-ultraserver", "trn3", "trn3-switch-v1", "emu"};

std::vector<Case> cases() {
  std::vector<Case> out;
#ifdef PARITY_LONG
  for (const std::string& p : kPlatforms) {
    for (int nodes : {1, 2, 4}) out.push_back({p, nodes, Setting::Shipped});
    // The OLD search runs once per rank in a communicator (64 ranks a node
    // on Trn2): 1 and 2 nodes.
    if (p != "trn3-switch-v1") {
      for (int nodes : {1, 2}) out.push_back({p, nodes, Setting::OldByEnv});
    }
  }
  // The other LNC mode of the platforms that have two.
  for (const char* p : {"trn2", "trn2-ultraserver", "trn3"})
    out.push_back({p, 2, Setting::Shipped, 1});
  out.push_back({"emu", 2, Setting::Shipped, 2});
  for (const char* p : {"trn2", "emu"}) out.push_back({p, 2, Setting::OldByCluster});
#else
  out = {{"trn2", 2, Setting::Shipped},
         {"trn1", 2, Setting::Shipped},
         {"trn2-ultraserver", 4, Setting::Shipped},
         {"trn3-switch-v1", 1, Setting::Shipped},
         {"inf2", 1, Setting::Shipped},
         {"inf2", 2, Setting::Shipped},
         {"emu", 4, Setting::Shipped, -1, 4},
         {"emu", 2, Setting::OldByEnv, -1, 4},
         {"emu", 2, Setting::OldByCluster, -1, 4}};
#endif
  return out;
}

// ---- reading the tool's JSON -------------------------------------------

// The integer after `"key": ` at or after `from`, or -1.
long json_int(const std::string& json, const std::string& key, size_t from = 0) {
  const std::string needle = "\"" + key + "\": ";
  const size_t at = json.find(needle, from);
  if (at == std::string::npos) return -1;
  return std::strtol(json.c_str() + at + needle.size(), nullptr, 10);
}

std::string json_string(const std::string& json, const std::string& key, size_t from = 0) {
  const std::string needle = "\"" + key + "\": \"";
  const size_t at = json.find(needle, from);
  if (at == std::string::npos) return "";
  const size_t start = at + needle.size();
  return json.substr(start, json.find('"', start) - start);
}

struct Channel {
  std::vector<int> ranks;
  int nic = -1;
  bool duplicate = false;
  bool operator==(const Channel&) const = default;
};

std::string describe(const Channel& c) {
  std::string s = "nic " + std::to_string(c.nic) + (c.duplicate ? " doubled" : "") + " ring";
  for (int r : c.ranks) s += " " + std::to_string(r);
  return s;
}

std::vector<int> int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) {
    if (!item.empty()) out.push_back(std::stoi(item));
  }
  return out;
}

// The "rings" object: one line per channel,
// {"prev": P, "next": N, "duplicate": B, "nic": K, "ranks": [...]}.
std::vector<Channel> tool_rings(const std::string& json) {
  std::vector<Channel> out;
  const size_t rings = json.find("\n  \"rings\": {");
  if (rings == std::string::npos) return out;
  const size_t end = json.find("\n  \"kangaring\"", rings);
  std::stringstream lines(json.substr(rings, end - rings));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("{\"prev\": ") == std::string::npos) continue;
    Channel c;
    c.duplicate = line.find("\"duplicate\": true") != std::string::npos;
    c.nic = static_cast<int>(json_int(line, "nic"));
    const size_t open = line.find("\"ranks\": [");
    const size_t close = line.find(']', open);
    c.ranks = int_list(line.substr(open + 10, close - open - 10));
    out.push_back(std::move(c));
  }
  return out;
}

// ---- the two runs ------------------------------------------------------

class ToolsTopoParity : public ::testing::TestWithParam<Case> {
 protected:
  std::map<std::string, std::string> environment(const Case& k) {
    std::map<std::string, std::string> env = {
        {"NCCOM_CONFIG", kShippedConfig},
        {"NCCOM_PLUGIN_PATH", std::string(NCCOM_BUILD_DIR) + "/lib/nccom"},
        // The tool logs only when NCCL_DEBUG asks; the communicator logs
        // what the configuration says, apart from its report.
        {"NCCL_DEBUG", ""},
        {"NCCL_DEBUG_FILE", dir_.path() + "/log.%p"},
        {"CCOM_SOCKET_IFNAME", "lo"},
        {"NCCOM_HEALTH", "false"},
        {"NCCOM_BOOTSTRAP_TIMEOUT_MS", "120000"},
        {"NEURON_CCOM_SOCK_TIMEOUT", "120000"}};
    if (k.setting == Setting::OldByEnv) env["NCCL_GRAPH_USE_NEW_ALGORITHM"] = "0";
    if (k.setting == Setting::OldByCluster) {
      // The shipped file with a cluster section of its own, chosen by
      // NCCOM_CLUSTER: the plugin's knob from a cluster layer.
      const std::string file = dir_.path() + "/nccom.toml";
      std::ifstream shipped(kShippedConfig);
      std::stringstream text;
      text << shipped.rdbuf()
           << "\n[clusters.parity.plugins.neuron]\ndefault_new_algorithm = false\n";
      std::ofstream(file) << text.str();
      env["NCCOM_CONFIG"] = file;
      env["NCCOM_CLUSTER"] = "parity";
    }
    return env;
  }

  ChildResult tool(const Case& k, int rank, const std::map<std::string, std::string>& env) {
    std::vector<std::string> args = {
        "--platform", k.platform,           "--nodes", std::to_string(k.nodes),
        "--rank",     std::to_string(rank), "--json"};
    if (k.lnc > 0) args.insert(args.end(), {"--lnc", std::to_string(k.lnc)});
    if (k.devices > 0) args.insert(args.end(), {"--devices", std::to_string(k.devices)});
    return nccom_test::run_child(kTool, args, env);
  }

  nccom_test::TempDir dir_;
};

TEST_P(ToolsTopoParity, ToolShowsWhatTheCommunicatorBuilds) {
  const Case k = GetParam();
  const std::map<std::string, std::string> env = environment(k);

  // The shape, as the tool describes the platform's node.
  const ChildResult first = tool(k, 0, env);
  const std::string pod = json_string(first.out, "pod_type");
  const long devices = json_int(first.out, "devices");
  const long lnc = json_int(first.out, "lnc");
  const long vcores = json_int(first.out, "vcores_per_device");
  const long per_node = json_int(first.out, "ranks_per_node");

  // The communicator of that shape on the emulated platform.
  std::map<std::string, std::string> comm_env = env;
  comm_env["NEURON_RT_EMU_PLATFORM"] = k.platform;
  if (first.exit_code != 0) {
    // The one refusal of a listed shape: a multi-node cluster of a platform
    // without NICs. It must fail to build in a communicator too, its node
    // the platform's largest instance (the tool's 1-node defaults).
    ASSERT_NE(first.err.find("NIC"), std::string::npos) << first.err;
    std::vector<std::string> args = {"--platform", k.platform, "--nodes", "1", "--json"};
    const ChildResult one = nccom_test::run_child(kTool, args, env);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    comm_env["NEURON_RT_EMU_DEVICES"] = std::to_string(json_int(one.out, "devices"));
    comm_env["NEURON_RT_VIRTUAL_CORE_SIZE"] = std::to_string(json_int(one.out, "lnc"));
    const long rpn = json_int(one.out, "ranks_per_node");
    const ChildResult comm =
        nccom_test::run_child(PARITY_COMM,
                              {std::to_string(k.nodes), std::to_string(rpn),
                               std::to_string(json_int(one.out, "vcores_per_device")),
                               json_string(one.out, "pod_type") == "P2P"      ? "1"
                               : json_string(one.out, "pod_type") == "SWITCH" ? "2"
                                                                              : "0",
                               "0"},
                              comm_env);
    EXPECT_NE(comm.exit_code, 0) << "nccom-topo refused (" << first.err
                                 << ") but the communicator built:\n"
                                 << comm.out;
    EXPECT_NE(comm.out.find("NIC"), std::string::npos) << comm.out << comm.err;
    return;
  }
  ASSERT_GT(devices, 0) << first.out;
  ASSERT_GT(vcores, 0) << first.out;
  ASSERT_GT(per_node, 0) << first.out;
  comm_env["NEURON_RT_EMU_DEVICES"] = std::to_string(devices);
  comm_env["NEURON_RT_VIRTUAL_CORE_SIZE"] = std::to_string(lnc);

  // Ranks on the first and the last node, at both ends of each.
  const long n_ranks = per_node * k.nodes;
  std::set<long> report = {0, per_node - 1, n_ranks - per_node, n_ranks - 1};
  std::string report_text;
  for (long r : report) report_text += (report_text.empty() ? "" : ",") + std::to_string(r);
  const std::string pod_type = pod == "P2P" ? "1" : pod == "SWITCH" ? "2" : "0";
  const ChildResult comm = nccom_test::run_child(PARITY_COMM,
                                                 {std::to_string(k.nodes), std::to_string(per_node),
                                                  std::to_string(vcores), pod_type, report_text},
                                                 comm_env);
  ASSERT_EQ(comm.exit_code, 0) << comm.out << comm.err;
  auto built = nccom_test::parse_report(comm.out);
  ASSERT_EQ(built["ok"], "1") << comm.out;
  EXPECT_EQ(built["agree"], "1");

  for (long r : report) {
    const ChildResult shown = r == 0 ? first : tool(k, static_cast<int>(r), env);
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    const std::vector<Channel> tool_channels = tool_rings(shown.out);
    const std::string p = "r" + std::to_string(r) + ".";
    ASSERT_EQ(std::to_string(tool_channels.size()), built[p + "channels"])
        << "rank " << r << ": channel count (nccom-topo " << tool_channels.size()
        << ", communicator " << built[p + "channels"] << ")";
    for (size_t c = 0; c < tool_channels.size(); ++c) {
      const std::string ch = std::to_string(c);
      Channel real;
      real.ranks = int_list(built[p + "ring" + ch]);
      real.nic = std::stoi(built[p + "nic" + ch]);
      real.duplicate = built[p + "dup" + ch] == "1";
      EXPECT_EQ(tool_channels[c], real)
          << "rank " << r << " channel " << c << ":\n  nccom-topo:   " << describe(tool_channels[c])
          << "\n  communicator: " << describe(real);
    }
  }
  // The header names what was used.
  EXPECT_EQ(json_string(first.out, "file"), env.at("NCCOM_CONFIG")) << first.out;
  if (k.setting == Setting::OldByCluster) {
    EXPECT_EQ(json_string(first.out, "cluster"), "parity");
    EXPECT_NE(first.out.find("\"key\": \"plugins.neuron.default_new_algorithm\", \"value\": "
                             "\"false\", \"source\": \"cluster parity "),
              std::string::npos)
        << first.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, ToolsTopoParity, ::testing::ValuesIn(cases()), case_name);

}  // namespace
