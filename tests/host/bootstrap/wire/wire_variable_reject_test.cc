// The variable-length records (RootReply, LeaderCheckIn, LeaderReply): counts
// and lengths that do not match the buffer, that would overflow, and the
// status/error-text rules.
#include "wire_samples.h"

namespace nccom::bootstrap {
namespace {

using testing::fails_with;
using testing::sample_ext;
using testing::set_le32;

std::vector<uint8_t> ok_reply() { return RootReply{0, 1, 2, testing::ipv4(), ""}.encode(); }
std::vector<uint8_t> refusal(const std::string& text) {
  return RootReply{9, 1, 2, SocketAddress(), text}.encode();
}

TEST(BootstrapWireRejectVariable, RootReplyTruncatedFixedPart) {
  const auto b = ok_reply();
  for (std::size_t n = 0; n < 64; ++n) {
    EXPECT_TRUE(fails_with(
        RootReply::decode(b.data(), n),
        "root reply: truncated (" + std::to_string(n) + " bytes, the fixed part is 64)"));
  }
}

TEST(BootstrapWireRejectVariable, RootReplyOversizeErrorText) {
  auto b = refusal("x");
  set_le32(&b[48], 0xffffffffu);  // would overflow 64 + length in 32 bits
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: error text length exceeds 4096 (4294967295)"));
  set_le32(&b[48], 4097);
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: error text length exceeds 4096 (4097)"));
}

TEST(BootstrapWireRejectVariable, RootReplyLengthMismatch) {
  auto b = refusal("abc");
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size() - 1),
                         "root reply: length does not match 64 + error text length 3 (66 bytes)"));
  b.push_back('d');
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: length does not match 64 + error text length 3 (68 bytes)"));
}

TEST(BootstrapWireRejectVariable, RootReplySuccessWithText) {
  auto b = refusal("abc");
  set_le32(&b[44], 0);
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: status 0 (success) with error text (3 bytes)"));
}

TEST(BootstrapWireRejectVariable, RootReplyRefusalWithoutText) {
  auto b = ok_reply();
  set_le32(&b[44], 7);
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: status 7 (refused) without error text"));
}

TEST(BootstrapWireRejectVariable, RootReplyRefusalWithSuccessor) {
  auto b = refusal("no");
  b[20] = 1;
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: a refusal (status 9) carries a successor address"));
}

TEST(BootstrapWireRejectVariable, RootReplyBadSuccessor) {
  auto b = ok_reply();
  b[16] = 99;  // unknown family
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: bad successor address: socket address: unknown family 99"));
}

TEST(BootstrapWireRejectVariable, RootReplyBadPadding) {
  auto b = ok_reply();
  b[63] = 4;
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: non-zero reserved byte at offset 63 (0x04)"));
}

TEST(BootstrapWireRejectVariable, RootReplyNulInText) {
  auto b = refusal("ab");
  b[65] = 0;
  EXPECT_TRUE(fails_with(RootReply::decode(b.data(), b.size()),
                         "root reply: NUL byte in the error text (at 1)"));
}

std::vector<uint8_t> checkin(std::initializer_list<int> ranks, int nranks = 8) {
  LeaderCheckIn c;
  for (int r : ranks) c.members.push_back(sample_ext(r, nranks, testing::ipv6()));
  return c.encode();
}

TEST(BootstrapWireRejectVariable, CheckInTruncatedCount) {
  const auto b = checkin({0});
  for (std::size_t n = 0; n < 4; ++n) {
    EXPECT_TRUE(fails_with(
        LeaderCheckIn::decode(b.data(), n, 8),
        "leader check-in: truncated (" + std::to_string(n) + " bytes, the fixed part is 4)"));
  }
}

TEST(BootstrapWireRejectVariable, CheckInZeroCount) {
  const auto b = LeaderCheckIn{}.encode();
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), 8),
                         "leader check-in: no members (count 0)"));
}

TEST(BootstrapWireRejectVariable, CheckInCountAboveLimit) {
  auto b = checkin({0, 1, 2});
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), 2),
                         "leader check-in: count exceeds the limit of 2 (3)"));
  // Counts whose byte size overflows 32 bits: refused by the limit or by the
  // 64-bit length comparison, before any allocation.
  set_le32(&b[0], 0xffffffffu);
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), INT32_MAX),
                         "leader check-in: count exceeds the limit of 2147483647 (4294967295)"));
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), 0),
                         "leader check-in: count exceeds the limit of 0 (4294967295)"));
  set_le32(&b[0], 0x7fffffffu);
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), INT32_MAX),
                         "leader check-in: length does not match 4 + 2147483647 x 56 (172 bytes)"));
}

