// select_from: candidates in order, each broken one skipped with its own
// WARN, the winner logged once with its reason. Also the plugin logger and
// the kernel check.
#include "net/selection.h"

#include "net/logger.h"
#include "net/plugin_answers.h"
#include "net_host_util.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <tuple>

namespace nccom::net::testing {
namespace {

Candidate file_candidate(const std::string& stem, Layout layout = Layout::kNeuron) {
  const std::string path = plugin_path(stem);
  return Candidate{.what = stem,
                   .reason = "because the test says so",
                   .bind = [path, layout] { return open_and_bind(path, layout, {}, path); },
                   .probe = {},
                   .prepare = {},
                   .if_it_fails = {},
                   .failure_expected = {}};
}

TEST(NetHostSelect, EachBrokenCandidateIsSkippedWithItsOwnWarning) {
  LogCapture log;
  std::vector<Candidate> candidates;
  for (const char* stem : {"nethost-null-slot", "nethost-nvidia-v6", "nethost-no-table",
                           "nethost-init-fails", "nethost-no-devices", "nethost-neuron-v5"})
    candidates.push_back(file_candidate(stem));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().version, 5);
  EXPECT_EQ(chosen->devices, 1);
  EXPECT_EQ(chosen->reason, "because the test says so");

  const std::string text = log.text();
  EXPECT_TRUE(log.has("cannot use nethost-null-slot: " + plugin_path("nethost-null-slot") +
                      ": ncclNetPlugin_v6 has NULL mandatory slot irecv"))
      << text;
  EXPECT_TRUE(log.has("cannot use nethost-nvidia-v6: " + plugin_path("nethost-nvidia-v6") +
                      ": ncclNetPlugin_v6 is 136 bytes"))
      << text;
  EXPECT_TRUE(log.has("cannot use nethost-no-table: Failed to find ncclNetPlugin_v6 symbol."))
      << text;
  EXPECT_TRUE(
      log.has("OFI plugin initNet() failed is EFA enabled? init-fails (Neuron "
              "ncclNet_v6) from " +
              plugin_path("nethost-init-fails") + ": init returned 3 (ncclInternalError)"))
      << text;
  EXPECT_TRUE(
      log.has("OFI plugin initNet() failed is EFA enabled? no-devices (Neuron "
              "ncclNet_v6) from " +
              plugin_path("nethost-no-devices") +
              ": devices() reported 0 devices; a usable net plugin has at least 1"))
      << text;
  EXPECT_TRUE(log.has("CCOM INFO NET/Plugin: using loopback (Neuron ncclNet_v5) from " +
                      plugin_path("nethost-neuron-v5") +
                      " with 1 device(s) (because the test says so)"))
      << text;
  // The plugin's own lines reach the log, its NULL format included.
  EXPECT_TRUE(log.has("init-fails: no network")) << text;
  EXPECT_TRUE(log.has("(net plugin logged a NULL format)")) << text;
}

TEST(NetHostSelect, RejectedPluginWhoseInitRanIsFinalisedAndKeptLoaded) {
  LogCapture log;
  std::vector<Candidate> candidates;
  candidates.push_back(file_candidate("nethost-no-devices"));
  candidates.push_back(file_candidate("nethost-neuron-v6"));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_TRUE(chosen) << chosen.error().message;
  lb_stats_t* rejected = stats_of(plugin_path("nethost-no-devices"));
  ASSERT_NE(rejected, nullptr) << "a library whose init ran is never unloaded";
  EXPECT_GE(rejected->init_calls, 1);
  EXPECT_EQ(rejected->fini_calls, rejected->init_calls);
}

TEST(NetHostSelect, NoUsableCandidateIsAnError) {
  LogCapture log;
  std::vector<Candidate> candidates;
  candidates.push_back(file_candidate("nethost-null-name"));
  candidates.push_back(file_candidate("nethost-neuron-v6", Layout::kNvidia));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_FALSE(chosen);
  EXPECT_EQ(chosen.error().status, NRT_FAILURE);
  EXPECT_NE(chosen.error().message.find(
                "no usable net plugin (tried nethost-null-name; nethost-neuron-v6)"),
            std::string::npos)
      << chosen.error().message;
  EXPECT_TRUE(log.has("CCOM WARN NET/Plugin: no usable net plugin")) << log.text();

  auto nothing = select_from({}, plugin_logger());
  ASSERT_FALSE(nothing);
  EXPECT_NE(nothing.error().message.find("there was no candidate"), std::string::npos);
}

// A truncated copy of a plugin is refused before dlopen (which would die
// with SIGBUS), with the file and the truncation in the WARN, and the next
// candidate is used.
TEST(NetHostSelect, TruncatedPluginFileIsSkippedWithItsOwnWarning) {
  LogCapture log;
  const std::string truncated = log.dir() + "/libnethost-truncated.so";
  {
    std::ifstream in(plugin_path("nethost-neuron-v6"), std::ios::binary);
    std::vector<char> head(4096);
    ASSERT_TRUE(in.read(head.data(), static_cast<std::streamsize>(head.size())));
    std::ofstream(truncated, std::ios::binary)
        .write(head.data(), static_cast<std::streamsize>(head.size()));
  }
  std::vector<Candidate> candidates;
  candidates.push_back(Candidate{
      .what = "the truncated copy",
      .reason = "first",
      .bind = [truncated] { return open_and_bind(truncated, Layout::kNeuron, {}, truncated); },
      .probe = {},
      .prepare = {},
      .if_it_fails = {},
      .failure_expected = {}});
  candidates.push_back(file_candidate("nethost-neuron-v5"));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().version, 5);
  EXPECT_TRUE(log.has("CCOM WARN NET/Plugin: cannot use the truncated copy: " + truncated +
                      ": truncated or corrupt shared library: segment "))
      << log.text();
  EXPECT_TRUE(
      log.has("but the file has 4096 bytes; reinstall or rebuild it; trying the next candidate"))
      << log.text();
  std::remove(truncated.c_str());
}

