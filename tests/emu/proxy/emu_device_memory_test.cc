// EmuDeviceMemory: the shared-memory region and the objects the proxy reads
// and increments, built to the layouts of nccom/nrt_abi.h.
#include "proxy_script.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace emu_proxy_test {
namespace {

class EmuDeviceMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(nrt_emu_devmem_create(8192, &mem_), NRT_SUCCESS);
    nrt_emu_log_clear();
  }
  void TearDown() override { nrt_emu_devmem_destroy(mem_); }
  nrt_emu_devmem_t* mem_ = nullptr;
};

TEST_F(EmuDeviceMemory, SemaphoresAreDistinctZeroedWordsThatIncrementAdds) {
  volatile uint32_t* a = nullptr;
  volatile uint32_t* b = nullptr;
  ASSERT_EQ(nrt_emu_devmem_semaphore(mem_, &a), NRT_SUCCESS);
  ASSERT_EQ(nrt_emu_devmem_semaphore(mem_, &b), NRT_SUCCESS);
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 4, 0u);
  EXPECT_EQ(*a, 0u);
  nec_inc_semaphore(a, 3);
  nec_inc_semaphore(a, 4);
  EXPECT_EQ(*a, 7u) << "an increment register adds what is stored";
  EXPECT_EQ(*b, 0u);
  EXPECT_LT(nrt_emu_devmem_offset(mem_, a), nrt_emu_devmem_size(mem_));
}

TEST_F(EmuDeviceMemory, AnotherMappingOfTheRegionSeesTheSameWords) {
  volatile uint32_t* sem = nullptr;
  ASSERT_EQ(nrt_emu_devmem_semaphore(mem_, &sem), NRT_SUCCESS);
  const size_t off = nrt_emu_devmem_offset(mem_, sem);
  void* view = mmap(nullptr, nrt_emu_devmem_size(mem_), PROT_READ | PROT_WRITE, MAP_SHARED,
                    nrt_emu_devmem_fd(mem_), 0);
  ASSERT_NE(view, MAP_FAILED);
  auto* alias = reinterpret_cast<volatile uint32_t*>(static_cast<char*>(view) + off);
  ASSERT_NE(alias, sem);
  nec_inc_semaphore(alias, 5);
  EXPECT_EQ(*sem, 5u);
  munmap(view, nrt_emu_devmem_size(mem_));
}

TEST_F(EmuDeviceMemory, AnotherProcessIncrementsThroughTheRegionFile) {
  volatile uint32_t* sem = nullptr;
  ASSERT_EQ(nrt_emu_devmem_semaphore(mem_, &sem), NRT_SUCCESS);
  const size_t off = nrt_emu_devmem_offset(mem_, sem);
  const size_t size = nrt_emu_devmem_size(mem_);
  const std::string path =
      "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(nrt_emu_devmem_fd(mem_));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A fresh mapping of the file by name, as an unrelated process would.
    const int fd = open(path.c_str(), O_RDWR);
    void* view =
        fd < 0 ? MAP_FAILED : mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (view == MAP_FAILED) _exit(2);
    nec_inc_semaphore(reinterpret_cast<volatile uint32_t*>(static_cast<char*>(view) + off), 11);
    _exit(0);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_EQ(WEXITSTATUS(wstatus), 0);
  EXPECT_EQ(*sem, 11u);
}

TEST_F(EmuDeviceMemory, HostIndicesAreEightFoldWordsOnTheirOwnLines) {
  enc_host_mem_t idx{};
  ASSERT_EQ(nrt_emu_devmem_host_indices(mem_, &idx), NRT_SUCCESS);
  EXPECT_EQ(idx.size, 1024u);
  EXPECT_EQ(idx.mem_handle, mem_);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(idx.va) % 128, 0u);
  EXPECT_EQ(idx.pa, nrt_emu_devmem_offset(mem_, idx.va));
  auto* words = static_cast<enc_net_host_memory_t*>(idx.va);
  for (int f = 0; f < NEC_MAX_FOLD_N; ++f) {
    EXPECT_EQ(words->post_send[f].index, 0u);
    EXPECT_EQ(reinterpret_cast<char*>(const_cast<uint32_t*>(&words->post_recv[f].index)) -
                  static_cast<char*>(idx.va),
              128 * f);
  }
}

