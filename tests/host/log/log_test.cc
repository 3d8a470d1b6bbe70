// Tests for host/log: settings parsing, the debug-file pattern, the exact line
// formats, filtering, the output destinations, concurrency and the WARN sink.
// Every test starts and ends from the unconfigured state (fixture), so the
// order of tests does not matter.
#include "log/log.h"

#include "build_paths.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <latch>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nccom::log {
namespace {

namespace fs = std::filesystem;

std::string short_host() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  std::string host(buf);
  if (const auto dot = host.find('.'); dot != std::string::npos) host.resize(dot);
  return host;
}

long current_tid() { return static_cast<long>(syscall(SYS_gettid)); }

std::string prefix(int device, long tid = current_tid()) {
  return short_host() + ":" + std::to_string(getpid()) + ":" + std::to_string(tid) + " [" +
         std::to_string(device) + "] ";
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The line without its timestamp ("YYYY-MM-DD HH:MM:SS.uuuuuu " right after
// "[dev] "), so lines compare exactly; fails the test when the stamp is not
// there in that form.
std::string untime(const std::string& line) {
  const auto close = line.find("] ");
  if (close == std::string::npos) {
    ADD_FAILURE() << "no \"[dev] \" in: " << line;
    return line;
  }
  const std::size_t at = close + 2;
  const std::string shape = "dddd-dd-dd dd:dd:dd.dddddd ";
  bool ok = line.size() >= at + shape.size();
  for (std::size_t i = 0; ok && i < shape.size(); ++i) {
    const char c = line[at + i];
    ok = shape[i] == 'd' ? std::isdigit(static_cast<unsigned char>(c)) != 0 : c == shape[i];
  }
  if (!ok) {
    ADD_FAILURE() << "no \"YYYY-MM-DD HH:MM:SS.uuuuuu \" after \"[dev] \" in: " << line;
    return line;
  }
  return line.substr(0, at) + line.substr(at + shape.size());
}

// untime() applied to every line of text.
std::string untimed(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    const bool newline = end != std::string::npos;
    if (!newline) end = text.size();
    out += untime(text.substr(start, end - start));
    if (newline) out += '\n';
    start = end + 1;
  }
  return out;
}

// Splits text into lines; fails the test if the text does not end in '\n'.
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  if (text.empty()) return lines;
  EXPECT_EQ(text.back(), '\n') << "output does not end in a newline";
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reset();
    set_thread_device(-1);
    std::string tmpl = (fs::temp_directory_path() / "nccom-log-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << std::strerror(errno);
    dir_ = tmpl;
    path_ = dir_ / "debug.log";
  }
  void TearDown() override {
    reset();
    set_thread_device(-1);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  void configure_file(Level level, unsigned long mask = kAll) {
    Settings settings;
    settings.level = level;
    settings.subsys = mask;
    settings.file_pattern = path_.string();
    Status status = configure(settings);
    ASSERT_TRUE(status.ok()) << status.error().message;
  }
  // The file's lines, each without its timestamp (checked by untime()).
  std::vector<std::string> lines() const { return split_lines(untimed(read_all(path_))); }

  fs::path dir_;
  fs::path path_;
};

using LogParse = LogTest;
using LogPattern = LogTest;
using LogFormat = LogTest;
using LogFilter = LogTest;
using LogFile = LogTest;
using LogThreads = LogTest;
using LogSink = LogTest;

// ---- parse_settings -------------------------------------------------------

TEST_F(LogParse, EveryLevelNameInAnyCase) {
  const std::pair<const char*, Level> cases[] = {
      {"NONE", Level::None},       {"none", Level::None},   {"VERSION", Level::Version},
      {"Version", Level::Version}, {"WARN", Level::Warn},   {"warn", Level::Warn},
      {"INFO", Level::Info},       {"iNfO", Level::Info},   {"ABORT", Level::Abort},
      {"abort", Level::Abort},     {"TRACE", Level::Trace}, {"Trace", Level::Trace}};
  for (const auto& [name, level] : cases) {
    auto settings = parse_settings(name, "", "");
    ASSERT_TRUE(settings.ok()) << name;
    EXPECT_EQ(settings->level, level) << name;
  }
}

TEST_F(LogParse, EmptyLevelIsNone) {
  auto settings = parse_settings("", "", "");
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->level, Level::None);
}