TEST(BootstrapWireRejectVariable, CheckInCountMismatch) {
  auto b = checkin({0, 1});
  set_le32(&b[0], 3);
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), 8),
                         "leader check-in: length does not match 4 + 3 x 56 (116 bytes)"));
  set_le32(&b[0], 2);
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size() - 1, 8),
                         "leader check-in: length does not match 4 + 2 x 56 (115 bytes)"));
}

TEST(BootstrapWireRejectVariable, CheckInBadMember) {
  auto b = checkin({0, 1});
  b[4 + 56] = 0;  // member 1's sanity word
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), 8),
                         "leader check-in: member 1: extInfo: bad sanity word 0x61796c00 (expected "
                         "0x61796c69): not an nccom bootstrap peer, or a different protocol"));
}

TEST(BootstrapWireRejectVariable, CheckInDuplicateRank) {
  const auto b = checkin({3, 5, 3});
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), 8),
                         "leader check-in: rank checked in twice (3)"));
}

TEST(BootstrapWireRejectVariable, CheckInMembersDisagreeOnNranks) {
  LeaderCheckIn c{{sample_ext(0, 8, testing::ipv4()), sample_ext(1, 16, testing::ipv4())}};
  const auto b = c.encode();
  EXPECT_TRUE(fails_with(LeaderCheckIn::decode(b.data(), b.size(), 8),
                         "leader check-in: member 1 disagrees on nranks (16, member 0 has 8)"));
}

std::vector<uint8_t> leader_ok(int n) {
  return LeaderReply{0, "", 1, 2, std::vector<SocketAddress>(n, testing::ipv4())}.encode();
}

TEST(BootstrapWireRejectVariable, LeaderReplyTruncatedFixedPart) {
  const auto b = leader_ok(1);
  for (std::size_t n = 0; n < 32; ++n) {
    EXPECT_TRUE(fails_with(
        LeaderReply::decode(b.data(), n, 1),
        "leader reply: truncated (" + std::to_string(n) + " bytes, the fixed part is 32)"));
  }
}

TEST(BootstrapWireRejectVariable, LeaderReplyCountMismatch) {
  const auto b = leader_ok(3);
  EXPECT_TRUE(
      fails_with(LeaderReply::decode(b.data(), b.size(), 4),
                 "leader reply: address table has the wrong number of entries (3, expected 4)"));
  auto huge = leader_ok(1);
  set_le32(&huge[24], 0xffffffffu);
  EXPECT_TRUE(fails_with(
      LeaderReply::decode(huge.data(), huge.size(), 1),
      "leader reply: address table has the wrong number of entries (4294967295, expected 1)"));
}

TEST(BootstrapWireRejectVariable, LeaderReplyLengthMismatch) {
  const auto b = leader_ok(2);
  EXPECT_TRUE(fails_with(LeaderReply::decode(b.data(), b.size() - 28, 2),
                         "leader reply: length does not match 32 + 0 + 2 x 28 (60 bytes)"));
}

TEST(BootstrapWireRejectVariable, LeaderReplyOversizeErrorText) {
  auto b = LeaderReply{3, "no", 0, 0, {}}.encode();
  set_le32(&b[20], 4097);
  EXPECT_TRUE(fails_with(LeaderReply::decode(b.data(), b.size(), 2),
                         "leader reply: error text length exceeds 4096 (4097)"));
}

TEST(BootstrapWireRejectVariable, LeaderReplyRefusalWithTable) {
  auto b = leader_ok(2);
  set_le32(&b[16], 5);
  EXPECT_TRUE(
      fails_with(LeaderReply::decode(b.data(), b.size(), 2),
                 "leader reply: address table has the wrong number of entries (2, expected 0)"));
}

TEST(BootstrapWireRejectVariable, LeaderReplyStatusTextRules) {
  auto b = LeaderReply{3, "", 0, 0, {}}.encode();
  EXPECT_TRUE(fails_with(LeaderReply::decode(b.data(), b.size(), 2),
                         "leader reply: status 3 (refused) without error text"));
}

TEST(BootstrapWireRejectVariable, LeaderReplyBadPaddingAndAddress) {
  auto b = leader_ok(2);
  b[30] = 1;
  EXPECT_TRUE(fails_with(LeaderReply::decode(b.data(), b.size(), 2),
                         "leader reply: non-zero reserved byte at offset 30 (0x01)"));
  b[30] = 0;
  b[32 + 28 + 2] = b[32 + 28 + 3] = 0;  // rank 1's port
  EXPECT_TRUE(fails_with(LeaderReply::decode(b.data(), b.size(), 2),
                         "leader reply: bad address of rank 1: socket address: port 0"));
}

TEST(BootstrapWireRejectVariable, LeaderReplyNonPositiveCommunicator) {
  const auto b = leader_ok(0);
  EXPECT_TRUE(fails_with(LeaderReply::decode(b.data(), b.size(), 0),
                         "leader reply: communicator size is not positive (0)"));
}

}  // namespace
}  // namespace nccom::bootstrap
