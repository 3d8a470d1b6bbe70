// The FIFO grammar: a well-formed block registers; each broken rule is
// refused with a message naming the FIFO, the entry and the rule.
#include "proxy/fifo.h"

#include "block_builder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

namespace nccom::proxy {
namespace {

using testing::BlockBuilder;

BlockBuilder two_ops() {
  BlockBuilder b;
  b.op(3, 2).op(1, 4).end();
  return b;
}

TEST(ProxyFifo, WellFormedBlocksAreAccepted) {
  EXPECT_TRUE(validate_block(two_ops().fifos(), "t").ok());
  BlockBuilder send_only;
  send_only.op(5, 0).end();
  EXPECT_TRUE(validate_block(send_only.fifos(), "t").ok());
  BlockBuilder empty_op;  // an op that moves nothing in either FIFO
  empty_op.op(0, 0).op(2, 2).end();
  EXPECT_TRUE(validate_block(empty_op.fifos(), "t").ok());
}

struct Breakage {
  const char* name;
  std::function<void(BlockBuilder&)> act;
  const char* expected;  // a substring of the error
};

class ProxyFifoRule : public ::testing::TestWithParam<Breakage> {};

TEST_P(ProxyFifoRule, IsRefusedWithItsReason) {
  BlockBuilder b = two_ops();
  GetParam().act(b);
  const Status s = validate_block(b.fifos(), "stream 2, basic block 9");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().status, NRT_INVALID);
  EXPECT_NE(s.error().message.find(GetParam().expected), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("stream 2, basic block 9"), std::string::npos);
}

void set_mark(net_src_addr_t& e, uint32_t raw) { std::memcpy(&e.mark, &raw, sizeof raw); }

INSTANTIATE_TEST_SUITE_P(
    Rules, ProxyFifoRule,
    ::testing::Values(
        Breakage{"NoExecCompleteInSrc", [](BlockBuilder& b) { b.src.pop_back(); },
                 "net_src_addr_fifo[net_src_addr_fifo_n - 1].mark == EXEC_COMPLETE"},
        Breakage{"NoExecCompleteInDest", [](BlockBuilder& b) { b.dst.pop_back(); },
                 "net_dest_addr_fifo[net_dest_addr_fifo_n - 1].mark == EXEC_COMPLETE"},
        Breakage{"ExecCompleteEarly", [](BlockBuilder& b) { b.src[1].mark = EXEC_COMPLETE; },
                 "src[1] is EXEC_COMPLETE but only the last entry"},
        Breakage{"UnknownMark", [](BlockBuilder& b) { set_mark(b.src[0], 7); }, "src[0].mark is 7"},
        Breakage{"OpIndexOutOfRange", [](BlockBuilder& b) { b.dst[0].net_op_idx = 2; },
                 "dest[0].net_op_idx 2 is out of range: the ops FIFO has 2 entries"},
        Breakage{"OpIndexGoesBack", [](BlockBuilder& b) { std::swap(b.src[3], b.src[4]); },
                 "goes back after op 1"},
        Breakage{"TxCountMismatch", [](BlockBuilder& b) { b.ops[0].tx_entry_cnt = 4; },
                 "ops[0].tx_entry_cnt is 4 but src holds 3"},
        Breakage{"RxCountMismatch", [](BlockBuilder& b) { b.ops[1].rx_entry_cnt = 1; },
                 "ops[1].rx_entry_cnt is 1 but dest holds 4"},
        Breakage{"TransferAfterClose",
                 [](BlockBuilder& b) {  // swap op 0's last transfer and its terminator
                   std::swap(b.src[2], b.src[3]);
                 },
                 "follows op 0's NET_OP_COMPLETE"},
        Breakage{"OpNeverClosed",
                 [](BlockBuilder& b) {  // op 1's src terminator becomes a transfer
                   b.src[5].mark = NET_TRANSFER;
                   b.src[5].size = 8;
                   b.ops[1].tx_entry_cnt = 2;
                 },
                 "op 1 has 2 transfers in src but no NET_OP_COMPLETE"},
        Breakage{"TerminatorWithSize", [](BlockBuilder& b) { b.dst[2].size = 16; },
                 "NET_OP_COMPLETE with size 16"},
        Breakage{"ExecCompleteWithSize", [](BlockBuilder& b) { b.dst.back().size = 4; },
                 "EXEC_COMPLETE with size 4"},
        Breakage{"NoChannel", [](BlockBuilder& b) { b.ops[1].enc_channel = nullptr; },
                 "ops[1].enc_channel is NULL"},
        Breakage{"LoopSizeZero", [](BlockBuilder& b) { b.ops[0].net_idx_loop_size = 0; },
                 "net_idx_loop_size is 0, outside 1..512"},
        Breakage{"LoopSizeTooLarge", [](BlockBuilder& b) { b.ops[0].net_idx_loop_size = 513; },
                 "net_idx_loop_size is 513"},
        Breakage{"NoSendCredits", [](BlockBuilder& b) { b.ops[0].initial_send_credits = 0; },
                 "initial_send_credits is 0"},
        Breakage{"TooManyRecvCredits",
                 [](BlockBuilder& b) { b.ops[1].ending_recv_credits = 0x200; },
                 "ending_recv_credits is 512"},
        Breakage{"DynamicWithoutTypeSize",
                 [](BlockBuilder& b) {
                   b.ops[0].is_dynamic_send_recv_sz = true;
                   b.ops[0].data_type_sz = 0;
                 },
                 "dynamic sizes but data_type_sz 0"},
        Breakage{"NoUnrolledCount", [](BlockBuilder& b) { b.ops[1].unrolled_count = 0; },
                 "unrolled_count is 0"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ProxyFifo, EmptyOrMissingFifosAreRefused) {
  BlockBuilder b = two_ops();
  BlockFifos f = b.fifos();
  f.ops_n = 0;
  EXPECT_NE(validate_block(f, "t").error().message.find("the ops FIFO is empty"),
            std::string::npos);
  f = b.fifos();
  f.src = nullptr;
  EXPECT_NE(validate_block(f, "t").error().message.find("the src FIFO is empty"),
            std::string::npos);
  f = b.fifos();
  f.dst_n = -3;
  EXPECT_NE(validate_block(f, "t").error().message.find("the dest FIFO is empty"),
            std::string::npos);
}

}  // namespace
}  // namespace nccom::proxy