TEST_F(LogParse, EverySubsysNameInAnyCase) {
  const std::pair<const char*, unsigned long> cases[] = {{"INIT", kInit},
                                                         {"COLL", kColl},
                                                         {"P2P", kP2P},
                                                         {"SHM", kShm},
                                                         {"NET", kNet},
                                                         {"GRAPH", kGraph},
                                                         {"TUNING", kTuning},
                                                         {"ENV", kEnv},
                                                         {"ALLOC", kAlloc},
                                                         {"CALL", kCall},
                                                         {"PROXY", kProxy},
                                                         {"NVLS", kNvls},
                                                         {"BOOTSTRAP", kBootstrap},
                                                         {"REG", kReg},
                                                         {"ALL", kAll}};
  for (const auto& [name, bits] : cases) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const std::string& spelled : {std::string(name), lower}) {
      auto settings = parse_settings("INFO", spelled, "");
      ASSERT_TRUE(settings.ok()) << spelled;
      EXPECT_EQ(settings->subsys, bits) << spelled;
    }
  }
}

TEST_F(LogParse, CommaListCombines) {
  auto settings = parse_settings("INFO", "init, NET ,graph", "");
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->subsys, kInit | kNet | kGraph);
}

TEST_F(LogParse, CaretInvertsTheMask) {
  auto one = parse_settings("INFO", "^NET", "");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->subsys, ~static_cast<unsigned long>(kNet));
  auto two = parse_settings("INFO", "^init,coll", "");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->subsys, ~static_cast<unsigned long>(kInit | kColl));
  EXPECT_EQ(two->subsys & kNet, static_cast<unsigned long>(kNet));
}

TEST_F(LogParse, EmptySubsysIsTheDefaultMask) {
  auto settings = parse_settings("INFO", "", "");
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->subsys, static_cast<unsigned long>(kInit | kEnv | kBootstrap));
  EXPECT_EQ(settings->subsys, Settings{}.subsys);
}

TEST_F(LogParse, UnknownLevelNamesTheTokenAndTheValidOnes) {
  auto settings = parse_settings("LOUD", "", "");
  ASSERT_FALSE(settings.ok());
  EXPECT_EQ(settings.error().status, NRT_INVALID);
  EXPECT_EQ(settings.error().message,
            "NCCL_DEBUG: unknown level \"LOUD\"; valid: NONE, VERSION, WARN, INFO, ABORT, TRACE");
}

TEST_F(LogParse, UnknownSubsysNamesTheTokenAndTheValidOnes) {
  auto settings = parse_settings("INFO", "INIT,NETT", "");
  ASSERT_FALSE(settings.ok());
  EXPECT_EQ(settings.error().status, NRT_INVALID);
  EXPECT_EQ(settings.error().message,
            "NCCL_DEBUG_SUBSYS: unknown subsystem \"NETT\"; valid: INIT, COLL, P2P, SHM, NET, "
            "GRAPH, TUNING, ENV, ALLOC, CALL, PROXY, NVLS, BOOTSTRAP, REG, ALL");
  auto inverted = parse_settings("INFO", "^bogus", "");
  ASSERT_FALSE(inverted.ok());
  EXPECT_NE(inverted.error().message.find("\"bogus\""), std::string::npos);
}

TEST_F(LogParse, StreamNamesInAnyCaseEmptyIsStdout) {
  for (const auto& [name, stream] : {std::pair<const char*, Stream>{"", Stream::Stdout},
                                     {"stdout", Stream::Stdout},
                                     {"STDOUT", Stream::Stdout},
                                     {"stderr", Stream::Stderr},
                                     {" StdErr ", Stream::Stderr}}) {
    auto settings = parse_settings("INFO", "", "", name);
    ASSERT_TRUE(settings.ok()) << name;
    EXPECT_EQ(settings->stream, stream) << name;
  }
  auto bad = parse_settings("INFO", "", "", "syslog");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "log.stream: unknown stream \"syslog\"; valid: stdout, stderr");
}

