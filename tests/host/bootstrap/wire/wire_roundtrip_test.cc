// Round trips of every record over IPv4 and IPv6, and the byte positions the
// original fixes (the unique id, the 112-byte peer record, extInfo) or
// wire.cc's layout comment fixes.
#include "wire_samples.h"

#include <cstring>

namespace nccom::bootstrap {
namespace {

using testing::le32;
using testing::le64;
using testing::sample_ext;
using testing::wire_bytes;

class BootstrapWireRoundTrip : public ::testing::TestWithParam<const char*> {
 protected:
  SocketAddress addr() const { return testing::address(GetParam()); }
};

TEST_P(BootstrapWireRoundTrip, UniqueId) {
  for (Protocol protocol : {Protocol::kFlat, Protocol::kHierarchical}) {
    UniqueId id;
    id.root = addr();
    id.secret = 0x0123456789abcdefull;
    id.protocol = protocol;
    const ncclUniqueId bytes = id.encode();
    auto decoded = UniqueId::decode(reinterpret_cast<const uint8_t*>(bytes.internal), sizeof bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(decoded->root, id.root);
    EXPECT_EQ(decoded->secret, id.secret);
    EXPECT_EQ(decoded->protocol, protocol);
  }
}

TEST_P(BootstrapWireRoundTrip, HelloAndHeader) {
  Hello hello{0xfeedfacecafebeefull, -1, 4096};
  const auto hb = hello.encode();
  auto h = Hello::decode(hb.data(), hb.size());
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->secret, hello.secret);
  EXPECT_EQ(h->rank, -1);
  EXPECT_EQ(h->nranks, 4096);

  for (uint32_t type = 1; type <= static_cast<uint32_t>(MsgType::kMaxType); ++type) {
    for (uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{123456789}, kMaxMessageBytes}) {
      const auto bytes = MessageHeader{type, size}.encode();
      auto m = MessageHeader::decode(bytes.data(), bytes.size());
      ASSERT_TRUE(m.ok()) << m.error().message;
      EXPECT_EQ(m->type, type);
      EXPECT_EQ(m->size, size);
    }
  }
}

TEST_P(BootstrapWireRoundTrip, ExtInfo) {
  const ExtInfo info = sample_ext(5, 8, addr());
  const auto bytes = info.encode();
  auto decoded = ExtInfo::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->rank, 5);
  EXPECT_EQ(decoded->nranks, 8);
  EXPECT_EQ(decoded->listen_address, addr());
  EXPECT_EQ(decoded->build_tag, info.build_tag);
}

TEST_P(BootstrapWireRoundTrip, RootReplySuccessAndRefusal) {
  RootReply ok{0, 0x1122334455667788ull, -1700000000, addr(), ""};
  const auto ok_bytes = ok.encode();
  auto a = RootReply::decode(ok_bytes.data(), ok_bytes.size());
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->status, 0u);
  EXPECT_EQ(a->cluster_id, ok.cluster_id);
  EXPECT_EQ(a->epoch, ok.epoch);
  EXPECT_EQ(a->successor, addr());
  EXPECT_TRUE(a->error.empty());

  RootReply refused{NRT_INVALID, 7, 9, SocketAddress(), "rank 3 runs a different build"};
  const auto bytes = refused.encode();
  auto b = RootReply::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->status, static_cast<uint32_t>(NRT_INVALID));
  EXPECT_EQ(b->error, refused.error);
  EXPECT_FALSE(b->successor.valid());
}

TEST_P(BootstrapWireRoundTrip, PeerRecord) {
  PeerRecord p{3, 7, 0x1111, 0x2222, 0x3333, 0x10001, 2, 1, 0x7fff12345678ull, 30, 11, 2};
  const auto bytes = p.encode();
  auto d = PeerRecord::decode(bytes.data(), bytes.size(), 4);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->encode(), bytes);
}

TEST_P(BootstrapWireRoundTrip, LeaderCheckInAndReply) {
  LeaderCheckIn checkin;
  for (int r : {4, 5, 7}) checkin.members.push_back(sample_ext(r, 8, addr()));
  const auto cb = checkin.encode();
  auto c = LeaderCheckIn::decode(cb.data(), cb.size(), 8);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->members.size(), 3u);
  EXPECT_EQ(c->members[2].rank, 7);
  EXPECT_EQ(c->members[2].listen_address, addr());

  LeaderReply reply{0, "", 42, 43, {addr(), addr(), addr(), addr()}};
  const auto rb = reply.encode();
  auto r = LeaderReply::decode(rb.data(), rb.size(), 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->cluster_id, 42u);
  EXPECT_EQ(r->epoch, 43);
  EXPECT_EQ(r->addresses, reply.addresses);

  LeaderReply refused{5, "duplicate rank 2", 0, 0, {}};
  const auto fb = refused.encode();
  auto f = LeaderReply::decode(fb.data(), fb.size(), 4);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->error, refused.error);
  EXPECT_TRUE(f->addresses.empty());
}

