// The fixed-size records: one test per rejection rule, each naming the exact
// message a user would read.
#include "wire_samples.h"

namespace nccom::bootstrap {
namespace {

using testing::fails_with;
using testing::sample_ext;
using testing::set_le32;
using testing::set_le64;

std::vector<uint8_t> id_bytes() {
  const ncclUniqueId id = UniqueId{testing::ipv4(), 0x5eed, Protocol::kFlat}.encode();
  return std::vector<uint8_t>(id.internal, id.internal + sizeof id.internal);
}

std::string truncated(const char* record, std::size_t n, std::size_t of) {
  return std::string(record) + ": truncated (" + std::to_string(n) + " of " + std::to_string(of) +
         " bytes)";
}

TEST(BootstrapWireReject, TruncatedAtEveryLength) {
  const auto id = id_bytes();
  const auto hello = Hello{1, 0, 2}.encode();
  const auto header = MessageHeader{1, 8}.encode();
  const auto ext = sample_ext(0, 1, testing::ipv4()).encode();
  const auto peer = PeerRecord{0}.encode();
  for (std::size_t n = 0; n < 128; ++n) {
    EXPECT_TRUE(fails_with(UniqueId::decode(id.data(), n), truncated("unique id", n, 128)));
  }
  for (std::size_t n = 0; n < kHelloBytes; ++n) {
    EXPECT_TRUE(fails_with(Hello::decode(hello.data(), n), truncated("hello", n, 24)));
  }
  for (std::size_t n = 0; n < kHeaderBytes; ++n) {
    EXPECT_TRUE(
        fails_with(MessageHeader::decode(header.data(), n), truncated("message header", n, 16)));
  }
  for (std::size_t n = 0; n < kExtInfoBytes; ++n) {
    EXPECT_TRUE(fails_with(ExtInfo::decode(ext.data(), n), truncated("extInfo", n, 56)));
  }
  for (std::size_t n = 0; n < kPeerRecordBytes; ++n) {
    EXPECT_TRUE(
        fails_with(PeerRecord::decode(peer.data(), n, 1), truncated("peer record", n, 112)));
  }
}

TEST(BootstrapWireReject, TrailingBytesAndNullInput) {
  std::vector<uint8_t> ext(57, 0);
  EXPECT_TRUE(fails_with(ExtInfo::decode(ext.data(), ext.size()),
                         "extInfo: trailing bytes (57 bytes, expected 56)"));
  EXPECT_TRUE(fails_with(Hello::decode(nullptr, 24), "hello: no input (null pointer)"));
  EXPECT_TRUE(fails_with(RootReply::decode(nullptr, 64), "root reply: no input (null pointer)"));
}

TEST(BootstrapWireReject, UniqueIdWrongMagic) {
  auto b = id_bytes();
  b[28] = 'X';
  EXPECT_TRUE(fails_with(UniqueId::decode(b.data(), b.size()),
                         "unique id: wrong magic 0x44494358 (expected 0x4449434e \"NCID\"): not an "
                         "nccom id (was it produced by neuronGetUniqueId or a host:port root?)"));
}

TEST(BootstrapWireReject, UniqueIdBadRootAddress) {
  auto b = id_bytes();
  b[0] = b[1] = 0;  // family AF_UNSPEC
  EXPECT_TRUE(fails_with(UniqueId::decode(b.data(), b.size()),
                         "unique id: bad root address: socket address: unknown family 0"));
}

TEST(BootstrapWireReject, UniqueIdZeroSecret) {
  auto b = id_bytes();
  set_le64(&b[32], 0);
  EXPECT_TRUE(fails_with(UniqueId::decode(b.data(), b.size()),
                         "unique id: zero secret (every id carries its root's random secret)"));
}

TEST(BootstrapWireReject, UniqueIdUnknownProtocol) {
  auto b = id_bytes();
  b[40] = 2;
  EXPECT_TRUE(fails_with(UniqueId::decode(b.data(), b.size()),
                         "unique id: unknown protocol (2; 0 = flat, 1 = hierarchical)"));
}

TEST(BootstrapWireReject, UniqueIdBadPaddingAtEveryByte) {
  for (std::size_t i = 41; i < 128; ++i) {
    auto b = id_bytes();
    b[i] = 0x80;
    EXPECT_TRUE(
        fails_with(UniqueId::decode(b.data(), b.size()),
                   "unique id: non-zero reserved byte at offset " + std::to_string(i) + " (0x80)"));
  }
}

TEST(BootstrapWireReject, HelloWrongMagic) {
  auto b = Hello{1, 0, 2}.encode();
  set_le32(&b[0], 0x50545448);  // "HTTP": someone else's protocol
  EXPECT_TRUE(fails_with(Hello::decode(b.data(), b.size()),
                         "hello: wrong magic 0x50545448 (expected 0x4243434e \"NCCB\"): not an "
                         "nccom bootstrap connection"));
}

TEST(BootstrapWireReject, HelloOtherWireVersion) {
  auto b = Hello{1, 0, 2}.encode();
  b[4] = 2;
  EXPECT_TRUE(fails_with(Hello::decode(b.data(), b.size()),
                         "hello: wire version 2 (this build speaks 1): a different nccom build"));
}

TEST(BootstrapWireReject, HelloBadPadding) {
  auto b = Hello{1, 0, 2}.encode();
  b[7] = 1;
  EXPECT_TRUE(fails_with(Hello::decode(b.data(), b.size()),
                         "hello: non-zero reserved byte at offset 7 (0x01)"));
}

TEST(BootstrapWireReject, HeaderUnknownType) {
  for (uint32_t type : {0u, 14u, 0xffffffffu}) {
    const auto b = MessageHeader{type, 0}.encode();
    EXPECT_TRUE(fails_with(MessageHeader::decode(b.data(), b.size()),
                           "message header: unknown message type (" + std::to_string(type) + ")"));
  }
}

TEST(BootstrapWireReject, HeaderOversize) {
  auto b = MessageHeader{4, 9999999999ull}.encode();
  EXPECT_TRUE(fails_with(MessageHeader::decode(b.data(), b.size()),
                         "message header: size 9999999999 exceeds the 4 GiB limit"));
  b = MessageHeader{4, kMaxMessageBytes + 1}.encode();
  EXPECT_TRUE(fails_with(MessageHeader::decode(b.data(), b.size()),
                         "message header: size 4294967297 exceeds the 4 GiB limit"));
  b = MessageHeader{4, kMaxMessageBytes}.encode();
  EXPECT_TRUE(MessageHeader::decode(b.data(), b.size()).ok()) << "4 GiB itself is allowed";
}

TEST(BootstrapWireReject, HeaderBadPadding) {
  auto b = MessageHeader{4, 1}.encode();
  b[5] = 0xff;
  EXPECT_TRUE(fails_with(MessageHeader::decode(b.data(), b.size()),
                         "message header: non-zero reserved byte at offset 5 (0xff)"));
}

TEST(BootstrapWireReject, ExtInfoBadSanity) {
  auto b = sample_ext(0, 2, testing::ipv4()).encode();
  set_le32(&b[0], 0x12345678);
  EXPECT_TRUE(fails_with(ExtInfo::decode(b.data(), b.size()),
                         "extInfo: bad sanity word 0x12345678 (expected 0x61796c69): not an nccom "
                         "bootstrap peer, or a different protocol"));
}

TEST(BootstrapWireReject, ExtInfoNranksNotPositive) {
  for (int nranks : {0, -1, INT32_MIN}) {
    const auto b = sample_ext(0, nranks, testing::ipv4()).encode();
    EXPECT_TRUE(fails_with(ExtInfo::decode(b.data(), b.size()),
                           "extInfo: nranks is not positive (" + std::to_string(nranks) + ")"));
  }
}

TEST(BootstrapWireReject, ExtInfoRankNotBelowNranks) {
  const auto b = sample_ext(4, 4, testing::ipv4()).encode();
  EXPECT_TRUE(fails_with(ExtInfo::decode(b.data(), b.size()), "extInfo: rank outside [0, 4) (4)"));
}

TEST(BootstrapWireReject, ExtInfoNegativeRank) {
  const auto b = sample_ext(-1, 4, testing::ipv4()).encode();
  EXPECT_TRUE(fails_with(ExtInfo::decode(b.data(), b.size()), "extInfo: rank outside [0, 4) (-1)"));
}

TEST(BootstrapWireReject, ExtInfoBadAddress) {
  auto b = sample_ext(1, 4, testing::ipv4()).encode();
  b[12 + 2] = b[12 + 3] = 0;  // port 0
  EXPECT_TRUE(fails_with(ExtInfo::decode(b.data(), b.size()),
                         "extInfo: bad listen address of rank 1: socket address: port 0"));
}

TEST(BootstrapWireReject, PeerRecordRankOutOfRange) {
  auto b = PeerRecord{8}.encode();
  EXPECT_TRUE(fails_with(PeerRecord::decode(b.data(), b.size(), 8),
                         "peer record: rank outside [0, 8) (8)"));
  b = PeerRecord{-3}.encode();
  EXPECT_TRUE(fails_with(PeerRecord::decode(b.data(), b.size(), 8),
                         "peer record: rank outside [0, 8) (-3)"));
}

// Documented leniency (wire.cc): the peer record's unpublished bytes are
// ignored, so a later build may use them; they are re-encoded as zero.
TEST(BootstrapWireReject, PeerRecordAcceptsNonZeroReservedBytes) {
  const PeerRecord p{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  auto b = p.encode();
  for (std::size_t i : {8u, 15u, 56u, 87u, 108u, 111u}) b[i] = 0xa5;
  auto d = PeerRecord::decode(b.data(), b.size(), 2);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->encode(), p.encode());
}

}  // namespace
}  // namespace nccom::bootstrap
