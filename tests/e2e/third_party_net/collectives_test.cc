// Real collectives (nccom-test, local ranks on emulated hosts, --check) over
// a third-party TCP plugin in each layout nccom accepts, with the behaviours
// real plugins have: accept that blocks until the peer connects, connect that
// blocks until the peer accepts. The plugin is chosen the way an operator
// chooses one (NCCL_NET_PLUGIN, the runtime's plugin off; the NVIDIA layout
// with NCCOM_NET_PLUGIN_LAYOUT=nvidia) and the log must show it was used.
#include "build_paths.h"
#include "child_process.h"
#include "nccom_test_table.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";

struct Layout {
  const char* name;       // test name part
  const char* file;       // under TPN_PLUGIN_DIR
  const char* described;  // how the host names it
  bool nvidia;
};

const Layout kLayouts[] = {
    {"NeuronV4", "libtpn-neuron_v4.so", "TPN (Neuron ncclNet_v4)", false},
    {"NeuronV5", "libtpn-neuron_v5.so", "TPN (Neuron ncclNet_v5)", false},
    {"NeuronV6", "libtpn-neuron_v6.so", "TPN (Neuron ncclNet_v6)", false},
    {"NvidiaV6", "libtpn-nvidia_v6.so", "TPN (NVIDIA ncclNet_v6)", true},
};