INSTANTIATE_TEST_SUITE_P(Families, BootstrapWireRoundTrip,
                         ::testing::Values("10.1.2.3:5000", "[2001:db8::7]:6553"),
                         [](const auto& info) { return info.index == 0 ? "IPv4" : "IPv6"; });

// ---- Byte positions ------------------------------------------------------------

TEST(BootstrapWireLayout, UniqueIdAddressAtZeroThenMagicSecretProtocol) {
  const SocketAddress root = testing::ipv6();
  const ncclUniqueId id = UniqueId{root, 0x0807060504030201ull, Protocol::kHierarchical}.encode();
  const auto* b = reinterpret_cast<const uint8_t*>(id.internal);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 28), wire_bytes(root));
  EXPECT_EQ(std::memcmp(b + 28, "NCID", 4), 0);
  EXPECT_EQ(le64(b + 32), 0x0807060504030201ull);
  EXPECT_EQ(b[40], 1);
  for (int i = 41; i < 128; ++i) EXPECT_EQ(b[i], 0) << i;
}

TEST(BootstrapWireLayout, ExtInfoSanityIsIlyaAtZero) {
  const auto b = sample_ext(2, 3, testing::ipv4()).encode();
  EXPECT_EQ(b[0], 0x69);
  EXPECT_EQ(b[1], 0x6c);
  EXPECT_EQ(b[2], 0x79);
  EXPECT_EQ(b[3], 0x61);
  EXPECT_EQ(le32(&b[4]), 2u);
  EXPECT_EQ(le32(&b[8]), 3u);
  EXPECT_EQ(std::vector<uint8_t>(b.begin() + 12, b.begin() + 40), wire_bytes(testing::ipv4()));
  EXPECT_EQ(b[40], 'a');
  EXPECT_EQ(b[55], 'a' + 15);
}

TEST(BootstrapWireLayout, PeerRecordOffsets) {
  PeerRecord p{0x01010101,         0x02020202,         0x0303030303030303, 0x0404040404040404,
               0x0505050505050505, 0x0606060606060606, 0x07070707,         0x08080808,
               0x0909090909090909, 0x0a0a0a0a,         0x0b0b0b0b,         0x0c0c0c0c};
  const auto b = p.encode();
  // Byte i carries field number expected[i] (0 = reserved, written as zero).
  std::array<uint8_t, kPeerRecordBytes> expected{};
  auto fill = [&](int offset, int size, uint8_t v) {
    for (int i = 0; i < size; ++i) expected[offset + i] = v;
  };
  fill(0, 4, 1);     // rank
  fill(4, 4, 2);     // device
  fill(16, 8, 3);    // host_hash
  fill(24, 8, 4);    // pid_hash
  fill(32, 8, 5);    // shm_dev
  fill(40, 8, 6);    // bus_id
  fill(48, 4, 7);    // pod_node_id
  fill(52, 4, 8);    // virtual_server_id
  fill(88, 8, 9);    // comm
  fill(96, 4, 10);   // comp_cap
  fill(100, 4, 11);  // host_device_id
  fill(104, 4, 12);  // mla_idx
  EXPECT_EQ(b, expected);
}

TEST(BootstrapWireLayout, HelloAndHeader) {
  const auto h = Hello{0x1122334455667788ull, 6, 9}.encode();
  EXPECT_EQ(std::memcmp(h.data(), "NCCB", 4), 0);
  EXPECT_EQ(h[4], kWireVersion);
  EXPECT_EQ(h[5], 0);
  EXPECT_EQ(le64(&h[8]), 0x1122334455667788ull);
  EXPECT_EQ(le32(&h[16]), 6u);
  EXPECT_EQ(le32(&h[20]), 9u);
  const auto m = MessageHeader{static_cast<uint32_t>(MsgType::kBruck), 0x123456789ull}.encode();
  EXPECT_EQ(le32(&m[0]), 8u);
  EXPECT_EQ(le32(&m[4]), 0u);
  EXPECT_EQ(le64(&m[8]), 0x123456789ull);
}

