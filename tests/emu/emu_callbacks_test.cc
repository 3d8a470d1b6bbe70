// The 20 callbacks of the reference runtime, called in-process exactly as
// libnccom calls them (through their NRT_2.0.0 bindings).
#include "runtime_log_text.h"
#include "scoped_env.h"

#include <nrt_emu.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

using nccom_test::ScopedEnv;

namespace {

TEST(EmuCallbacks, SemaphoreIncrementsFromManyThreadsSumExactly) {
  constexpr int kThreads = 8;
  constexpr int kIncrements = 20000;
  alignas(4) volatile uint32_t semaphore = 5;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&semaphore, t] {
      for (int i = 0; i < kIncrements; ++i) nec_inc_semaphore(&semaphore, 1 + t % 3);
    });
  }
  for (auto& t : threads) t.join();
  uint32_t expected = 5;
  for (int t = 0; t < kThreads; ++t) expected += kIncrements * (1 + t % 3);
  EXPECT_EQ(semaphore, expected);
}

TEST(EmuCallbacks, SemaphoreWrapsLikeA32BitRegister) {
  volatile uint32_t semaphore = 0xffffffffu;
  nec_inc_semaphore(&semaphore, 2);
  EXPECT_EQ(semaphore, 1u);
  nec_inc_semaphore(nullptr, 1);  // logged, not a crash
}

TEST(EmuCallbacks, InstanceInfoDefaultsToTheEmuPlatform) {
  ScopedEnv unset("NEURON_RT_EMU_PLATFORM", nullptr);
  nrt_instance_info_t info;
  std::memset(&info, 0xa5, sizeof info);
  ASSERT_EQ(nrt_get_instance_info(&info, sizeof info), NRT_SUCCESS);
  EXPECT_EQ(info.family, 0u);
  EXPECT_STREQ(info.arch_name, "emu");
  EXPECT_STREQ(info.device_revision, "emu");
}

TEST(EmuCallbacks, InstanceInfoFollowsTheEmulatedPlatform) {
  struct Case {
    const char* name;
    uint32_t family;
    const char* arch;
    const char* revision;
  };
  // The arch name is the instance family's (trn1n is a trn1, an UltraServer
  // node a trn2), as topo_neuron lists them.
  for (const Case& c : {Case{"trn1", 2, "trn1", "v2"}, Case{"trn1n", 3, "trn1", "v2"},
                        Case{"inf2", 4, "inf2", "v2"}, Case{"trn2", 5, "trn2", "v3"},
                        Case{"trn2-ultraserver", 9, "trn2", "v3"}, Case{"trn3", 10, "trn3", "v4"},
                        Case{"emu", 0, "emu", "emu"}}) {
    ScopedEnv platform("NEURON_RT_EMU_PLATFORM", c.name);
    nrt_instance_info_t info{};
    ASSERT_EQ(nrt_get_instance_info(&info, sizeof info), NRT_SUCCESS) << c.name;
    EXPECT_EQ(info.family, c.family) << c.name;
    EXPECT_STREQ(info.arch_name, c.arch) << c.name;
    EXPECT_STREQ(info.device_revision, c.revision) << c.name;
  }
  ScopedEnv bad("NEURON_RT_EMU_PLATFORM", "trn9");
  nrt_instance_info_t info{};
  EXPECT_EQ(nrt_get_instance_info(&info, sizeof info), NRT_INVALID);
  EXPECT_NE(
      nccom_test::runtime_log_text().find("NEURON_RT_EMU_PLATFORM=trn9 is not a known platform"),
      std::string::npos);
}

// nrt_emu_platform_name: what NEURON_RT_EMU_PLATFORM resolves to, as the
// instance info above is made from it.
TEST(EmuCallbacks, PlatformNameIsTheResolvedPlatform) {
  {
    ScopedEnv unset("NEURON_RT_EMU_PLATFORM", nullptr);
    EXPECT_STREQ(nrt_emu_platform_name(), "emu");
  }
  {
    ScopedEnv empty("NEURON_RT_EMU_PLATFORM", "");
    EXPECT_STREQ(nrt_emu_platform_name(), "emu");
  }
  for (const char* name : {"trn1", "trn2-ultraserver", "trn3-switch-v1"}) {
    ScopedEnv platform("NEURON_RT_EMU_PLATFORM", name);
    EXPECT_STREQ(nrt_emu_platform_name(), name);
  }
  ScopedEnv bad("NEURON_RT_EMU_PLATFORM", "trn9");
  EXPECT_EQ(nrt_emu_platform_name(), nullptr);
}

TEST(EmuCallbacks, InstanceInfoCopiesOnlyWhatTheCallerAsksFor) {
  ScopedEnv platform("NEURON_RT_EMU_PLATFORM", "trn2");
  for (size_t len : {size_t{0}, size_t{4}, size_t{8}, size_t{20}, size_t{32}, size_t{48}}) {
    unsigned char buf[64];
    std::memset(buf, 0xa5, sizeof buf);
    ASSERT_EQ(nrt_get_instance_info(reinterpret_cast<nrt_instance_info_t*>(buf), len), NRT_SUCCESS);
    const size_t copied = len < 32 ? len : 32;
    for (size_t i = copied; i < sizeof buf; ++i) {
      ASSERT_EQ(buf[i], 0xa5) << "byte " << i << " written with out_len " << len;
    }
    if (len >= 4) {
      uint32_t family;
      std::memcpy(&family, buf, 4);
      EXPECT_EQ(family, 5u);
    }
  }
  EXPECT_EQ(nrt_get_instance_info(nullptr, 32), NRT_INVALID);
}