std::map<std::string, std::string> plugin_env(const Layout& l, const std::string& behaviour) {
  std::map<std::string, std::string> env = {
      {"NCCOM_CONFIG", ""},
      {"NCCL_DEBUG", "INFO"},
      {"NCCL_DEBUG_SUBSYS", "NET"},
      {"NCCL_NET_PLUGIN", std::string(TPN_PLUGIN_DIR) + "/" + l.file},
      {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"},
      {"TPN_BEHAVIOUR", behaviour},
  };
  if (l.nvidia) env["NCCOM_NET_PLUGIN_LAYOUT"] = "nvidia";
  return env;
}

void expect_checked_run(const nccom_test::ChildResult& r, const Layout& l, size_t want_rows) {
  const std::string all = r.out + r.err;
  ASSERT_EQ(r.exit_code, 0) << all;
  EXPECT_NE(all.find(std::string("NET/Plugin: using ") + l.described), std::string::npos)
      << "the plugin under test was not the one used:\n"
      << all;
  // What the runtime reports libnccom selected (neuronGetOFIHandle), in the
  // table's header: the plugin, its file, and whether libnccom adapts it.
  std::string header =
      std::string("# net plugin: ") + l.described + " from " + TPN_PLUGIN_DIR + "/" + l.file;
  if (std::string(l.name) != "NeuronV6") header += ", through libnccom's v6 adapter";
  EXPECT_NE(r.out.find(header + "\n"), std::string::npos) << header << "\n" << r.out;
  const auto t = nccom_test::table_rows(r.out);
  ASSERT_EQ(t.size(), want_rows) << r.out;
  for (const auto& row : t) {
    ASSERT_EQ(row.size(), 13u) << r.out;
    EXPECT_EQ(row[8], "0") << r.out;
    EXPECT_EQ(row[12], "0") << r.out;
  }
  EXPECT_NE(r.out.find("# Wrong elements       : 0 OK"), std::string::npos) << r.out;
}

void PrintTo(const Layout& l, std::ostream* os) { *os << l.name; }

struct Case {
  Layout layout;
  const char* behaviour;  // TPN_BEHAVIOUR
  int ranks;
  int hosts;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.layout.name << " TPN_BEHAVIOUR=\"" << c.behaviour << "\" " << c.ranks << " ranks on "
      << c.hosts << " hosts";
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string b = info.param.behaviour;
  std::string name;
  bool up = true;
  for (char c : b) {
    if (c == '_' || c == ',') {
      up = true;
      continue;
    }
    name += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return std::string(info.param.layout.name) + "_" + (name.empty() ? "Default" : name) + "_" +
         std::to_string(info.param.ranks) + "x" + std::to_string(info.param.hosts);
}

class ThirdPartyNet : public testing::TestWithParam<Case> {};

TEST_P(ThirdPartyNet, AllReduceCheckedAcrossHosts) {
  const Case& c = GetParam();
  // 8 B .. 32 KiB by 8: 5 sizes; a short bound so a hang fails quickly.
  const auto r = nccom_test::run_child(
      kTool,
      {"-r", std::to_string(c.ranks), "-N", std::to_string(c.hosts), "-b", "8", "-e", "64K", "-f",
       "8", "-n", "2", "-w", "1", "--timeout-ms", "20000", "--check", "allr"},
      plugin_env(c.layout, c.behaviour));
  expect_checked_run(r, c.layout, 5);
}

// A plugin that never reports a request done: every rank fails, within the
// proxy's stall bound, naming the stalled channel and the peer.
class ThirdPartyNetNeverCompletes : public testing::TestWithParam<Layout> {};

// One 8 B all-reduce on 2 ranks over 2 hosts that must fail: everything
// both ranks printed.
std::string failing_run(const Layout& l, const std::string& behaviour, const std::string& knob,
                        const std::string& value,
                        const std::map<std::string, std::string>& extra = {}) {
  auto env = plugin_env(l, behaviour);
  env["NCCL_DEBUG"] = "WARN";
  env[knob] = value;
  for (const auto& [k, v] : extra) env[k] = v;
  const auto r = nccom_test::run_child(
      kTool,
      {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "--timeout-ms", "30000", "--check", "allr"},
      env);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  return r.out + r.err;
}

// The run of a plugin whose requests never complete, through `l`: a stall
// is named with the peer, and the oldest request with `channel`, its peer and
// the plugin.
void expect_stalled_request_named(const Layout& l, const std::string& all,
                                  const std::string& channel) {
  // The ranks' proxies give up on their own stalled requests; the first rank
  // to fail ends the run (the launcher stops the others, which may not have
  // printed theirs yet).
  size_t stalls = 0;
  // ("no progress for <measured> ms (health.stall_fail_s): waiting on rank <peer> (host h, pid
  // p): alive, ...; net_neuron ..."): the health watchdog names the peer.
  for (size_t at = all.find(" ms (health.stall_fail_s): waiting on rank "); at != std::string::npos;
       at = all.find(" ms (health.stall_fail_s): waiting on rank ", at + 1)) {
    ++stalls;
  }
  EXPECT_GE(stalls, 1u) << all;
  const std::string plugin =
      std::string(") in the net plugin ") + l.described + " from " + TPN_PLUGIN_DIR + "/" + l.file;
  bool named = false;
  for (const std::string& request :
       {"SEND on " + channel + " send to rank ", "RECV on " + channel + " receive from rank "}) {
    for (const char* peer : {"0", "1"})
      named = named || all.find("(oldest: " + request + peer + plugin) != std::string::npos;
  }
  EXPECT_TRUE(named) << "no rank named its oldest request on " << channel << ":\n" << all;
  // The launcher's one summary line names what the ranks were doing.
  EXPECT_NE(all.find(" (allr of 8 B)"), std::string::npos) << all;
}

// An 8 B all-reduce runs by recursive doubling over the peer links, whose
// connections are on the channel after the ring channels (32); with that
// off, over ring channel 0.
TEST_P(ThirdPartyNetNeverCompletes, EveryRankFailsNamingTheChannelAndPeer) {
  for (const bool rings : {false, true}) {
    SCOPED_TRACE(rings ? "rings" : "recursive doubling");
    std::map<std::string, std::string> extra;
    if (rings) extra["NEURON_RT_EMU_ALLREDUCE_RD_BYTES"] = "0";
    const std::string all =
        failing_run(GetParam(), "never_complete", "NCCOM_HEALTH_STALL_FAIL_S", "2", extra);
    expect_stalled_request_named(GetParam(), all, rings ? "channel 0" : "channel 32");
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ThirdPartyNetNeverCompletes, testing::ValuesIn(kLayouts),
                         [](const testing::TestParamInfo<Layout>& i) {
                           return std::string(i.param.name);
                         });

// The same plugin with the stall watchdogs at their defaults (60 s): the
// collective's own bound (3 s here) ends the run first, and the health
// service's finding on the failure line names the plugin the waiting
// requests are in.
TEST(ThirdPartyNetNeverCompletesAtTheCollectiveBound, TheFailureNamesThePlugin) {
  const Layout& l = kLayouts[2];
  auto env = plugin_env(l, "never_complete");
  env["NCCL_DEBUG"] = "WARN";
  const auto r = nccom_test::run_child(
      kTool,
      {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "--timeout-ms", "3000", "--check", "allr"}, env);
  const std::string all = r.out + r.err;
  EXPECT_EQ(r.exit_code, 1) << all;
  EXPECT_EQ(all.find("(health.stall_fail_s)"), std::string::npos) << all;
  EXPECT_NE(all.find("timed out after 3000 ms waiting for slice 0 of 1 from rank "),
            std::string::npos)
      << all;
  // Whichever of its send and receive the rank's proxy looked at first.
  const std::string in_plugin = std::string(") is in the net plugin ") + l.described + " from " +
                                TPN_PLUGIN_DIR + "/" + l.file;
  // A rank's own closing line carries the health service's finding (the
  // launcher's summary, short, leaves it to that line).
  bool named = false;
  for (size_t at = all.find("nccom-test: rank "); at != std::string::npos;
       at = all.find("nccom-test: rank ", at + 1)) {
    const std::string text = all.substr(at, all.find('\n', at) - at);
    if (text.find("; the health service says: ") == std::string::npos) continue;
    for (const char* request : {"SEND", "RECV"}) {
      named = named || text.find(std::string("; its oldest request (") + request + in_plugin) !=
                           std::string::npos;
    }
  }
  EXPECT_TRUE(named) << "no rank's closing line names the plugin:\n" << all;
}

// A plugin whose isend fails (TPN_BEHAVIOUR=isend_fails): each rank's own
// line gives the failed call in the plugin first and what the rank was
// doing after it; the launcher prints one short summary line.
TEST(ThirdPartyNetIsendFails, TheFailedCallIsNamedFirstAndSummarisedOnce) {
  const Layout& l = kLayouts[2];
  auto env = plugin_env(l, "isend_fails");
  env["NCCL_DEBUG"] = "WARN";
  const auto r = nccom_test::run_child(
      kTool, {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "--timeout-ms", "20000", "allr"}, env);
  const std::string all = r.out + r.err;
  EXPECT_EQ(r.exit_code, 1) << all;
  EXPECT_NE(all.find("TPN: isend fails: the device went away"), std::string::npos) << all;
  const std::string failed_call = std::string("isend in the net plugin ") + l.described;
  int named = 0;
  std::vector<std::string> summary;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("[rank 1] ", 0) == 0) line.erase(0, 9);
    if (line.rfind("nccom-test: rank 0: ", 0) == 0 || line.rfind("nccom-test: rank 1: ", 0) == 0) {
      const size_t call = line.find(failed_call);
      const size_t doing = line.find(" (allr of 8 B (out-of-place): ");
      EXPECT_NE(call, std::string::npos) << line;
      EXPECT_LT(call, doing) << line;
      ++named;
    } else if (line.rfind("nccom-test: ", 0) == 0) {
      summary.push_back(line);
    }
  }
  EXPECT_GE(named, 1) << all;
  // Rank 0's cause is printed twice: in libnccom's WARN at the failure site
  // and in the rank's own line; the runtime's lines give the status and what
  // the runtime was doing, never the cause libnccom already logged.
  int cause_lines = 0;
  std::istringstream rank0(r.err);
  for (std::string line; std::getline(rank0, line);) {
    if (line.rfind("[rank 1] ", 0) == 0) continue;
    if (std::find(summary.begin(), summary.end(), line) != summary.end()) continue;
    if (line.find(failed_call) == std::string::npos) continue;
    EXPECT_EQ(line.find("nrt-emu"), std::string::npos) << line;
    ++cause_lines;
  }
  EXPECT_EQ(cause_lines, 2) << r.err;
  ASSERT_EQ(summary.size(), 1u) << all;
  EXPECT_LE(summary[0].size(), 200u) << summary[0];
  EXPECT_NE(summary[0].find(" (allr of 8 B)"), std::string::npos) << summary[0];
}

// A plugin stuck inside connect: every rank fails when
// transport.connect_timeout_ms passes, naming the channels and peers still
// pending and the plugin call that has not returned, with the plugin's file.
class ThirdPartyNetStuckConnect : public testing::TestWithParam<Layout> {};

TEST_P(ThirdPartyNetStuckConnect, EveryRankFailsNamingTheCallPluginAndPeer) {
  const std::string all =
      failing_run(GetParam(), "hang_connect", "NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS", "2000");
  const std::string file = std::string(TPN_PLUGIN_DIR) + "/" + GetParam().file;
  const std::string stuck =
      std::string("; the net plugin ") + GetParam().described + " from " + file + " has ";
  int named = 0;
  for (const char* rank :
       {"rank 0: ring transport connect: not connected after 2000 ms "
        "(transport.connect_timeout_ms): send ch0->1 send ch1->1 recv ch0<-1 recv ch1<-1",
        "rank 1: ring transport connect: not connected after 2000 ms "
        "(transport.connect_timeout_ms): send ch0->0 send ch1->0 recv ch0<-0 recv ch1<-0"}) {
    // The first rank to fail ends the run: the other may be stopped before
    // it prints.
    const size_t at = all.find(std::string(rank) + stuck);
    if (at == std::string::npos) continue;
    ++named;
    // Both connects are still inside the plugin (a blocking plugin's
    // accepts too, waiting for them).
    const std::string line = all.substr(at, all.find('\n', at) - at);
    const size_t first = line.find("connect (device 0) for ");
    ASSERT_NE(first, std::string::npos) << line;
    EXPECT_NE(line.find("connect (device 0) for ", first + 1), std::string::npos) << line;
  }
  EXPECT_GE(named, 1) << "no rank's message names the pending channels and the plugin's calls ("
                      << stuck << "...):\n"
                      << all;
  EXPECT_NE(all.find(" (joining the communicator)"), std::string::npos) << all;
}

INSTANTIATE_TEST_SUITE_P(Layouts, ThirdPartyNetStuckConnect, testing::ValuesIn(kLayouts),
                         [](const testing::TestParamInfo<Layout>& i) {
                           return std::string(i.param.name);
                         });

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const Layout& l : kLayouts) {
    // A v4 build always blocks in both; the others are non-blocking unless told.
    const bool v4 = std::string(l.name) == "NeuronV4";
    for (const char* b : {"", "block_accept", "block_accept,block_connect"}) {
      if (v4 && *b != '\0') continue;
      out.push_back(Case{l, b, 2, 2});
    }
    // Plugins that rely on posting order, or complete out of it.
    out.push_back(Case{l, "block_accept,in_order_test", 2, 2});
    out.push_back(Case{l, "out_of_order", 2, 2});
    out.push_back(Case{l, "block_accept,in_order_test", 4, 2});
    out.push_back(Case{l, "out_of_order", 4, 2});
    out.push_back(Case{l, "block_accept,block_connect", 4, 2});
    out.push_back(Case{l, "block_accept,block_connect", 4, 4});
    // Received sizes never written: nccom relies on them only for receives
    // whose length the sender sets, which collectives do not have.
    out.push_back(Case{l, "sizes_unset", 2, 2});
    // The patterns of plugins written for NVIDIA's headers together: sizes
    // never written, a pool of 8 requests that fails the 9th post, tests in
    // posting order only.
    if (l.nvidia) {
      out.push_back(Case{l, "full_is_error", 2, 2});
      out.push_back(Case{l, "sizes_unset,full_is_error,in_order_test", 4, 2});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Layouts, ThirdPartyNet, testing::ValuesIn(cases()), case_name);

// A truncated copy of a plugin named by NCCL_NET_PLUGIN (its program
// headers point past the end of the file) is refused before dlopen, which
// would die with SIGBUS inside the dynamic loader: every rank warns naming
// the file and the truncation, falls back to the socket plugin, and the
// collective completes.
TEST(ThirdPartyNetBroken, TruncatedPluginIsRefusedAndTheRanksFallBackToSocket) {
  nccom_test::TempDir dir;
  const std::string truncated = dir.path() + "/libtpn-truncated.so";
  {
    std::ifstream in(std::string(TPN_PLUGIN_DIR) + "/libtpn-neuron_v6.so", std::ios::binary);
    std::vector<char> head(4096);
    ASSERT_TRUE(in.read(head.data(), static_cast<std::streamsize>(head.size())));
    std::ofstream(truncated, std::ios::binary)
        .write(head.data(), static_cast<std::streamsize>(head.size()));
  }
  auto env = plugin_env(kLayouts[2], "");
  env["NCCL_NET_PLUGIN"] = truncated;
  const auto r = nccom_test::run_child(
      kTool,
      {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "--timeout-ms", "30000", "--check", "allr"},
      env);
  const std::string all = r.out + r.err;
  EXPECT_EQ(r.signal, 0) << all;
  ASSERT_EQ(r.exit_code, 0) << all;
  const std::string warning = "NET/Plugin: cannot use net.plugin \"" + truncated +
                              "\": " + truncated +
                              ": truncated or corrupt shared library: segment ";
  EXPECT_NE(all.find(warning), std::string::npos) << all;
  EXPECT_NE(
      all.find("but the file has 4096 bytes; reinstall or rebuild it; trying the next candidate"),
      std::string::npos)
      << all;
  EXPECT_NE(all.find("net.plugin was unusable)"), std::string::npos) << "the socket fallback:\n"
                                                                     << all;
  EXPECT_NE(r.out.find("# Wrong elements       : 0 OK"), std::string::npos) << r.out;
}

// A third-party plugin handed over by the runtime as its libnccom-net.so
// (found first on LD_LIBRARY_PATH, as an operator's copy would be): what
// nccom-test reports is what libnccom selected, as the runtime learns it
// from neuronGetOFIHandle, and --net ofi holds only when that is the
// runtime's plugin.
class ThirdPartyNetAsRuntimePlugin : public testing::Test {
 protected:
  std::map<std::string, std::string> env(const char* behaviour) {
    const std::string file = std::string(TPN_PLUGIN_DIR) + "/libtpn-neuron_v4.so";
    EXPECT_EQ(symlink(file.c_str(), (dir_.path() + "/libnccom-net.so").c_str()), 0);
    return {{"NCCOM_CONFIG", ""},
            {"NCCL_DEBUG", "WARN"},
            {"LD_LIBRARY_PATH", dir_.path()},
            {"TPN_BEHAVIOUR", behaviour}};
  }
  nccom_test::TempDir dir_;
};

TEST_F(ThirdPartyNetAsRuntimePlugin, ItsAdaptedTableIsReportedAsTheRuntimesPlugin) {
  const auto r = nccom_test::run_child(
      kTool,
      {"-r", "2",  "-N", "2",  "--net", "ofi",          "-b",    "8",       "-e",     "64K", "-f",
       "8",  "-n", "2",  "-w", "1",     "--timeout-ms", "20000", "--check", "--json", "allr"},
      env(""));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string file = std::string(TPN_PLUGIN_DIR) + "/libtpn-neuron_v4.so";
  EXPECT_NE(r.out.find("\"net_plugin\": {\"name\": \"TPN\", \"layout\": \"Neuron\", \"version\": "
                       "4, \"file\": \"" +
                       file + "\", \"adapted\": true, \"from_runtime\": true}"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"wrong_total\": 0"), std::string::npos) << r.out;
}

TEST_F(ThirdPartyNetAsRuntimePlugin, WhenItsInitFailsNetOfiFailsNamingWhatWasSelected) {
  const auto e = env("init_fails");
  const auto r = nccom_test::run_child(
      kTool, {"-r", "2", "-N", "2", "--net", "ofi", "-b", "8", "-e", "8", "allr"}, e);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("--net ofi: libnccom selected Socket (Neuron ncclNet_v6) from "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("libnccom-net-socket.so, not the runtime's libnccom-net.so"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("# Avg bus bandwidth"), std::string::npos)
      << "no results under a wrong name:\n"
      << r.out;
  // Without --net the run is the fallback's, and its header says so. Where
  // EFA is present (said so here: net.efa = yes) the runtime's plugin
  // failing is a WARN.
  auto efa = e;
  efa["NCCOM_NET_EFA"] = "yes";
  const auto d =
      nccom_test::run_child(kTool, {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "allr"}, efa);
  ASSERT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_NE(d.out.find("# net plugin: Socket (Neuron ncclNet_v6) from "), std::string::npos)
      << d.out;
  EXPECT_NE(d.err.find("TPN/Neuron ncclNet_v4: init fails"), std::string::npos) << d.err;
  // The WARN says how to skip the runtime's plugin, and that does skip it.
  const std::string said = d.out + d.err;
  EXPECT_NE(said.find("OFI plugin initNet() failed is EFA enabled? TPN (Neuron ncclNet_v4)"),
            std::string::npos)
      << said;
  EXPECT_NE(
      said.find(
          "; trying the next candidate (on machines without EFA, net.use_runtime_plugin = false "
          "(NCCOM_NET_USE_RUNTIME_PLUGIN=0) uses the next plugin without trying this one)"),
      std::string::npos)
      << said;
  auto skip = e;
  skip["NCCOM_NET_USE_RUNTIME_PLUGIN"] = "0";
  const auto k =
      nccom_test::run_child(kTool, {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "allr"}, skip);
  ASSERT_EQ(k.exit_code, 0) << k.out << k.err;
  EXPECT_NE(k.out.find("# net plugin: Socket (Neuron ncclNet_v6) from "), std::string::npos)
      << k.out;
  EXPECT_EQ((k.out + k.err).find("WARN"), std::string::npos) << k.out << k.err;
}

}  // namespace
