// nccom/util/boundary.h: the C boundary of a C++ plugin. Texts land in the
// caller's buffer cut to fit and NUL-terminated; an Error becomes its status;
// the two guards turn every kind of exception into the documented status and
// text (in the buffer, or as a WARN for ncclNet slots); install_logger reads
// the host API only as far as its struct_size goes.
#include <nccom/util/boundary.h>

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nccom::util::guarded;
using nccom::util::guarded_net;
using nccom::util::install_logger;
using nccom::util::put_text;

struct Line {
  int level;
  std::string text;
};
std::vector<Line> g_lines;

void host_logger(nccom_log_level_t level, unsigned long, const char*, int, const char* fmt, ...) {
  char text[4096];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  g_lines.push_back({static_cast<int>(level), text});
}

void net_logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char text[4096];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  g_lines.push_back({static_cast<int>(level), text});
}

// A buffer of 16 'X' bytes: what put_text must not touch stays 'X'.
struct Buffer {
  char bytes[16];
  Buffer() { std::memset(bytes, 'X', sizeof bytes); }
};

class SdkBoundary : public testing::Test {
 protected:
  void SetUp() override {
    g_lines.clear();
    nccom::util::clear_logger();
  }
  void TearDown() override { nccom::util::clear_logger(); }
};

// ---- put_text ----------------------------------------------------------------

TEST_F(SdkBoundary, PutTextToANullBufferWritesNothing) {
  put_text(nullptr, 16, "ignored");
  put_text(nullptr, 0, std::string("ignored"));
}

TEST_F(SdkBoundary, PutTextWithLengthZeroLeavesTheBufferAlone) {
  Buffer b;
  put_text(b.bytes, 0, "hello");
  EXPECT_EQ(b.bytes[0], 'X');
}

TEST_F(SdkBoundary, PutTextWithLengthOneWritesOnlyTheTerminator) {
  Buffer b;
  put_text(b.bytes, 1, "hello");
  EXPECT_EQ(b.bytes[0], '\0');
  EXPECT_EQ(b.bytes[1], 'X');
}

TEST_F(SdkBoundary, PutTextIntoAShortBufferIsCutAndTerminated) {
  Buffer b;
  put_text(b.bytes, 4, "hello");
  EXPECT_STREQ(b.bytes, "hel");
  EXPECT_EQ(b.bytes[4], 'X');
  Buffer c;
  put_text(c.bytes, 5, std::string("hello"));  // one byte short of the terminator
  EXPECT_STREQ(c.bytes, "hell");
  EXPECT_EQ(c.bytes[5], 'X');
}

TEST_F(SdkBoundary, PutTextIntoAnExactBufferKeepsEveryByte) {
  Buffer b;
  put_text(b.bytes, 6, "hello");
  EXPECT_STREQ(b.bytes, "hello");
  EXPECT_EQ(b.bytes[6], 'X');
  Buffer c;
  put_text(c.bytes, sizeof c.bytes, std::string("hi"));
  EXPECT_STREQ(c.bytes, "hi");
  EXPECT_EQ(c.bytes[3], 'X');
}

TEST_F(SdkBoundary, PutTextOfNullTextWritesAnEmptyString) {
  Buffer b;
  put_text(b.bytes, sizeof b.bytes, static_cast<const char*>(nullptr));
  EXPECT_EQ(b.bytes[0], '\0');
  EXPECT_EQ(b.bytes[1], 'X');
}

// ---- to_status and fail ----------------------------------------------------------

TEST_F(SdkBoundary, InvalidIsTheCallersFaultAnyOtherStatusIsAnError) {
  EXPECT_EQ(nccom::util::to_status(nccom::make_error(NRT_INVALID, "x")),
            NCCOM_PLUGIN_INVALID_ARGUMENT);
  for (NRT_STATUS s : {NRT_FAILURE, NRT_RESOURCE, NRT_TIMEOUT, NRT_INVALID_HANDLE}) {
    EXPECT_EQ(nccom::util::to_status(nccom::make_error(s, "x")), NCCOM_PLUGIN_ERROR) << s;
  }
}

