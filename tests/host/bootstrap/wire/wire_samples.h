// Sample records and small helpers shared by the wire tests.
#pragma once

#include "bootstrap/wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::bootstrap::testing {

inline SocketAddress address(const std::string& text) {
  auto parsed = SocketAddress::parse(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? *parsed : SocketAddress();
}
inline SocketAddress ipv4() { return address("10.1.2.3:5000"); }
inline SocketAddress ipv6() { return address("[2001:db8::7]:6553"); }

inline ExtInfo sample_ext(int rank, int nranks, const SocketAddress& listen) {
  ExtInfo info;
  info.rank = rank;
  info.nranks = nranks;
  info.listen_address = listen;
  for (std::size_t i = 0; i < info.build_tag.size(); ++i)
    info.build_tag[i] = static_cast<uint8_t>('a' + i);
  return info;
}

inline uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
inline uint64_t le64(const uint8_t* p) { return uint64_t{le32(p)} | uint64_t{le32(p + 4)} << 32; }
inline void set_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void set_le64(uint8_t* p, uint64_t v) {
  set_le32(p, static_cast<uint32_t>(v));
  set_le32(p + 4, static_cast<uint32_t>(v >> 32));
}

inline std::vector<uint8_t> wire_bytes(const SocketAddress& a) {
  std::vector<uint8_t> out(kWireAddressBytes);
  a.encode(out.data());
  return out;
}

// The result failed with NRT_INVALID and exactly this message.
template <class T>
::testing::AssertionResult fails_with(const Result<T>& result, const std::string& message) {
  if (result.ok()) return ::testing::AssertionFailure() << "decoded, expected: " << message;
  if (result.error().status != NRT_INVALID) {
    return ::testing::AssertionFailure()
           << "status " << result.error().status << " for " << result.error().message;
  }
  if (result.error().message != message) {
    return ::testing::AssertionFailure()
           << "message\n  \"" << result.error().message << "\"\nexpected\n  \"" << message << "\"";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace nccom::bootstrap::testing
