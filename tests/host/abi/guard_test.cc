// No exception crosses the C boundary or a thread's top: an export's body
// that throws returns a status (NRT_RESOURCE for a failed allocation,
// NRT_FAILURE otherwise), and a thread body that throws ends its thread
// (run_thread_body returns false) instead of terminating the process. An
// export that fails says why in a WARN line (which reaches the runtime's
// log) exactly once.
#include "abi/export.h"
#include "log/guarded.h"
#include "log/log.h"

#include <gtest/gtest.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(ExportGuard, AFailedAllocationIsNrtResource) {
  EXPECT_EQ(nccom::abi::guard("neuronTest", []() -> NRT_STATUS { throw std::bad_alloc(); }),
            NRT_RESOURCE);
}

TEST(ExportGuard, AnyOtherExceptionIsNrtFailure) {
  EXPECT_EQ(
      nccom::abi::guard("neuronTest", []() -> NRT_STATUS { throw std::runtime_error("broken"); }),
      NRT_FAILURE);
  EXPECT_EQ(nccom::abi::guard("neuronTest", []() -> NRT_STATUS { throw 42; }), NRT_FAILURE);
}

TEST(ExportGuard, ABodyThatReturnsKeepsItsStatus) {
  EXPECT_EQ(nccom::abi::guard("neuronTest", []() -> NRT_STATUS { return NRT_TIMEOUT; }),
            NRT_TIMEOUT);
}

std::mutex g_sink_mutex;
std::vector<std::string> g_sunk;

// The WARN sink libnccom points at the runtime's log (nec_ndl_printk).
void record_warn(const char* line, std::size_t length) {
  std::lock_guard lock(g_sink_mutex);
  g_sunk.emplace_back(line, length);
}

class FailedExport : public ::testing::Test {
 protected:
  void SetUp() override {
    nccom::log::Settings quiet;  // WARN lines reach the sink whatever the level
    (void)nccom::log::configure(quiet);
    nccom::log::set_warn_sink(&record_warn);
    std::lock_guard lock(g_sink_mutex);
    g_sunk.clear();
  }
  void TearDown() override { nccom::log::reset(); }
  static std::vector<std::string> sunk() {
    std::lock_guard lock(g_sink_mutex);
    return g_sunk;
  }
};

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

// An error no lower layer logged (a configuration that did not load, say,
// the second time it is met) is said by the export, cause first, naming
// the export after it.
TEST_F(FailedExport, AnErrorNobodyLoggedIsForwardedOnce) {
  const NRT_STATUS s = nccom::abi::guard("neuronTest", [] {
    return nccom::abi::fail(nccom::make_error(NRT_INVALID, "f.toml:2:1: unknown key"));
  });
  EXPECT_EQ(s, NRT_INVALID);
  const auto lines = sunk();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(ends_with(lines[0], "CCOM WARN f.toml:2:1: unknown key (neuronTest)")) << lines[0];
}

// An error whose cause the call already logged is not said twice.
TEST_F(FailedExport, AnErrorAlreadyLoggedIsNotSaidAgain) {
  const NRT_STATUS s = nccom::abi::guard("neuronTest", [] {
    NCCOM_WARN("bootstrap: no root at 127.0.0.1:9");
    return nccom::abi::fail(nccom::make_error(NRT_TIMEOUT, "bootstrap: no root at 127.0.0.1:9"));
  });
  EXPECT_EQ(s, NRT_TIMEOUT);
  auto lines = sunk();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(ends_with(lines[0], "CCOM WARN bootstrap: no root at 127.0.0.1:9")) << lines[0];
  // Logged inside a longer line (a prefix, the export's context) counts too.
  (void)nccom::abi::guard("neuronTest", [] {
    NCCOM_WARN("NET/Plugin: no plugin (neuronTest, rank 0 of 2)");
    return nccom::abi::fail(nccom::make_error(NRT_FAILURE, "no plugin"));
  });
  EXPECT_EQ(sunk().size(), 2u);
  // An error without a status of its own is NRT_FAILURE.
  EXPECT_EQ(nccom::abi::guard("neuronTest",
                              [] { return nccom::abi::fail(nccom::make_error(NRT_SUCCESS, "x")); }),
            NRT_FAILURE);
}

// A WARN line about something else, as the call's last word, does not
// stand for its cause: the runtime would take that line as the cause.
TEST_F(FailedExport, AnUnrelatedWarnDoesNotStandForTheCause) {
  (void)nccom::abi::guard("neuronTest", [] {
    NCCOM_WARN("skipping plugin: libx.so: not found");
    return nccom::abi::fail(nccom::make_error(NRT_INVALID, "f.toml:2:1: unknown key"));
  });
  const auto lines = sunk();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(ends_with(lines[1], "CCOM WARN f.toml:2:1: unknown key (neuronTest)")) << lines[1];
}

// Each call counts for itself: a WARN of an earlier call, or of another
// thread, does not stand for this call's cause; an inner export's lines
// count for the outer call too.
TEST_F(FailedExport, EveryFailedCallSaysWhy) {
  const nccom::Error e = nccom::make_error(NRT_INVALID, "the same cause");
  for (int i = 0; i < 2; ++i)
    (void)nccom::abi::guard("neuronTest", [&e] { return nccom::abi::fail(e); });
  std::thread other([] { NCCOM_WARN("another thread's line"); });
  other.join();
  (void)nccom::abi::guard("neuronOuter", [&e] {
    (void)nccom::abi::guard("neuronInner", [] { return NRT_SUCCESS; });
    return nccom::abi::fail(e);
  });
  (void)nccom::abi::guard("neuronOuter", [&e] {
    (void)nccom::abi::guard("neuronInner", [&e] { return nccom::abi::fail(e); });
    return nccom::abi::fail(e);  // said by the inner call already
  });
  const auto lines = sunk();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_TRUE(ends_with(lines[4], "WARN the same cause (neuronInner)")) << lines[4];
  EXPECT_TRUE(ends_with(lines[0], "WARN the same cause (neuronTest)")) << lines[0];
  EXPECT_TRUE(ends_with(lines[1], "WARN the same cause (neuronTest)")) << lines[1];
  EXPECT_TRUE(ends_with(lines[3], "WARN the same cause (neuronOuter)")) << lines[3];
}

TEST(ThreadGuard, AThreadBodyThatThrowsEndsItsThreadNotTheProcess) {
  bool finished = true;
  std::thread t([&] {
    finished = nccom::log::run_thread_body("test", "nothing", [] { throw std::bad_alloc(); });
  });
  t.join();
  EXPECT_FALSE(finished);
  bool normal = false;
  std::thread u([&] { normal = nccom::log::run_thread_body("test", "nothing", [] {}); });
  u.join();
  EXPECT_TRUE(normal);
}

}  // namespace