TEST(BootstrapWireLayout, RootReplyClusterIdEpochSuccessorStatusText) {
  const auto ok = RootReply{0, 0xa1a2a3a4a5a6a7a8ull, 1700000000, testing::ipv4(), ""}.encode();
  ASSERT_EQ(ok.size(), 64u);
  EXPECT_EQ(le64(&ok[0]), 0xa1a2a3a4a5a6a7a8ull);
  EXPECT_EQ(le64(&ok[8]), 1700000000u);
  EXPECT_EQ(std::vector<uint8_t>(ok.begin() + 16, ok.begin() + 44), wire_bytes(testing::ipv4()));
  const auto no = RootReply{3, 1, 2, testing::ipv4(), "why"}.encode();
  ASSERT_EQ(no.size(), 67u);
  EXPECT_EQ(le32(&no[44]), 3u);
  EXPECT_EQ(le32(&no[48]), 3u);
  EXPECT_EQ(std::string(no.begin() + 64, no.end()), "why");
  for (int i = 16; i < 44; ++i) EXPECT_EQ(no[i], 0) << "a refusal carries no successor, byte " << i;
}

TEST(BootstrapWireLayout, LeaderRecords) {
  LeaderCheckIn checkin{{sample_ext(0, 2, testing::ipv4()), sample_ext(1, 2, testing::ipv6())}};
  const auto c = checkin.encode();
  ASSERT_EQ(c.size(), 4u + 2 * 56);
  EXPECT_EQ(le32(&c[0]), 2u);
  const auto second = checkin.members[1].encode();
  EXPECT_EQ(std::vector<uint8_t>(c.begin() + 60, c.end()),
            std::vector<uint8_t>(second.begin(), second.end()));

  const auto r = LeaderReply{0, "", 5, 6, {testing::ipv4(), testing::ipv6()}}.encode();
  ASSERT_EQ(r.size(), 32u + 2 * 28);
  EXPECT_EQ(le64(&r[0]), 5u);
  EXPECT_EQ(le64(&r[8]), 6u);
  EXPECT_EQ(le32(&r[16]), 0u);
  EXPECT_EQ(le32(&r[20]), 0u);
  EXPECT_EQ(le32(&r[24]), 2u);
  EXPECT_EQ(std::vector<uint8_t>(r.begin() + 60, r.end()), wire_bytes(testing::ipv6()));
}

TEST(BootstrapWireLayout, EncodersClampErrorTextAt4096) {
  const std::string long_text(5000, 'x');
  const auto bytes = RootReply{1, 0, 0, SocketAddress(), long_text}.encode();
  auto d = RootReply::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->error.size(), 4096u);
  const auto lb = LeaderReply{1, long_text, 0, 0, {}}.encode();
  auto l = LeaderReply::decode(lb.data(), lb.size(), 3);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->error.size(), 4096u);
}

TEST(BootstrapWireLayout, MessageTypeNames) {
  EXPECT_STREQ(msg_type_name(1), "RING");
  EXPECT_STREQ(msg_type_name(2), "INFO_TO_ROOT");
  EXPECT_STREQ(msg_type_name(3), "INFO_FROM_ROOT");
  EXPECT_STREQ(msg_type_name(4), "USER");
  EXPECT_STREQ(msg_type_name(5), "TRANSPORT_INIT");
  EXPECT_STREQ(msg_type_name(6), "BARRIER");
  EXPECT_STREQ(msg_type_name(7), "RECURSIVE_DOUBLING");
  EXPECT_STREQ(msg_type_name(8), "BRUCK");
  EXPECT_STREQ(msg_type_name(9), "LEADER_TO_ROOT");
  EXPECT_STREQ(msg_type_name(10), "ROOT_TO_LEADER");
  EXPECT_STREQ(msg_type_name(11), "REFUSED");
  EXPECT_STREQ(msg_type_name(0), "UNKNOWN");
  EXPECT_STREQ(msg_type_name(12), "GOODBYE");
  EXPECT_STREQ(msg_type_name(13), "GAVE_UP");
  EXPECT_STREQ(msg_type_name(14), "UNKNOWN");
  EXPECT_STREQ(msg_type_name(0xffffffffu), "UNKNOWN");
  EXPECT_FALSE(valid_msg_type(0));
  EXPECT_TRUE(valid_msg_type(12));
  EXPECT_TRUE(valid_msg_type(13));
  EXPECT_FALSE(valid_msg_type(14));
}

}  // namespace
}  // namespace nccom::bootstrap
