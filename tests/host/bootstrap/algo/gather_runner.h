// Runs one all-gather on an InProcessNetwork, one thread per rank, with
// slice r of rank r filled from a pattern of (r, byte index) and every other
// slice poisoned, so a slice that is never written is caught.
#pragma once

#include "in_process_exchange.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace nccom::bootstrap::testing {

// Byte i of slice `rank` is byte (i % 8) of a 64-bit mix of (rank, i / 8):
// every rank and every 8-byte word differs, and a slice can be filled a word
// at a time (the sanitizer builds move hundreds of MiB).
inline uint64_t pattern_word(int rank, std::size_t word) {
  uint64_t x = (static_cast<uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull ^
               (static_cast<uint64_t>(word) + 1) * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 32);
}

inline void fill_pattern(int rank, uint8_t* slice, std::size_t size) {
  for (std::size_t i = 0; i < size; i += 8) {
    const uint64_t word = pattern_word(rank, i / 8);
    std::memcpy(slice + i, &word, std::min<std::size_t>(8, size - i));
  }
}

// The buffer every rank must end with: slice r = pattern of r.
inline std::vector<uint8_t> expected_buffer(int nranks, std::size_t size) {
  std::vector<uint8_t> all(static_cast<std::size_t>(nranks) * size);
  for (int r = 0; r < nranks; ++r) fill_pattern(r, all.data() + r * size, size);
  return all;
}

struct GatherRun {
  std::vector<std::vector<uint8_t>> buffers;  // per rank
  std::vector<Status> results;                // per rank
};

inline constexpr uint8_t kPoison = 0xEE;

inline GatherRun run_all_gather(InProcessNetwork& network, std::size_t size,
                                AllGatherAlgorithm algorithm,
                                const std::vector<uint8_t>& expected) {
  const int n = network.nranks();
  GatherRun run;
  run.buffers.assign(n, std::vector<uint8_t>(static_cast<std::size_t>(n) * size, kPoison));
  run.results.resize(n);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      auto& buffer = run.buffers[rank];
      std::copy_n(expected.begin() + rank * size, size, buffer.begin() + rank * size);
      run.results[rank] =
          all_gather(network.endpoint(rank), rank, n, buffer.data(), size, algorithm);
    });
  }
  for (auto& thread : threads) thread.join();
  return run;
}

}  // namespace nccom::bootstrap::testing