TEST_F(LogParse, FilePatternIsStoredUnexpanded) {
  auto settings = parse_settings("WARN", "", "/tmp/x.%h.%p");
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->file_pattern, "/tmp/x.%h.%p");
}

// ---- expand_file_pattern ---------------------------------------------------

TEST_F(LogPattern, ExpandsHostAndPid) {
  EXPECT_EQ(expand_file_pattern("nccom.%h.%p.log"),
            "nccom." + short_host() + "." + std::to_string(getpid()) + ".log");
}

TEST_F(LogPattern, DoublePercentIsOnePercent) {
  EXPECT_EQ(expand_file_pattern("a%%b"), "a%b");
  EXPECT_EQ(expand_file_pattern("%%h"), "%h");
  EXPECT_EQ(expand_file_pattern("%%%p"), "%" + std::to_string(getpid()));
}

TEST_F(LogPattern, OtherConversionsAreKeptVerbatim) {
  EXPECT_EQ(expand_file_pattern("%x.%d"), "%x.%d");
  EXPECT_EQ(expand_file_pattern("100%"), "100%");
  EXPECT_EQ(expand_file_pattern("/plain/path.log"), "/plain/path.log");
  EXPECT_EQ(expand_file_pattern(""), "");
}

// ---- line formats ---------------------------------------------------------

TEST_F(LogFormat, InfoLine) {
  configure_file(Level::Info);
  set_thread_device(3);
  NCCOM_INFO(kInit, "hello %d", 42);
  EXPECT_EQ(lines(), std::vector<std::string>{prefix(3) + "CCOM INFO hello 42"});
}

TEST_F(LogFormat, WarnLineHasBasenameAndLine) {
  configure_file(Level::Warn);
  NCCOM_WARN("bad %s", "thing");
  const int line = __LINE__ - 1;
  EXPECT_EQ(lines(), std::vector<std::string>{prefix(-1) + "log_test.cc:" + std::to_string(line) +
                                              " CCOM WARN bad thing"});
}

TEST_F(LogFormat, AbortPrintsLikeWarn) {
  configure_file(Level::Warn);
  message(Level::Abort, kAll, "/some/dir/abort.cc", 77, "giving up");
  EXPECT_EQ(lines(), std::vector<std::string>{prefix(-1) + "abort.cc:77 CCOM WARN giving up"});
}

