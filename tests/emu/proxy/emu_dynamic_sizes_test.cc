// EmuDynamicSizes: the four dynamic-size callbacks over the table behind
// enc_host_mem_t.va (layout in nrt_emu.h), called as libnccom calls them.
#include "proxy_script.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace emu_proxy_test {
namespace {

class EmuDynamicSizes : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(nrt_emu_devmem_create(1 << 16, &mem_), NRT_SUCCESS);
    ASSERT_EQ(nrt_emu_devmem_dynamic_table(mem_, 4, &dyn_), NRT_SUCCESS);
    entries_ = NRT_EMU_DYN_TABLE_ENTRIES(dyn_->mem.va);
    nrt_emu_log_clear();
  }
  void TearDown() override { nrt_emu_devmem_destroy(mem_); }

  // Expects one ERROR line containing `text` since the last check.
  static void expect_logged(const std::string& text) {
    const std::string log = runtime_log();
    EXPECT_NE(log.find("ERROR: " + text), std::string::npos) << log;
    nrt_emu_log_clear();
  }

  nrt_emu_devmem_t* mem_ = nullptr;
  enc_host_mem_shared_t* dyn_ = nullptr;
  nrt_emu_dyn_entry_t* entries_ = nullptr;
};

TEST_F(EmuDynamicSizes, TableLayoutIsHeaderThenOneEntryPerPeer) {
  EXPECT_EQ(sizeof(nrt_emu_dyn_table_t), 16u);
  EXPECT_EQ(sizeof(nrt_emu_dyn_entry_t), 32u);
  EXPECT_EQ(NRT_EMU_DYN_TABLE_BYTES(4), 16u + 4 * 32u);
  const auto* table = static_cast<const nrt_emu_dyn_table_t*>(dyn_->mem.va);
  EXPECT_EQ(table->magic, 0x4e59444eu);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&table->magic), 4), "NDYN");
  EXPECT_EQ(table->rank_n, 4u);
  EXPECT_EQ(dyn_->mem.size, 144u);
  EXPECT_EQ(dyn_->refcnt, 1);
  EXPECT_EQ(dyn_->mem.mem_handle, mem_);
  EXPECT_EQ(dyn_->mem.pa, nrt_emu_devmem_offset(mem_, dyn_->mem.va));
  EXPECT_EQ(reinterpret_cast<char*>(entries_) - static_cast<char*>(dyn_->mem.va), 16);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(entries_[r].send_count, 0u);
    EXPECT_EQ(entries_[r].recv_count, 0u);
  }
}

TEST_F(EmuDynamicSizes, GettersScaleElementsByTheTypeSize) {
  entries_[2] = nrt_emu_dyn_entry_t{100, 30, 7, 0};  // peer 2
  entries_[3] = nrt_emu_dyn_entry_t{1, 0, 5, 0};
  enc_host_mem_t* in = &dyn_->mem;
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 4, 2, 4), 400u);
  EXPECT_EQ(nec_get_dynamic_send_offset_bytes(in, 4, 2, 4), 120u);
  EXPECT_EQ(nec_get_dynamic_recv_offset_bytes(in, 4, 2, 4), 28u);
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 2, 2, 4), 200u);  // bf16
  EXPECT_EQ(nec_get_dynamic_recv_offset_bytes(in, 8, 3, 4), 40u);
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 4, 0, 4), 0u);  // untouched peer
  // A smaller rank_n than the table's (a sub-communicator) is accepted.
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 1, 2, 3), 100u);
  EXPECT_EQ(runtime_log(), "") << "valid calls log nothing";
}

TEST_F(EmuDynamicSizes, ReceivedSizeIsStoredInElementsPerSourcePeer) {
  enc_host_mem_t* in = &dyn_->mem;
  nec_set_recv_size_bytes(in, 96, 4, 1, 4);
  EXPECT_EQ(entries_[1].recv_count, 24u);
  nec_set_recv_size_bytes(in, 0, 4, 3, 4);
  EXPECT_EQ(entries_[3].recv_count, 0u);
  nec_set_recv_size_bytes(in, 10, 2, 3, 4);
  EXPECT_EQ(entries_[3].recv_count, 5u);
  EXPECT_EQ(entries_[0].recv_count, 0u);
  EXPECT_EQ(entries_[2].recv_count, 0u);
  EXPECT_EQ(entries_[1].send_count, 0u) << "only recv_count is written";
}

