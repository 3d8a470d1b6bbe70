#include "health/wire.h"

#include <gtest/gtest.h>

#include <cstring>

namespace nccom::health {
namespace {

Card sample_card() {
  Card c;
  c.service = true;
  c.pid = 4242;
  c.client_inode = 0xdeadbeef;
  c.process = 0x1122334455667788ull;
  c.endpoint = *bootstrap::SocketAddress::parse("127.0.0.1:5000");
  c.host = "trn-b";
  return c;
}

TEST(HealthWire, CardRoundTrips) {
  const Card c = sample_card();
  const auto bytes = c.encode();
  auto back = Card::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back->service);
  EXPECT_EQ(back->pid, 4242u);
  EXPECT_EQ(back->client_inode, 0xdeadbeefu);
  EXPECT_EQ(back->process, c.process);
  EXPECT_EQ(back->endpoint, c.endpoint);
  EXPECT_EQ(back->host, "trn-b");
}

TEST(HealthWire, CardWithoutServiceNeedsNoEndpoint) {
  Card c = sample_card();
  c.service = false;
  c.endpoint = {};
  const auto bytes = c.encode();
  auto back = Card::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_FALSE(back->service);
}

TEST(HealthWire, CardRefusesGarbage) {
  auto bytes = sample_card().encode();
  EXPECT_FALSE(Card::decode(bytes.data(), bytes.size() - 1));  // short
  auto bad = bytes;
  bad[0] ^= 0xff;  // magic
  EXPECT_NE(Card::decode(bad.data(), bad.size()).error().message.find("magic"), std::string::npos);
  bad = bytes;
  bad[4] = 9;  // version
  EXPECT_NE(Card::decode(bad.data(), bad.size()).error().message.find("version"),
            std::string::npos);
  bad = bytes;
  bad[6] = 0x80;  // unknown flag
  EXPECT_FALSE(Card::decode(bad.data(), bad.size()));
  bad = bytes;
  std::memset(&bad[16], 0, 8);  // zero process key
  EXPECT_FALSE(Card::decode(bad.data(), bad.size()));
  bad = bytes;
  std::memset(&bad[24], 0, 28);  // a service without an endpoint
  EXPECT_FALSE(Card::decode(bad.data(), bad.size()));
  std::array<uint8_t, kCardBytes> zeros{};
  EXPECT_FALSE(Card::decode(zeros.data(), zeros.size()));
}

TEST(HealthWire, CardCutsALongHostNameAndMasksControlBytes) {
  Card c = sample_card();
  c.host = std::string(100, 'h');
  const auto bytes = c.encode();
  auto back = Card::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->host, std::string(59, 'h'));
  auto odd = bytes;
  odd[52] = '\n';
  odd[53] = ' ';
  back = Card::decode(odd.data(), odd.size());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->host.substr(0, 2), "??");
}

TEST(HealthWire, FrameHeaderChecksEverything) {
  const auto ok = encode_header(FrameType::kSnapshot, 10);
  auto h = decode_header(ok.data(), ok.size());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->type, FrameType::kSnapshot);
  EXPECT_EQ(h->length, 10u);

  EXPECT_FALSE(decode_header(ok.data(), ok.size() - 1));
  auto bad = ok;
  bad[1] ^= 1;
  EXPECT_NE(decode_header(bad.data(), bad.size()).error().message.find("magic"), std::string::npos);
  bad = ok;
  bad[6] = 1;
  EXPECT_FALSE(decode_header(bad.data(), bad.size()));
  for (uint8_t type : {0, 7, 200}) {
    bad = ok;
    bad[4] = type;
    EXPECT_FALSE(decode_header(bad.data(), bad.size())) << int(type);
  }
  const auto huge = encode_header(FrameType::kSnapshot, kMaxPayload + 1);
  EXPECT_NE(decode_header(huge.data(), huge.size()).error().message.find("bound"),
            std::string::npos);
  const auto fat_keepalive = encode_header(FrameType::kKeepAlive, 1);
  EXPECT_FALSE(decode_header(fat_keepalive.data(), fat_keepalive.size()));
  const auto short_hello = encode_header(FrameType::kHello, kHelloBytes - 1);
  EXPECT_FALSE(decode_header(short_hello.data(), short_hello.size()));
}

TEST(HealthWire, HelloRoundTripsAndRefusesZeroKeyAndUnknownPurpose) {
  Hello hello;
  hello.secret = 0xabcdef;
  hello.process = 77;
  hello.purpose = Purpose::kQuery;
  const auto bytes = hello.frame();
  ASSERT_EQ(bytes.size(), kFrameHeaderBytes + kHelloBytes);
  auto h = decode_header(bytes.data(), bytes.size());
  ASSERT_TRUE(h);
  auto back = Hello::decode(bytes.data() + kFrameHeaderBytes, h->length);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->secret, 0xabcdefu);
  EXPECT_EQ(back->process, 77u);
  EXPECT_EQ(back->purpose, Purpose::kQuery);

  auto bad = bytes;
  bad[kFrameHeaderBytes + 16] = 5;
  EXPECT_FALSE(Hello::decode(bad.data() + kFrameHeaderBytes, kHelloBytes));
  bad = bytes;
  std::memset(&bad[kFrameHeaderBytes + 8], 0, 8);
  EXPECT_FALSE(Hello::decode(bad.data() + kFrameHeaderBytes, kHelloBytes));
}

// A left notice carries one non-zero process key and nothing else.
TEST(HealthWire, LeftNoticeRoundTripsAndRefusesBadSizesAndZero) {
  const auto f = left_frame(0xabcdef);
  auto h = decode_header(f.data(), f.size());
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->type, FrameType::kLeft);
  auto key = decode_left(f.data() + kFrameHeaderBytes, h->length);
  ASSERT_TRUE(key);
  EXPECT_EQ(*key, 0xabcdefu);
  const auto wrong = encode_header(FrameType::kLeft, 9);
  EXPECT_FALSE(decode_header(wrong.data(), wrong.size()));
  const uint8_t zero[kLeftBytes] = {};
  EXPECT_FALSE(decode_left(zero, sizeof zero));
  EXPECT_FALSE(decode_left(zero, 4));
  auto next = encode_header(FrameType::kLeft, kLeftBytes);
  next[4] = static_cast<uint8_t>(FrameType::kLeft) + 1;
  EXPECT_FALSE(decode_header(next.data(), next.size())) << "types past kLeft are unknown";
}

}  // namespace
}  // namespace nccom::health
