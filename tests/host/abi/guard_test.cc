// No exception crosses the C boundary or a thread's top: an export's body
// that throws returns a status (NRT_RESOURCE for a failed allocation,
// NRT_FAILURE otherwise), and a thread body that throws ends its thread
// (run_thread_body returns false) instead of terminating the process.
#include "abi/export.h"
#include "log/guarded.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

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