TEST_F(EmuDeviceMemory, ConnectorAndChannelFollowTheAbiLayouts) {
  enc_host_mem_shared_t* dyn = nullptr;
  ASSERT_EQ(nrt_emu_devmem_dynamic_table(mem_, 2, &dyn), NRT_SUCCESS);
  int libnccom_connector = 0;
  enc_net_connector_t* send = nullptr;
  enc_net_connector_t* recv = nullptr;
  ASSERT_EQ(nrt_emu_devmem_connector(mem_, 2, dyn, &libnccom_connector, &send), NRT_SUCCESS);
  ASSERT_EQ(nrt_emu_devmem_connector(mem_, 1, nullptr, nullptr, &recv), NRT_SUCCESS);
  EXPECT_EQ(send->fold_n, 2);
  EXPECT_EQ(send->dynamic_input_host_mem, dyn);
  EXPECT_EQ(send->nccl_connector, &libnccom_connector);
  EXPECT_EQ(send->net_host_mem.size, 1024u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(send->net_host_mem.va) % 128, 0u);
  EXPECT_NE(send->net_host_mem.va, recv->net_host_mem.va) << "each connector has its own words";
  EXPECT_EQ(send->devmem_res, nullptr);
  EXPECT_EQ(send->inc_recv_sem_values_buffer, nullptr);

  enc_channel_prefix_t* ch = nullptr;
  ASSERT_EQ(nrt_emu_devmem_channel(mem_, 3, ENC_PATTERN_MESH, recv, send, &ch), NRT_SUCCESS);
  EXPECT_EQ(ch->id, 3);
  EXPECT_EQ(ch->pattern, ENC_PATTERN_MESH);
  EXPECT_EQ(ch->net_recv, recv);
  EXPECT_EQ(ch->net_send, send);
  // What libnccom reads through net_ops_info_t.enc_channel.
  net_ops_info_t op{};
  op.enc_channel = ch;
  EXPECT_EQ(static_cast<enc_channel_prefix_t*>(op.enc_channel)->net_send->fold_n, 2);
}

TEST_F(EmuDeviceMemory, BadRequestsAreRefusedAndNamed) {
  enc_net_connector_t* conn = nullptr;
  EXPECT_EQ(nrt_emu_devmem_connector(mem_, 0, nullptr, nullptr, &conn), NRT_INVALID);
  EXPECT_EQ(nrt_emu_devmem_connector(mem_, 9, nullptr, nullptr, &conn), NRT_INVALID);
  EXPECT_NE(runtime_log().find("nrt_emu_devmem_connector: fold_n 9 outside 1..8"),
            std::string::npos);
  enc_channel_prefix_t* ch = nullptr;
  EXPECT_EQ(nrt_emu_devmem_channel(mem_, 0, ENC_PATTERN_INVALID, nullptr, nullptr, &ch),
            NRT_INVALID);
  EXPECT_NE(runtime_log().find("pattern 2 is neither RING (0) nor MESH (1)"), std::string::npos);
  volatile uint32_t* w = nullptr;
  EXPECT_EQ(nrt_emu_devmem_semaphore(nullptr, &w), NRT_INVALID);
  EXPECT_EQ(nrt_emu_devmem_semaphore(mem_, nullptr), NRT_INVALID);
  nrt_emu_devmem_t* none = nullptr;
  EXPECT_EQ(nrt_emu_devmem_create(0, &none), NRT_INVALID);
  EXPECT_EQ(nrt_emu_devmem_create(size_t{1} << 31, &none), NRT_RESOURCE);
  EXPECT_EQ(none, nullptr);
  EXPECT_NE(runtime_log().find("the size must be in 1..1073741824"), std::string::npos);
  EXPECT_EQ(nrt_emu_devmem_offset(mem_, &w), SIZE_MAX);
}

TEST_F(EmuDeviceMemory, AFullRegionSaysSoInsteadOfOverrunning) {
  // 8192 bytes = 8 host-index blocks; the 9th does not fit.
  enc_host_mem_t idx{};
  int made = 0;
  while (nrt_emu_devmem_host_indices(mem_, &idx) == NRT_SUCCESS) ++made;
  EXPECT_EQ(made, 8);
  EXPECT_NE(runtime_log().find("device memory: no room for host index words (1024 bytes aligned "
                               "to 128): 8192 of 8192 bytes used"),
            std::string::npos)
      << runtime_log();
  volatile uint32_t* w = nullptr;
  EXPECT_EQ(nrt_emu_devmem_trigger_word(mem_, &w), NRT_RESOURCE);
  EXPECT_EQ(w, nullptr);
}

}  // namespace
}  // namespace emu_proxy_test
