// The runtime log: nec_ndl_printk lines, the 256-line ring, snapshots.
#include "runtime_log_text.h"
#include "scoped_env.h"

#include <nrt_emu.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using nccom_test::ScopedEnv;

namespace {

TEST(EmuLog, PrintkLinesLandInTheSnapshotWithTheirAction) {
  nrt_emu_log_clear();
  char line[] = "CCOM WARN first line";
  nec_ndl_printk(line, sizeof line - 1, 3);
  EXPECT_EQ(nccom_test::runtime_log_text(), "[nccom] action=3: CCOM WARN first line\n");
}

TEST(EmuLog, PrintkRespectsSizeWithoutANul) {
  nrt_emu_log_clear();
  char text[] = {'a', 'b', 'c', 'd', 'e'};  // no terminator at all
  nec_ndl_printk(text, 3, 0);
  char with_nul[] = "xy\0zzz";
  nec_ndl_printk(with_nul, sizeof with_nul, 1);  // stops at the NUL
  EXPECT_EQ(nccom_test::runtime_log_text(), "[nccom] action=0: abc\n[nccom] action=1: xy\n");
}

TEST(EmuLog, PrintkSplitsLinesAndIgnoresEmptyText) {
  nrt_emu_log_clear();
  char text[] = "one\ntwo\n";
  nec_ndl_printk(text, sizeof text - 1, 2);
  nec_ndl_printk(nullptr, 10, 2);
  char empty[] = "";
  nec_ndl_printk(empty, 0, 2);
  EXPECT_EQ(nccom_test::runtime_log_text(), "[nccom] action=2: one\n[nccom] action=2: two\n");
}

TEST(EmuLog, RingKeepsTheLast256Lines) {
  nrt_emu_log_clear();
  for (int i = 0; i < 300; ++i) {
    std::string text = "line " + std::to_string(i);
    nec_ndl_printk(text.data(), static_cast<uint32_t>(text.size()), 0);
  }
  const std::string log = nccom_test::runtime_log_text();
  EXPECT_EQ(log.rfind("[nccom] action=0: line 44\n", 0), 0u) << "300 - 256 = 44 is the oldest";
  EXPECT_NE(log.find("[nccom] action=0: line 299\n"), std::string::npos);
  EXPECT_EQ(log.find("line 43\n"), std::string::npos);
  size_t lines = 0;
  for (char c : log) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(lines, 256u);
}

TEST(EmuLog, SnapshotTruncatesLikeSnprintf) {
  nrt_emu_log_clear();
  char text[] = "0123456789";
  nec_ndl_printk(text, 10, 0);
  const std::string full = "[nccom] action=0: 0123456789\n";
  EXPECT_EQ(nrt_emu_log_snapshot(nullptr, 0), static_cast<int>(full.size()));
  for (size_t len : {size_t{1}, size_t{5}, full.size(), full.size() + 1, full.size() + 10}) {
    std::string buf(len + 4, '#');
    EXPECT_EQ(nrt_emu_log_snapshot(buf.data(), len), static_cast<int>(full.size()));
    const size_t kept = std::min(len - 1, full.size());
    EXPECT_EQ(buf.substr(0, kept), full.substr(0, kept)) << len;
    EXPECT_EQ(buf[kept], '\0') << len;
    EXPECT_EQ(buf.substr(len), "####") << "nothing written past len " << len;
  }
}

TEST(EmuLog, PrintkGoesToStderrOnlyAtInfoOrMoreVerbose) {
  char text[] = "visible?";
  {
    ScopedEnv level("NEURON_RT_LOG_LEVEL", "WARN");
    testing::internal::CaptureStderr();
    nec_ndl_printk(text, sizeof text - 1, 0);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  }
  {
    ScopedEnv level("NEURON_RT_LOG_LEVEL", "info");
    testing::internal::CaptureStderr();
    nec_ndl_printk(text, sizeof text - 1, 0);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "nrt-emu nccom: visible?\n");
  }
}

TEST(EmuLog, LongLinesAreCut) {
  nrt_emu_log_clear();
  std::string huge(10000, 'z');
  nec_ndl_printk(huge.data(), static_cast<uint32_t>(huge.size()), 0);
  const std::string log = nccom_test::runtime_log_text();
  EXPECT_EQ(log.size(), 4096u + 1) << "4096 bytes per line, then the newline";
}

}  // namespace