TEST_F(SdkBoundary, FailWritesTheMessageAndReturnsTheStatus) {
  char err[64];
  EXPECT_EQ(
      nccom::util::fail(nccom::make_error(NRT_INVALID, "P2P setup: channel 40"), err, sizeof err),
      NCCOM_PLUGIN_INVALID_ARGUMENT);
  EXPECT_STREQ(err, "P2P setup: channel 40");
  EXPECT_EQ(nccom::util::fail(nccom::make_error(NRT_RESOURCE, "out of slots"), err, 4),
            NCCOM_PLUGIN_ERROR);
  EXPECT_STREQ(err, "out");
  EXPECT_EQ(nccom::util::fail(nccom::make_error(NRT_FAILURE, "dropped"), nullptr, 0),
            NCCOM_PLUGIN_ERROR);
}

// ---- guarded (nccom-native slots) ----------------------------------------------

TEST_F(SdkBoundary, GuardedReturnsTheBodysStatusAndLeavesTheBufferAlone) {
  Buffer b;
  EXPECT_EQ(
      guarded("P2P", "setup", b.bytes, sizeof b.bytes, [] { return NCCOM_PLUGIN_UNSUPPORTED; }),
      NCCOM_PLUGIN_UNSUPPORTED);
  EXPECT_EQ(b.bytes[0], 'X');
  EXPECT_EQ(guarded("P2P", "setup", b.bytes, sizeof b.bytes, [] { return NCCOM_PLUGIN_OK; }),
            NCCOM_PLUGIN_OK);
}

TEST_F(SdkBoundary, GuardedTurnsBadAllocIntoASystemErrorOutOfMemory) {
  char err[64];
  EXPECT_EQ(guarded("NET_NEURON", "setup", err, sizeof err,
                    []() -> nccom_plugin_status_t { throw std::bad_alloc(); }),
            NCCOM_PLUGIN_SYSTEM_ERROR);
  EXPECT_STREQ(err, "NET_NEURON setup: out of memory");
}

TEST_F(SdkBoundary, GuardedTurnsAStdExceptionIntoASystemErrorWithItsText) {
  char err[64];
  EXPECT_EQ(guarded("topo_nccl", "probe", err, sizeof err,
                    []() -> nccom_plugin_status_t { throw std::runtime_error("no sysfs"); }),
            NCCOM_PLUGIN_SYSTEM_ERROR);
  EXPECT_STREQ(err, "topo_nccl probe: no sysfs");
}

TEST_F(SdkBoundary, GuardedTurnsAnyOtherExceptionIntoASystemErrorUnknownException) {
  char err[64];
  EXPECT_EQ(guarded("P2P", "connect", err, sizeof err, []() -> nccom_plugin_status_t { throw 7; }),
            NCCOM_PLUGIN_SYSTEM_ERROR);
  EXPECT_STREQ(err, "P2P connect: unknown exception");
}

TEST_F(SdkBoundary, GuardedCutsItsTextToTheBufferAndNeedsNone) {
  Buffer b;
  EXPECT_EQ(guarded("P2P", "connect", b.bytes, 8,
                    []() -> nccom_plugin_status_t { throw std::runtime_error("boom"); }),
            NCCOM_PLUGIN_SYSTEM_ERROR);
  EXPECT_STREQ(b.bytes, "P2P con");
  EXPECT_EQ(b.bytes[8], 'X');
  EXPECT_EQ(guarded("P2P", "init", nullptr, 0, []() -> nccom_plugin_status_t { throw 7; }),
            NCCOM_PLUGIN_SYSTEM_ERROR);
  EXPECT_TRUE(g_lines.empty()) << "the nccom-native guard answers in the buffer, not the log";
}

TEST_F(SdkBoundary, BothGuardsAreNoexcept) {
  char err[8];
  auto status = [] { return NCCOM_PLUGIN_OK; };
  auto result = [] { return ncclSuccess; };
  static_assert(noexcept(guarded("a", "b", err, sizeof err, status)));
  static_assert(noexcept(guarded_net("a", "b", result)));
}

// ---- guarded_net (ncclNet slots) -------------------------------------------------

TEST_F(SdkBoundary, GuardedNetReturnsTheBodysResultAndLogsNothing) {
  nccom::util::set_logger(&net_logger);
  EXPECT_EQ(guarded_net("NET/OFI", "isend", [] { return ncclRemoteError; }), ncclRemoteError);
  EXPECT_EQ(guarded_net("NET/OFI", "isend", [] { return ncclSuccess; }), ncclSuccess);
  EXPECT_TRUE(g_lines.empty());
}