TEST_F(LogFormat, TraceLineHasElapsedMilliseconds) {
  configure_file(Level::Trace);
  set_thread_device(0);
  NCCOM_TRACE(kNet, "tick %s", "tock");
  const int line = __LINE__ - 1;
  const auto got = lines();
  ASSERT_EQ(got.size(), 1u);
  const std::string head = prefix(0);
  const std::string tail = " log_test.cc:" + std::to_string(line) + " CCOM TRACE tick tock";
  ASSERT_EQ(got[0].compare(0, head.size(), head), 0) << got[0];
  ASSERT_GT(got[0].size(), head.size() + tail.size());
  ASSERT_EQ(got[0].compare(got[0].size() - tail.size(), tail.size(), tail), 0) << got[0];
  const std::string elapsed = got[0].substr(head.size(), got[0].size() - head.size() - tail.size());
  const auto dot = elapsed.find('.');
  ASSERT_NE(dot, std::string::npos) << elapsed;
  EXPECT_EQ(elapsed.size() - dot - 1, 6u) << elapsed;
  EXPECT_EQ(elapsed.find_first_not_of("0123456789."), std::string::npos) << elapsed;
  EXPECT_GE(std::stod(elapsed), 0.0);
  EXPECT_LT(std::stod(elapsed), 60'000.0);  // since configure(), not since boot
}

TEST_F(LogFormat, VersionLevelPrintsOnlyTheBannerAsInfo) {
  configure_file(Level::Version);
  NCCOM_WARN("not shown");
  NCCOM_INFO(kAll, "not shown");
  message(Level::Version, kAll, __FILE__, __LINE__, "NCCL version 2.31.24+nrt2.0");
  EXPECT_EQ(lines(),
            std::vector<std::string>{prefix(-1) + "CCOM INFO NCCL version 2.31.24+nrt2.0"});
}

TEST_F(LogFormat, ExactlyOneNewlinePerLine) {
  configure_file(Level::Info);
  NCCOM_INFO(kInit, "a");
  NCCOM_INFO(kInit, "b\n");
  NCCOM_INFO(kInit, "c\n\n");
  NCCOM_INFO(kInit, "%s", "");
  const std::string p = prefix(-1) + "CCOM INFO ";
  EXPECT_EQ(untimed(read_all(path_)), p + "a\n" + p + "b\n" + p + "c\n" + p + "\n");
}

TEST_F(LogFormat, OverlongMessageIsTruncatedWithEllipsis) {
  configure_file(Level::Info);
  const std::string big(20000, 'x');
  NCCOM_INFO(kInit, "%s", big.c_str());
  NCCOM_INFO(kInit, "after");
  const auto got = lines();
  ASSERT_EQ(got.size(), 2u);
  const std::string head = prefix(-1) + "CCOM INFO ";
  EXPECT_EQ(got[0].compare(0, head.size(), head), 0);
  EXPECT_LT(got[0].size(), 4096u);
  EXPECT_GT(got[0].size(), 4000u);
  ASSERT_GE(got[0].size(), 3u);
  EXPECT_EQ(got[0].substr(got[0].size() - 3), "...");
  EXPECT_EQ(got[0].find_first_not_of('x', head.size()), got[0].size() - 3);
  EXPECT_EQ(got[1], head + "after");
}

// The stamp is the wall clock in UTC, whatever the local time zone: it lies
// between two readings of that clock taken around the call.
TEST_F(LogFormat, TimestampIsUtcWithMicroseconds) {
  const char* tz = std::getenv("TZ");
  const std::string saved = tz != nullptr ? tz : "";
  ::setenv("TZ", "XYZ-5:30", 1);  // 5 h 30 min east of UTC
  ::tzset();
  configure_file(Level::Info);
  const auto stamp_of = [](const timespec& t) {
    std::tm utc{};
    gmtime_r(&t.tv_sec, &utc);
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%06ld", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<long>(t.tv_nsec / 1000));
    return std::string(text);
  };
  timespec before{}, after{};
  clock_gettime(CLOCK_REALTIME, &before);
  NCCOM_INFO(kInit, "stamped");
  clock_gettime(CLOCK_REALTIME, &after);
  if (tz != nullptr) {
    ::setenv("TZ", saved.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
  const auto raw = split_lines(read_all(path_));
  ASSERT_EQ(raw.size(), 1u);
  const std::string head = prefix(-1);
  ASSERT_EQ(raw[0].compare(0, head.size(), head), 0) << raw[0];
  const std::string stamp = raw[0].substr(head.size(), 26);
  // Fixed-width fields: text order is time order.
  EXPECT_LE(stamp_of(before), stamp) << raw[0];
  EXPECT_GE(stamp_of(after), stamp) << raw[0];
  EXPECT_EQ(raw[0].substr(head.size() + 26), " CCOM INFO stamped");
}

TEST_F(LogFormat, EveryLevelCarriesTheTimestamp) {
  configure_file(Level::Trace);
  NCCOM_INFO(kAll, "info");
  NCCOM_WARN("warn");
  NCCOM_TRACE(kAll, "trace");
  message(Level::Version, kAll, __FILE__, __LINE__, "banner");
  message(Level::Abort, kAll, __FILE__, __LINE__, "abort");
  const auto got = lines();  // untime() fails the test for a line without one
  ASSERT_EQ(got.size(), 5u);
}

// A thread that never set a device shows the device of the process's
// communicators once one is known, and -1 again when they use several.
TEST_F(LogFormat, ThreadWithoutDeviceShowsTheProcessDevice) {
  configure_file(Level::Info);
  const auto from_other_thread = [](const char* text) {
    std::thread([text] { NCCOM_INFO(kInit, "%s", text); }).join();
  };
  from_other_thread("before any device");
  note_process_device(5);
  from_other_thread("one device");
  set_thread_device(2);
  NCCOM_INFO(kInit, "own device wins");
  note_process_device(5);
  from_other_thread("the same device again");
  note_process_device(6);
  from_other_thread("two devices");
  const auto got = lines();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].substr(got[0].find('[')), "[-1] CCOM INFO before any device");
  EXPECT_EQ(got[1].substr(got[1].find('[')), "[5] CCOM INFO one device");
  EXPECT_EQ(got[2], prefix(2) + "CCOM INFO own device wins");
  EXPECT_EQ(got[3].substr(got[3].find('[')), "[5] CCOM INFO the same device again");
  EXPECT_EQ(got[4].substr(got[4].find('[')), "[-1] CCOM INFO two devices");
  reset();  // forgets the process's devices
  configure_file(Level::Info);
  from_other_thread("after reset");
  EXPECT_EQ(lines().back().substr(lines().back().find('[')), "[-1] CCOM INFO after reset");
}

// ---- filtering and destinations ------------------------------------------

TEST_F(LogFilter, LevelFilter) {
  configure_file(Level::Warn);
  EXPECT_TRUE(enabled(Level::Warn, kAll));
  EXPECT_FALSE(enabled(Level::Info, kAll));
  NCCOM_INFO(kAll, "info at warn");
  NCCOM_TRACE(kAll, "trace at warn");
  NCCOM_WARN("warn at warn");
  auto got = lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("CCOM WARN warn at warn"), std::string::npos);

  configure_file(Level::Info);
  EXPECT_FALSE(enabled(Level::Trace, kAll));
  NCCOM_TRACE(kAll, "trace at info");
  NCCOM_INFO(kAll, "info at info");
  got = lines();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[1].find("CCOM INFO info at info"), std::string::npos);
}

