// nccom/util/log.h: the one logger of a shared object. Lines reach whichever
// logger was installed (the nccom-native or the ncclNet shape), formatted in
// the plugin and handed over as "%s"; with none installed nothing is called.
#include <nccom/util/log.h>

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Seen {
  int level;
  unsigned long subsys;
  std::string file;
  int line;
  std::string fmt;
  std::string text;
};
std::vector<Seen> g_seen;

std::string format(const char* fmt, va_list args) {
  char text[4096];
  std::vsnprintf(text, sizeof text, fmt, args);
  return text;
}

void host_logger(nccom_log_level_t level, unsigned long subsys, const char* file, int line,
                 const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  g_seen.push_back({static_cast<int>(level), subsys, file, line, fmt, format(fmt, args)});
  va_end(args);
}

void net_logger(ncclDebugLogLevel level, unsigned long subsys, const char* file, int line,
                const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  g_seen.push_back({static_cast<int>(level), subsys, file, line, fmt, format(fmt, args)});
  va_end(args);
}

class SdkLog : public testing::Test {
 protected:
  void SetUp() override { g_seen.clear(); }
  void TearDown() override { nccom::util::clear_logger(); }
};

TEST_F(SdkLog, WithoutALoggerNothingIsCalled) {
  nccom::util::clear_logger();
  EXPECT_FALSE(nccom::util::has_logger());
  NCCOM_SDK_WARN("dropped %d", 1);
  NCCOM_SDK_INFO(NCCOM_SUBSYS_NET, "dropped %d", 2);
  EXPECT_TRUE(g_seen.empty());
}

TEST_F(SdkLog, TheHostLoggerGetsLevelSubsystemPlaceAndTheFormattedText) {
  nccom::util::set_logger(&host_logger);
  ASSERT_TRUE(nccom::util::has_logger());
  const int here = __LINE__ + 1;
  NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH | NCCOM_SUBSYS_INIT, "%d rings over %s", 4, "node 0");
  NCCOM_SDK_WARN("lost %s", "rank 3");
  NCCOM_SDK_TRACE(NCCOM_SUBSYS_NET, "tick");
  ASSERT_EQ(g_seen.size(), 3u);
  EXPECT_EQ(g_seen[0].level, NCCOM_LOG_LEVEL_INFO);
  EXPECT_EQ(g_seen[0].subsys, 33ul);
  EXPECT_EQ(g_seen[0].file, __FILE__);
  EXPECT_EQ(g_seen[0].line, here);
  EXPECT_EQ(g_seen[0].fmt, "%s");
  EXPECT_EQ(g_seen[0].text, "4 rings over node 0");
  EXPECT_EQ(g_seen[1].level, NCCOM_LOG_LEVEL_WARN);
  EXPECT_EQ(g_seen[1].subsys, NCCOM_SUBSYS_ALL);
  EXPECT_EQ(g_seen[1].text, "lost rank 3");
  EXPECT_EQ(g_seen[2].level, NCCOM_LOG_LEVEL_TRACE);
}

TEST_F(SdkLog, AnNcclNetLoggerGetsNcclsLevels) {
  nccom::util::set_logger(&net_logger);
  NCCOM_SDK_WARN("w");
  NCCOM_SDK_INFO(NCCOM_SUBSYS_NET, "i");
  NCCOM_SDK_TRACE(NCCOM_SUBSYS_NET, "t");
  ASSERT_EQ(g_seen.size(), 3u);
  EXPECT_EQ(g_seen[0].level, NCCL_LOG_WARN);
  EXPECT_EQ(g_seen[1].level, NCCL_LOG_INFO);
  EXPECT_EQ(g_seen[1].subsys, static_cast<unsigned long>(NCCL_NET));
  EXPECT_EQ(g_seen[2].level, NCCL_LOG_TRACE);
}

TEST_F(SdkLog, InstallingOneShapeReplacesTheOther) {
  nccom::util::set_logger(&net_logger);
  nccom::util::set_logger(&host_logger);
  NCCOM_SDK_WARN("once");
  ASSERT_EQ(g_seen.size(), 1u);
  EXPECT_EQ(g_seen[0].level, NCCOM_LOG_LEVEL_WARN);
  nccom::util::clear_logger();
  NCCOM_SDK_WARN("after clear");
  EXPECT_EQ(g_seen.size(), 1u);
}

// Text from a peer or a file is never read as a format by the host, and a
// line longer than the limit is cut, not overrun.
TEST_F(SdkLog, ArgumentTextIsNeverAFormatAndLongLinesAreCut) {
  nccom::util::set_logger(&host_logger);
  NCCOM_SDK_WARN("peer said %s", "%n%s%s%p");
  const std::string long_text(5000, 'x');
  NCCOM_SDK_WARN("%s", long_text.c_str());
  ASSERT_EQ(g_seen.size(), 2u);
  EXPECT_EQ(g_seen[0].fmt, "%s");
  EXPECT_EQ(g_seen[0].text, "peer said %n%s%s%p");
  EXPECT_EQ(g_seen[1].text, std::string(nccom::util::kLogLineMax - 1, 'x'));
}

}  // namespace