// A plugin reporting more devices than nccom accepts is refused like one
// whose init fails: one WARN naming it, the call and the count, finalised,
// kept loaded, and the next candidate used. Nothing is made per device for
// it (2^30 devices would otherwise cost gigabytes).
TEST(NetHostSelect, DeviceCountAboveTheBoundIsRefusedAndTheNextCandidateIsUsed) {
  static_assert(kMaxNetDevices == 256);
  LogCapture log;
  std::vector<Candidate> candidates;
  for (const char* stem : {"nethost-huge-devices", "nethost-257-devices", "nethost-neuron-v6"})
    candidates.push_back(file_candidate(stem));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "loopback");
  EXPECT_EQ(chosen->devices, 1);
  for (const auto& [stem, name, count] : {std::tuple<std::string, std::string, std::string>{
                                              "nethost-huge-devices", "huge-devices", "1073741824"},
                                          {"nethost-257-devices", "257-devices", "257"}}) {
    EXPECT_TRUE(log.has("CCOM WARN OFI plugin initNet() failed is EFA enabled? " + name +
                        " (Neuron ncclNet_v6) from " + plugin_path(stem) + ": devices() reported " +
                        count +
                        " devices, more than the 256 nccom accepts (kMaxNetDevices); the "
                        "plugin is broken: fix it or choose another with net.plugin; trying the "
                        "next candidate"))
        << log.text();
    lb_stats_t* rejected = stats_of(plugin_path(stem));
    ASSERT_NE(rejected, nullptr) << stem << ": a library whose init ran is never unloaded";
    EXPECT_EQ(rejected->init_calls, 1) << stem;
    EXPECT_EQ(rejected->fini_calls, 1) << stem;
  }
}

TEST(NetHostSelect, DeviceCountAtTheBoundIsAccepted) {
  LogCapture log;
  std::vector<Candidate> candidates;
  candidates.push_back(file_candidate("nethost-256-devices"));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->devices, kMaxNetDevices);
  auto again = device_count(*chosen->net);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, 256);
}