TEST_F(LogFilter, SubsysFilter) {
  configure_file(Level::Trace, kNet);
  NCCOM_INFO(kInit, "init dropped");
  NCCOM_TRACE(kInit, "init trace dropped");
  NCCOM_INFO(kNet, "net kept");
  NCCOM_INFO(kInit | kNet, "either kept");
  NCCOM_WARN("warn ignores the mask");
  const auto got = lines();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_NE(got[0].find("CCOM INFO net kept"), std::string::npos);
  EXPECT_NE(got[1].find("CCOM INFO either kept"), std::string::npos);
  EXPECT_NE(got[2].find("CCOM WARN warn ignores the mask"), std::string::npos);
}

TEST_F(LogFilter, InvertedMaskFromParse) {
  auto settings = parse_settings("INFO", "^NET", path_.string());
  ASSERT_TRUE(settings.ok());
  ASSERT_TRUE(configure(*settings).ok());
  NCCOM_INFO(kNet, "net dropped");
  NCCOM_INFO(kGraph, "graph kept");
  const auto got = lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("graph kept"), std::string::npos);
}

TEST_F(LogFilter, UnconfiguredWarnGoesToStderr) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  NCCOM_WARN("early %s", "failure");
  const int line = __LINE__ - 1;
  NCCOM_INFO(kAll, "info is not printed before configure");
  message(Level::Version, kAll, __FILE__, __LINE__, "nor the banner");
  const std::string err = untimed(testing::internal::GetCapturedStderr());
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(err, prefix(-1) + "log_test.cc:" + std::to_string(line) + " CCOM WARN early failure\n");
  EXPECT_EQ(out, "");
}

TEST_F(LogFilter, ResetReturnsToStderr) {
  configure_file(Level::Info);
  reset();
  testing::internal::CaptureStderr();
  NCCOM_WARN("after reset");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("CCOM WARN after reset\n"), std::string::npos) << err;
  EXPECT_EQ(read_all(path_), "");
}

