// Shared by the six fuzz targets (in both builds: libFuzzer with clang, and
// the replay test with the normal compiler) and by the seed generator. Only
// the standard library, so clang can build it without the project's CMake.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nccom::fuzz {

// A failed invariant is a finding: say which, and abort so libFuzzer (or the
// replay test) stops on this input.
inline void require(bool ok, const char* target, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz target %s: invariant broken: %s\n", target, what);
    std::abort();
  }
}

inline bool same_bytes(const uint8_t* a, std::size_t a_size, const uint8_t* b, std::size_t b_size) {
  return a_size == b_size && (a_size == 0 || std::memcmp(a, b, a_size) == 0);
}

// Decoders that take a parameter (a communicator size, a member limit) read
// it from the input: [0, 4) little-endian int32, then the record. Inputs of
// fewer than 4 bytes carry no record and are skipped.
struct WithParam {
  bool present = false;
  int32_t param = 0;
  const uint8_t* record = nullptr;
  std::size_t size = 0;
};

inline WithParam split_param(const uint8_t* data, std::size_t size) {
  WithParam in;
  if (size < 4) return in;
  const uint32_t raw = uint32_t{data[0]} | uint32_t{data[1]} << 8 | uint32_t{data[2]} << 16 |
                       uint32_t{data[3]} << 24;
  in.present = true;
  in.param = static_cast<int32_t>(raw);
  in.record = data + 4;
  in.size = size - 4;
  return in;
}

// fuzz_leader: byte 0 chooses the decoder (even: LeaderCheckIn, odd:
// LeaderReply), then the parameter and the record as above.
inline bool leader_is_reply(const uint8_t* data, std::size_t size) {
  return size > 0 && (data[0] & 1);
}

}  // namespace nccom::fuzz