TEST(EmuCallbacks, VersionHonoursTheCallersSize) {
  nrt_version_t full;
  std::memset(&full, 0xa5, sizeof full);
  ASSERT_EQ(nrt_get_version(&full, sizeof full), NRT_SUCCESS);
  EXPECT_EQ(full.rt_major, 2u);
  EXPECT_EQ(full.rt_minor, 31u);
  EXPECT_EQ(full.rt_patch, 24u);
  EXPECT_EQ(full.rt_maintenance, 0u);
  EXPECT_NE(std::memchr(full.rt_detail, '\0', sizeof full.rt_detail), nullptr);
  EXPECT_GT(std::strlen(full.rt_detail), 0u);
  ASSERT_NE(std::memchr(full.git_hash, '\0', sizeof full.git_hash), nullptr);
  EXPECT_GE(std::strlen(full.git_hash), 8u) << "libnccom keeps the first 8 bytes";

  // rt_detail only when covered, git_hash only when the whole struct fits.
  for (size_t len :
       {size_t{32}, size_t{40}, size_t{159}, size_t{160}, size_t{223}, size_t{224}, size_t{300}}) {
    unsigned char buf[320];
    std::memset(buf, 0xa5, sizeof buf);
    ASSERT_EQ(nrt_get_version(reinterpret_cast<nrt_version_t*>(buf), len), NRT_SUCCESS) << len;
    const size_t written = len >= 224 ? 224 : len >= 160 ? 160 : 32;
    for (size_t i = written; i < sizeof buf; ++i) {
      ASSERT_EQ(buf[i], 0xa5) << "byte " << i << " written with out_len " << len;
    }
    EXPECT_EQ(std::memcmp(buf, &full, written), 0) << len;
  }
  nrt_version_t small{};
  EXPECT_EQ(nrt_get_version(&small, 31), NRT_INVALID);
  EXPECT_EQ(nrt_get_version(nullptr, sizeof small), NRT_INVALID);
}

TEST(EmuCallbacks, TotalVncCountDefaultsToZero) {
  uint32_t count = 99;
  {
    ScopedEnv unset("NEURON_RT_EMU_TOTAL_VNC_COUNT", nullptr);
    ASSERT_EQ(nrt_get_total_vnc_count(&count), NRT_SUCCESS);
    EXPECT_EQ(count, 0u) << "0 lets libnccom run its distributed bootstrap";
  }
  {
    ScopedEnv set("NEURON_RT_EMU_TOTAL_VNC_COUNT", "64");
    ASSERT_EQ(nrt_get_total_vnc_count(&count), NRT_SUCCESS);
    EXPECT_EQ(count, 64u);
  }
  ScopedEnv bad("NEURON_RT_EMU_TOTAL_VNC_COUNT", "lots");
  EXPECT_EQ(nrt_get_total_vnc_count(&count), NRT_INVALID);
  EXPECT_EQ(nrt_get_total_vnc_count(nullptr), NRT_INVALID);
}

TEST(EmuCallbacks, VirtualCoreSizeIsOneOrTwo) {
  uint32_t size = 0;
  {
    ScopedEnv unset("NEURON_RT_VIRTUAL_CORE_SIZE", nullptr);
    ASSERT_EQ(nec_get_virtual_core_size(&size), NRT_SUCCESS);
    EXPECT_EQ(size, 1u);
  }
  {
    ScopedEnv two("NEURON_RT_VIRTUAL_CORE_SIZE", "2");
    ASSERT_EQ(nec_get_virtual_core_size(&size), NRT_SUCCESS);
    EXPECT_EQ(size, 2u);
  }
  for (const char* bad : {"0", "3", "-1", "two", "1x"}) {
    ScopedEnv env("NEURON_RT_VIRTUAL_CORE_SIZE", bad);
    size = 77;
    EXPECT_EQ(nec_get_virtual_core_size(&size), NRT_INVALID) << bad;
    EXPECT_EQ(size, 77u) << "no output on failure";
  }
  EXPECT_EQ(nec_get_virtual_core_size(nullptr), NRT_INVALID);
}

TEST(EmuCallbacks, LibncclNetBeforeAnyLoadSaysWhyAndTruncates) {
  int err = 0;
  char msg[256];
  EXPECT_EQ(nrt_get_libnccl_net(&err, msg, sizeof msg), nullptr);
  EXPECT_NE(err, 0);
  EXPECT_NE(std::string(msg).find("libnccom-net.so"), std::string::npos) << msg;

  char tiny[8];
  std::memset(tiny, 'x', sizeof tiny);
  err = 0;
  EXPECT_EQ(nrt_get_libnccl_net(&err, tiny, sizeof tiny), nullptr);
  EXPECT_NE(err, 0);
  EXPECT_EQ(std::strlen(tiny), sizeof tiny - 1) << "cut to err_msg_len with its NUL";
  EXPECT_EQ(std::string(tiny), std::string(msg).substr(0, sizeof tiny - 1));

  EXPECT_EQ(nrt_get_libnccl_net(nullptr, nullptr, 0), nullptr);  // all outputs optional
}

// The dynamic-size callbacks work over a table (docs/internals/emu.md); their
// bounds checks are EmuDynamicSizes.* in tests/emu/proxy.

}  // namespace