TEST_F(LogFilter, NoneSilencesEverything) {
  Settings settings;  // level None, stdout
  ASSERT_TRUE(configure(settings).ok());
  EXPECT_FALSE(enabled(Level::Warn, kAll));
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  NCCOM_WARN("silent");
  message(Level::Abort, kAll, __FILE__, __LINE__, "silent");
  NCCOM_INFO(kAll, "silent");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

TEST_F(LogFilter, EmptyPatternLogsToStdout) {
  Settings settings;
  settings.level = Level::Info;
  ASSERT_TRUE(configure(settings).ok());
  testing::internal::CaptureStdout();
  NCCOM_INFO(kInit, "to stdout");
  EXPECT_EQ(untimed(testing::internal::GetCapturedStdout()), prefix(-1) + "CCOM INFO to stdout\n");
}

TEST_F(LogFilter, StderrStreamKeepsStdoutClean) {
  auto settings = parse_settings("TRACE", "ALL", "", "stderr");
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  EXPECT_EQ(settings->stream, Stream::Stderr);
  ASSERT_TRUE(configure(*settings).ok());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  message(Level::Version, kAll, __FILE__, __LINE__, "banner");
  NCCOM_INFO(kInit, "info");
  NCCOM_WARN("warn");
  NCCOM_TRACE(kInit, "trace");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  const auto got = split_lines(untimed(err));
  ASSERT_EQ(got.size(), 4u) << err;
  EXPECT_NE(got[0].find("CCOM INFO banner"), std::string::npos);
  EXPECT_NE(got[3].find("CCOM TRACE trace"), std::string::npos);
}

// A debug file wins over the stream; one that cannot be opened falls back
// to the stream, and the error says which.
TEST_F(LogFilter, UnopenableFileFallsBackToTheStderrStream) {
  auto settings =
      parse_settings("INFO", "", (dir_ / "no-such-dir" / "debug.log").string(), "STDERR");
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  Status status = configure(*settings);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("logging to stderr instead"), std::string::npos)
      << status.error().message;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  NCCOM_INFO(kInit, "to stderr");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(untimed(err), prefix(-1) + "CCOM INFO to stderr\n");
}

// ---- the debug file -------------------------------------------------------

TEST_F(LogFile, PatternIsExpandedWhenOpened) {
  Settings settings;
  settings.level = Level::Info;
  settings.file_pattern = (dir_ / "dbg.%h.%p.log").string();
  ASSERT_TRUE(configure(settings).ok());
  NCCOM_INFO(kInit, "expanded");
  const fs::path expected =
      dir_ / ("dbg." + short_host() + "." + std::to_string(getpid()) + ".log");
  const auto got = split_lines(untimed(read_all(expected)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], prefix(-1) + "CCOM INFO expanded");
}

TEST_F(LogFile, AppendsToAnExistingFile) {
  { std::ofstream(path_) << "earlier run\n"; }
  configure_file(Level::Info);
  NCCOM_INFO(kInit, "this run");
  const auto got = split_lines(read_all(path_));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "earlier run");
  EXPECT_EQ(untime(got[1]), prefix(-1) + "CCOM INFO this run");
}

TEST_F(LogFile, ReconfigureSwitchesFiles) {
  configure_file(Level::Info);
  NCCOM_INFO(kInit, "first");
  const fs::path first = path_;
  path_ = dir_ / "second.log";
  configure_file(Level::Info);
  NCCOM_INFO(kInit, "second");
  EXPECT_EQ(split_lines(untimed(read_all(first))),
            std::vector<std::string>{prefix(-1) + "CCOM INFO first"});
  EXPECT_EQ(lines(), std::vector<std::string>{prefix(-1) + "CCOM INFO second"});
}

TEST_F(LogFile, UnopenablePathIsAnErrorAndFallsBackToStdout) {
  Settings settings;
  settings.level = Level::Info;
  settings.file_pattern = (dir_ / "no-such-dir" / "debug.log").string();
  Status status = configure(settings);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().status, NRT_INVALID);
  const std::string& text = status.error().message;
  EXPECT_NE(text.find(settings.file_pattern), std::string::npos) << text;
  EXPECT_NE(text.find(std::strerror(ENOENT)), std::string::npos) << text;
  EXPECT_NE(text.find("stdout"), std::string::npos) << text;

  testing::internal::CaptureStdout();
  NCCOM_INFO(kInit, "still logging");
  EXPECT_EQ(untimed(testing::internal::GetCapturedStdout()),
            prefix(-1) + "CCOM INFO still logging\n");
}