// Strings not terminated within their bound and maxRecvs outside
// 1..NCCL_NET_MAX_REQUESTS are warned about once per device at selection;
// the plugin stays usable, the host copies at most the bound and hands
// transports the clamped maxRecvs.
TEST(NetHostSelect, UnterminatedStringsAndOutOfRangeMaxRecvsAreWarnedAndBounded) {
  LogCapture log;
  std::vector<Candidate> candidates;
  candidates.push_back(file_candidate("nethost-long-strings"));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_TRUE(chosen) << chosen.error().message;
  const std::string who =
      "long-strings (Neuron ncclNet_v6) from " + plugin_path("nethost-long-strings");
  EXPECT_TRUE(log.has("CCOM WARN NET/Plugin: " + who +
                      ": getProperties(0) returned a name that is "
                      "not NUL-terminated within 256 bytes; nccom uses its first 256 bytes"))
      << log.text();
  EXPECT_TRUE(log.has("CCOM WARN NET/Plugin: " + who +
                      ": getProperties(0) returned a pciPath that "
                      "is not NUL-terminated within 4096 bytes; nccom uses its first 4096 bytes"))
      << log.text();
  EXPECT_TRUE(log.has("CCOM WARN NET/Plugin: " + who +
                      ": getProperties(0): maxRecvs 0 is outside "
                      "1..128; 1 is used"))
      << log.text();

  ncclNetProperties_v6_t props{};
  ASSERT_EQ(chosen->net->get_properties(0, &props), ncclSuccess);
  EXPECT_EQ(bounded_text(props.name, kMaxNetNameBytes), std::string(256, 'n'));
  EXPECT_EQ(bounded_text(props.pciPath, kMaxNetPathBytes), std::string(4096, 'p'));
  EXPECT_EQ(clamp_properties(props), "maxRecvs 0 is outside 1..128; 1 is used");
  EXPECT_EQ(props.maxRecvs, 1);
}

// A plugin whose getProperties fills the struct with 0xff (wild name and
// pciPath pointers): selection warns naming the pointer and goes on, and
// every later read of those strings gives "" instead of a SIGSEGV.
TEST(NetHostSelect, WildStringPointersAreWarnedAboutAndNeverFollowed) {
  LogCapture log;
  std::vector<Candidate> candidates;
  candidates.push_back(file_candidate("nethost-wild-props"));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_TRUE(chosen) << chosen.error().message;
  const std::string who =
      "wild-props (Neuron ncclNet_v6) from " + plugin_path("nethost-wild-props");
  for (const char* field : {"name", "pciPath"}) {
    EXPECT_TRUE(log.has("CCOM WARN NET/Plugin: " + who + ": getProperties(0) returned a " + field +
                        " pointer (0xffffffffffffffff) this process cannot read; nccom uses \"\""))
        << log.text();
  }
  EXPECT_TRUE(log.has("getProperties(0): maxRecvs -1 is outside 1..128; 1 is used")) << log.text();
  ncclNetProperties_v6_t props{};
  ASSERT_EQ(chosen->net->get_properties(0, &props), ncclSuccess);
  EXPECT_EQ(bounded_text(props.name, kMaxNetNameBytes), "");
  EXPECT_EQ(bounded_text(props.pciPath, kMaxNetPathBytes), "");
}

// readable_text stops at the first byte the process cannot read: a string
// that runs into an unmapped page is cut there, readable but unterminated.
TEST(NetHostSelect, ReadableTextStopsWhereTheMappingEnds) {
  const long page = sysconf(_SC_PAGESIZE);
  void* two = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(two, MAP_FAILED);
  char* base = static_cast<char*>(two);
  ASSERT_EQ(munmap(base + page, page), 0);
  std::memset(base, 'x', page);
  const ReadText tail = readable_text(base + page - 10, 256);
  EXPECT_TRUE(tail.readable);
  EXPECT_FALSE(tail.terminated);
  EXPECT_EQ(tail.text, std::string(10, 'x'));
  const ReadText gone = readable_text(base + page, 256);
  EXPECT_FALSE(gone.readable);
  EXPECT_EQ(gone.text, "");
  base[page - 3] = '\0';
  const ReadText ended = readable_text(base + page - 10, 256);
  EXPECT_TRUE(ended.terminated);
  EXPECT_EQ(ended.text, std::string(7, 'x'));
  munmap(base, page);
}