TEST_F(EmuDynamicSizes, BadInputIsLoggedAndAnsweredWithZero) {
  entries_[1] = nrt_emu_dyn_entry_t{10, 10, 10, 0};
  enc_host_mem_t* in = &dyn_->mem;
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(nullptr, 4, 1, 4), 0u);
  expect_logged("nec_get_dynamic_send_size_bytes: NULL dynamic-size input");
  enc_host_mem_t no_va = *in;
  no_va.va = nullptr;
  EXPECT_EQ(nec_get_dynamic_send_offset_bytes(&no_va, 4, 1, 4), 0u);
  expect_logged("nec_get_dynamic_send_offset_bytes: NULL dynamic-size input memory (va)");
  enc_host_mem_t tiny = *in;
  tiny.size = 15;
  EXPECT_EQ(nec_get_dynamic_recv_offset_bytes(&tiny, 4, 1, 4), 0u);
  expect_logged(
      "nec_get_dynamic_recv_offset_bytes: dynamic-size table too small: 15 bytes, "
      "the header needs 16");
  enc_host_mem_t short_table = *in;
  short_table.size = NRT_EMU_DYN_TABLE_BYTES(3);
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(&short_table, 4, 1, 3), 0u);
  expect_logged(
      "nec_get_dynamic_send_size_bytes: dynamic-size table too small: 112 bytes for "
      "4 ranks, needs 144");
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 4, 4, 4), 0u);
  expect_logged("nec_get_dynamic_send_size_bytes: peer rank 4 outside 0..3");
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 4, -1, 4), 0u);
  expect_logged("nec_get_dynamic_send_size_bytes: peer rank -1 outside 0..3");
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 4, 1, 5), 0u);
  expect_logged("nec_get_dynamic_send_size_bytes: rank_n 5 outside 1..4 (the table's ranks)");
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 4, 0, 0), 0u);
  expect_logged("nec_get_dynamic_send_size_bytes: rank_n 0 outside 1..4 (the table's ranks)");
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 0, 1, 4), 0u);
  expect_logged("nec_get_dynamic_send_size_bytes: data_type_sz is 0");
  entries_[2].send_count = UINT64_MAX / 2;
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(in, 4, 2, 4), 0u);
  expect_logged(
      "nec_get_dynamic_send_size_bytes: send_count 9223372036854775807 elements of 4 "
      "bytes (peer 2) overflows");

  nec_set_recv_size_bytes(in, 10, 4, 1, 4);
  expect_logged(
      "nec_set_recv_size_bytes: 10 bytes received from peer 1 is not a whole number "
      "of 4-byte elements; recv_count left unchanged");
  EXPECT_EQ(entries_[1].recv_count, 0u);
  nec_set_recv_size_bytes(in, 8, 4, 9, 4);
  expect_logged("nec_set_recv_size_bytes: peer rank 9 outside 0..3");
  nec_set_recv_size_bytes(nullptr, 8, 4, 1, 4);
  expect_logged("nec_set_recv_size_bytes: NULL dynamic-size input");

  // Memory that is not a table: refused by its magic.
  alignas(8) unsigned char junk[256] = {};
  enc_host_mem_t not_table{nullptr, junk, 0, sizeof junk};
  EXPECT_EQ(nec_get_dynamic_send_size_bytes(&not_table, 4, 1, 4), 0u);
  expect_logged(
      "nec_get_dynamic_send_size_bytes: dynamic-size input is not a table: magic "
      "0x00000000, expected 0x4e59444e");
}

TEST_F(EmuDynamicSizes, TableAllocationChecksItsArguments) {
  enc_host_mem_shared_t* out = nullptr;
  EXPECT_EQ(nrt_emu_devmem_dynamic_table(mem_, 0, &out), NRT_INVALID);
  EXPECT_EQ(nrt_emu_devmem_dynamic_table(mem_, 65537, &out), NRT_INVALID);
  EXPECT_EQ(out, nullptr);
  expect_logged("nrt_emu_devmem_dynamic_table: rank_n 65537 outside 1..65536");
  EXPECT_EQ(nrt_emu_devmem_dynamic_table(nullptr, 2, &out), NRT_INVALID);
  // 65536 ranks need 2 MiB: more than this 64 KiB region holds.
  EXPECT_EQ(nrt_emu_devmem_dynamic_table(mem_, 65536, &out), NRT_RESOURCE);
  expect_logged("device memory: no room for a dynamic-size table");
}

}  // namespace
}  // namespace emu_proxy_test