// ---- concurrency ----------------------------------------------------------

TEST_F(LogThreads, ConcurrentLinesAreWhole) {
  configure_file(Level::Info);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 1000;
  std::vector<long> tids(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      set_thread_device(t);
      tids[t] = current_tid();
      const std::string fill(700, static_cast<char>('a' + t));
      start.arrive_and_wait();
      for (int i = 0; i < kPerThread; ++i) {
        NCCOM_INFO(kInit, "thread %d seq %d payload %.*s", t, i, i % 700, fill.c_str());
      }
    });
  }
  for (auto& thread : threads) thread.join();

  const auto got = lines();
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kThreads * kPerThread));
  std::vector<int> next(kThreads, 0);
  for (const std::string& line : got) {
    int t = -1;
    int seq = -1;
    const auto at = line.find("CCOM INFO thread ");
    ASSERT_NE(at, std::string::npos) << line;
    ASSERT_EQ(std::sscanf(line.c_str() + at, "CCOM INFO thread %d seq %d", &t, &seq), 2) << line;
    ASSERT_GE(t, 0);
    ASSERT_LT(t, kThreads);
    EXPECT_EQ(line.substr(0, at), prefix(t, tids[t]));
    EXPECT_EQ(seq, next[t]) << "thread " << t << " lines out of order or lost";
    next[t] = seq + 1;
    const std::string head =
        "CCOM INFO thread " + std::to_string(t) + " seq " + std::to_string(seq) + " payload ";
    EXPECT_EQ(line.substr(at), head + std::string(seq % 700, static_cast<char>('a' + t)));
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(next[t], kPerThread);
}

// ---- WARN sink ------------------------------------------------------------

std::mutex g_sink_mutex;
std::vector<std::string> g_sink_lines;

void record_line(const char* line, std::size_t length) {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  EXPECT_EQ(line[length], '\0');
  g_sink_lines.emplace_back(line, length);
}

std::vector<std::string> take_sink_lines() {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  return std::exchange(g_sink_lines, {});
}

TEST_F(LogSink, ReceivesWarnLinesOnlyWithoutNewline) {
  take_sink_lines();
  configure_file(Level::Trace);
  set_warn_sink(record_line);
  NCCOM_INFO(kAll, "info");
  NCCOM_TRACE(kAll, "trace");
  message(Level::Version, kAll, __FILE__, __LINE__, "banner");
  NCCOM_WARN("first warning");
  message(Level::Abort, kAll, __FILE__, __LINE__, "abort");
  const auto got = lines();
  ASSERT_EQ(got.size(), 5u);
  std::vector<std::string> forwarded;
  for (const std::string& line : take_sink_lines()) forwarded.push_back(untime(line));
  EXPECT_EQ(forwarded, (std::vector<std::string>{got[3], got[4]}));
}

// The runtime reports a failed call with the cause libnccom gave, so WARN
// lines reach the sink even when the level prints nothing; INFO never does.
TEST_F(LogSink, CalledForWarningsTheLevelDoesNotPrint) {
  take_sink_lines();
  Settings settings;  // None
  ASSERT_TRUE(configure(settings).ok());
  set_warn_sink(record_line);
  NCCOM_WARN("not printed, still forwarded");
  NCCOM_INFO(kAll, "neither printed nor forwarded");
  EXPECT_TRUE(lines().empty());
  const auto forwarded = take_sink_lines();
  ASSERT_EQ(forwarded.size(), 1u);
  EXPECT_NE(forwarded[0].find("CCOM WARN not printed, still forwarded"), std::string::npos)
      << forwarded[0];
}

TEST_F(LogSink, CalledForUnconfiguredWarnAndClearedByReset) {
  take_sink_lines();
  set_warn_sink(record_line);
  testing::internal::CaptureStderr();
  NCCOM_WARN("early");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(take_sink_lines(), std::vector<std::string>{err.substr(0, err.size() - 1)});
  reset();
  testing::internal::CaptureStderr();
  NCCOM_WARN("after reset");
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(take_sink_lines().empty());
}

}  // namespace
}  // namespace nccom::log
