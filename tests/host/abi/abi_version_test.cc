// neuronGetVersionInfo through the real, built libnccom (nec_version_info_t):
// what it writes for each caller size, and that it writes nothing else and does
// nothing else.
#include "build_paths.h"
#include "child_process.h"

#include <nccom/nrt_abi.h>

#include <dlfcn.h>
#include <nrt_emu.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {

using nccom_test::thread_count;

constexpr unsigned char kPoison = 0xa5;

std::string runtime_log() {
  std::string text(static_cast<size_t>(nrt_emu_log_snapshot(nullptr, 0)), '\0');
  nrt_emu_log_snapshot(text.data(), text.size() + 1);
  return text;
}

class AbiVersionInfo : public testing::Test {
 protected:
  void SetUp() override {
    // The test links the reference runtime, so the libnrt.so.1 libnccom needs
    // is this one and its log shows anything libnccom sends it.
    nrt_emu_log_clear();
    threads_before_load_ = thread_count();
    handle_ = dlopen(nccom_test::in_build("lib/libnccom.so"), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    get_ =
        reinterpret_cast<decltype(&neuronGetVersionInfo)>(dlsym(handle_, "neuronGetVersionInfo"));
    ASSERT_NE(get_, nullptr) << dlerror();
  }
  void TearDown() override {
    if (handle_ != nullptr) dlclose(handle_);
  }

  // Calls with size n into a poisoned buffer larger than the struct.
  NRT_STATUS call(size_t n, unsigned char (&buf)[80]) {
    std::memset(buf, kPoison, sizeof buf);
    return get_(reinterpret_cast<nec_version_info_t*>(buf), n);
  }

  void* handle_ = nullptr;
  decltype(&neuronGetVersionInfo) get_ = nullptr;
  int threads_before_load_ = 0;
};

TEST_F(AbiVersionInfo, FullStructGivesVersionHashAndCompat) {
  unsigned char buf[80];
  ASSERT_EQ(call(56, buf), NRT_SUCCESS);
  nec_version_info_t v;
  std::memcpy(&v, buf, sizeof v);
  EXPECT_EQ(v.major, 2u);
  EXPECT_EQ(v.minor, 31u);
  EXPECT_EQ(v.patch, 24u);
  EXPECT_EQ(v.maintenance, 0u);
  EXPECT_EQ(v.compatibility_version, 89u);
  const void* nul = std::memchr(v.git_hash, '\0', sizeof v.git_hash);
  ASSERT_NE(nul, nullptr) << "git_hash must be NUL-terminated within its 16 bytes";
  const size_t length = std::strlen(v.git_hash);
  EXPECT_GE(length, 1u);
  EXPECT_LE(length, 15u);
  for (size_t i = 56; i < sizeof buf; ++i) ASSERT_EQ(buf[i], kPoison) << "byte " << i;
}

TEST_F(AbiVersionInfo, Size48LeavesCompatUntouched) {
  unsigned char buf[80];
  ASSERT_EQ(call(48, buf), NRT_SUCCESS);
  nec_version_info_t v;
  std::memcpy(&v, buf, sizeof v);
  EXPECT_EQ(v.major, 2u);
  EXPECT_NE(std::memchr(v.git_hash, '\0', sizeof v.git_hash), nullptr) << "the hash fits in 48";
  for (size_t i = 48; i < sizeof buf; ++i) ASSERT_EQ(buf[i], kPoison) << "byte " << i;
}

TEST_F(AbiVersionInfo, Size40TouchesNoHashByte) {
  unsigned char buf[80];
  ASSERT_EQ(call(40, buf), NRT_SUCCESS);
  uint64_t numbers[4];
  std::memcpy(numbers, buf, sizeof numbers);
  EXPECT_EQ(numbers[0], 2u);
  EXPECT_EQ(numbers[3], 0u);
  for (size_t i = 32; i < sizeof buf; ++i) ASSERT_EQ(buf[i], kPoison) << "byte " << i;
}

TEST_F(AbiVersionInfo, NeverWritesPastTheCallersSize) {
  for (size_t n = 0; n <= 56; ++n) {
    unsigned char buf[80];
    call(n, buf);
    for (size_t i = n; i < sizeof buf; ++i) {
      ASSERT_EQ(buf[i], kPoison) << "byte " << i << " written with n=" << n;
    }
  }
}

TEST_F(AbiVersionInfo, HasNoSideEffects) {
  const int threads = thread_count();
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  unsigned char first[80], second[80];
  ASSERT_EQ(call(56, first), NRT_SUCCESS);
  ASSERT_EQ(call(56, second), NRT_SUCCESS);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::memcmp(first, second, sizeof first), 0) << "same answer every time";
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
  EXPECT_EQ(runtime_log(), "") << "nothing sent to the runtime's log";
  EXPECT_EQ(thread_count(), threads) << "no thread started";
}

TEST_F(AbiVersionInfo, LoadingLibnccomStartsNothing) {
  // SetUp loaded libnccom already: loading must not have logged or spawned.
  EXPECT_EQ(runtime_log(), "");
  EXPECT_EQ(thread_count(), threads_before_load_);
}

}  // namespace