TEST_F(SdkBoundary, GuardedNetLogsBadAllocAndReturnsASystemError) {
  nccom::util::set_logger(&net_logger);
  EXPECT_EQ(guarded_net("NET/OFI", "regMr", []() -> ncclResult_t { throw std::bad_alloc(); }),
            ncclSystemError);
  ASSERT_EQ(g_lines.size(), 1u);
  EXPECT_EQ(g_lines[0].level, NCCL_LOG_WARN);
  EXPECT_EQ(g_lines[0].text, "NET/OFI regMr: out of memory");
}

TEST_F(SdkBoundary, GuardedNetLogsAStdExceptionsTextAndReturnsASystemError) {
  nccom::util::set_logger(&net_logger);
  EXPECT_EQ(guarded_net("NET/Socket :", "listen",
                        []() -> ncclResult_t { throw std::runtime_error("bind: in use"); }),
            ncclSystemError);
  ASSERT_EQ(g_lines.size(), 1u);
  EXPECT_EQ(g_lines[0].level, NCCL_LOG_WARN);
  EXPECT_EQ(g_lines[0].text, "NET/Socket : listen: bind: in use");
}

TEST_F(SdkBoundary, GuardedNetLogsAnyOtherExceptionAndReturnsAnInternalError) {
  nccom::util::set_logger(&net_logger);
  EXPECT_EQ(guarded_net("NET/OFI", "test", []() -> ncclResult_t { throw 7; }), ncclInternalError);
  ASSERT_EQ(g_lines.size(), 1u);
  EXPECT_EQ(g_lines[0].level, NCCL_LOG_WARN);
  EXPECT_EQ(g_lines[0].text, "NET/OFI test: unknown exception");
}

TEST_F(SdkBoundary, GuardedNetWithoutALoggerStillReturnsTheStatus) {
  EXPECT_EQ(guarded_net("NET/OFI", "init", []() -> ncclResult_t { throw std::bad_alloc(); }),
            ncclSystemError);
  EXPECT_EQ(guarded_net("NET/OFI", "init", []() -> ncclResult_t { throw 7; }), ncclInternalError);
  EXPECT_TRUE(g_lines.empty());
}

// ---- install_logger ----------------------------------------------------------------

TEST_F(SdkBoundary, InstallLoggerWithoutAHostInstallsNothing) {
  EXPECT_FALSE(install_logger(nullptr));
  EXPECT_FALSE(nccom::util::has_logger());
}

TEST_F(SdkBoundary, InstallLoggerFromAHostApiTooShortToHoldLogInstallsNothing) {
  nccom_host_api_t host{};
  host.log = &host_logger;
  host.struct_size = static_cast<uint32_t>(offsetof(nccom_host_api_t, log) + sizeof host.log - 1);
  EXPECT_FALSE(install_logger(&host));
  EXPECT_FALSE(nccom::util::has_logger());
  NCCOM_SDK_WARN("dropped");
  EXPECT_TRUE(g_lines.empty());
}

TEST_F(SdkBoundary, InstallLoggerFromAHostApiWithoutALogInstallsNothing) {
  nccom_host_api_t host{};
  host.struct_size = sizeof host;
  EXPECT_FALSE(install_logger(&host));
  EXPECT_FALSE(nccom::util::has_logger());
}

TEST_F(SdkBoundary, InstallLoggerFromAFullHostApiInstallsItsLog) {
  nccom_host_api_t host{};
  host.struct_size = sizeof host;
  host.log = &host_logger;
  EXPECT_TRUE(install_logger(&host));
  NCCOM_SDK_WARN("reached %d", 1);
  ASSERT_EQ(g_lines.size(), 1u);
  EXPECT_EQ(g_lines[0].level, NCCOM_LOG_LEVEL_WARN);
  EXPECT_EQ(g_lines[0].text, "reached 1");
}

TEST_F(SdkBoundary, InstallLoggerFromAHostApiThatEndsAtLogInstallsIt) {
  nccom_host_api_t host{};
  host.struct_size = static_cast<uint32_t>(offsetof(nccom_host_api_t, log) + sizeof host.log);
  host.log = &host_logger;
  EXPECT_TRUE(install_logger(&host));
  EXPECT_TRUE(nccom::util::has_logger());
}

TEST_F(SdkBoundary, AFailedInstallKeepsTheLoggerAlreadyInstalled) {
  nccom::util::set_logger(&host_logger);
  nccom_host_api_t host{};
  host.struct_size = 8;  // struct_size and abi_version only
  EXPECT_FALSE(install_logger(&host));
  NCCOM_SDK_WARN("still here");
  ASSERT_EQ(g_lines.size(), 1u);
  EXPECT_EQ(g_lines[0].text, "still here");
}

}  // namespace