TEST(NetHostSelect, MaxRecvsAboveTheRequestLimitIsClampedToIt) {
  LogCapture log;
  std::vector<Candidate> candidates;
  candidates.push_back(file_candidate("nethost-many-recvs"));
  auto chosen = select_from(std::move(candidates), plugin_logger());
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_TRUE(log.has("getProperties(0): maxRecvs 1000000 is outside 1..128; 128 is used"))
      << log.text();
  ncclNetProperties_v6_t props{};
  ASSERT_EQ(chosen->net->get_properties(0, &props), ncclSuccess);
  EXPECT_EQ(props.maxRecvs, 1000000) << "the plugin's own answer";
  EXPECT_NE(clamp_properties(props), "");
  EXPECT_EQ(props.maxRecvs, NCCL_NET_MAX_REQUESTS);
  EXPECT_EQ(clamp_properties(props), "") << "in range now";
}

// The table's own name is read with the same bound.
TEST(NetHostBind, UnterminatedTableNameIsCutAtTheBound) {
  auto bound = open_and_bind(plugin_path("nethost-long-table-name"), Layout::kNeuron, {}, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ((*bound)->info().name, std::string(kMaxNetNameBytes, 't'));
}

TEST(NetHostAnswers, BoundedTextStopsAtTheNulOrTheBound) {
  EXPECT_EQ(bounded_text(nullptr, 8), "");
  EXPECT_EQ(bounded_text("", 8), "");
  EXPECT_EQ(bounded_text("abc", 8), "abc");
  EXPECT_EQ(bounded_text("abcdefgh", 8), "abcdefgh");
  const char unterminated[4] = {'w', 'x', 'y', 'z'};
  EXPECT_EQ(bounded_text(unterminated, sizeof unterminated), "wxyz");
  EXPECT_EQ(bounded_text(unterminated, 2), "wx");
}

TEST(NetHostLogger, ToleratesNullFormatNullFileAndOddLevels) {
  LogCapture log;
  ncclDebugLogger_t logger = plugin_logger();
  logger(NCCL_LOG_INFO, NCCL_NET, nullptr, 0, nullptr);
  logger(NCCL_LOG_WARN, NCCL_NET, nullptr, 0, "warned %d", 7);
  logger(static_cast<ncclDebugLogLevel>(99), NCCL_NET, "f.c", 1, "odd level %s", "shown");
  logger(NCCL_LOG_NONE, NCCL_NET, "f.c", 1, "never shown");
  logger(NCCL_LOG_TRACE, NCCL_NET, "f.c", 1, "trace is above INFO");
  const std::string text = log.text();
  EXPECT_TRUE(log.has("CCOM INFO (net plugin logged a NULL format)")) << text;
  EXPECT_TRUE(log.has("?:0 CCOM WARN warned 7")) << text;
  EXPECT_TRUE(log.has("CCOM INFO odd level shown")) << text;
  EXPECT_FALSE(log.has("never shown")) << text;
  EXPECT_FALSE(log.has("trace is above INFO")) << text;
}

TEST(NetHostKernel, ForkSafeWarningOnlyForOldKernelsWithoutTheVariable) {
  const std::string warning = fork_safe_warning("5.10.209-198.858.amzn2.x86_64", "");
  EXPECT_EQ(warning.rfind("Linux kernel 5.10 requires setting FI_EFA_FORK_SAFE=1", 0), 0u)
      << warning;
  EXPECT_NE(warning.find("Multi-node support will be disabled."), std::string::npos);
  EXPECT_FALSE(fork_safe_warning("4.14.1", "").empty());
  EXPECT_EQ(fork_safe_warning("5.10.0", "1"), "");
  EXPECT_EQ(fork_safe_warning("5.14.0", ""), "");
  EXPECT_EQ(fork_safe_warning("6.1.0-18-amd64", ""), "");
  EXPECT_EQ(fork_safe_warning("garbage", ""), "");
  EXPECT_EQ(fork_safe_warning("5", ""), "");
  EXPECT_EQ(fork_safe_warning("", ""), "");
}

}  // namespace
}  // namespace nccom::net::testing
