// The fuzz targets without libFuzzer: every ctest run feeds each target its
// seed corpus and 20,000 deterministic mutations of it (fixed seed), so the
// decoders are exercised by the normal gcc build too. A broken invariant
// aborts inside the target (fuzz_support.h), which fails the test.
#include "build_paths.h"
#include "seeds.h"
#include "targets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>

namespace nccom::fuzz {
namespace {

namespace fs = std::filesystem;
using Target = int (*)(const uint8_t*, size_t);

constexpr int kMutatedInputs = 20000;

Target target_function(const std::string& name) {
  static const std::map<std::string, Target> targets{
      {"unique_id", nccom_fuzz_unique_id},     {"hello_header", nccom_fuzz_hello_header},
      {"ext_info", nccom_fuzz_ext_info},       {"root_reply", nccom_fuzz_root_reply},
      {"peer_record", nccom_fuzz_peer_record}, {"leader", nccom_fuzz_leader}};
  return targets.at(name);
}

std::map<std::string, std::vector<uint8_t>> corpus_on_disk(const std::string& target) {
  std::map<std::string, std::vector<uint8_t>> files;
  const fs::path dir = fs::path(NCCOM_FUZZ_CORPUS_DIR) / target;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    files[entry.path().filename().string()] =
        std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

// Mutations in the spirit of libFuzzer's, deterministic: std::mt19937_64's
// sequence is fixed by the standard, and only its raw output is used.
class Mutator {
 public:
  explicit Mutator(const std::vector<std::vector<uint8_t>>& seeds) : seeds_(seeds) {}

  std::vector<uint8_t> next() {
    std::vector<uint8_t> input = seeds_[below(seeds_.size())];
    const int steps = 1 + static_cast<int>(below(4));
    for (int i = 0; i < steps; ++i) mutate_once(input);
    return input;
  }

 private:
  uint64_t below(uint64_t bound) { return bound == 0 ? 0 : rng_() % bound; }

  void put32(std::vector<uint8_t>& in, std::size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) in[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }

  void mutate_once(std::vector<uint8_t>& in) {
    static constexpr uint8_t kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
    static constexpr uint32_t kWords[] = {0,    1,    2,           3,           4,          27,
                                          28,   55,   56,          63,          64,         4095,
                                          4096, 4097, 0x7fffffffu, 0x80000000u, 0xffffffffu};
    switch (below(8)) {
      case 0:  // flip a bit
        if (!in.empty()) in[below(in.size())] ^= static_cast<uint8_t>(1u << below(8));
        break;
      case 1:  // an interesting byte
        if (!in.empty()) in[below(in.size())] = kBytes[below(std::size(kBytes))];
        break;
      case 2:  // truncate
        in.resize(below(in.size() + 1));
        break;
      case 3:  // append random bytes
        for (uint64_t n = 1 + below(64); n > 0; --n) in.push_back(static_cast<uint8_t>(rng_()));
        break;
      case 4:  // a length or count field: an interesting word, or the old one +-1
        if (in.size() >= 4) {
          const std::size_t at = below(in.size() / 4) * 4;
          const uint32_t old = uint32_t{in[at]} | uint32_t{in[at + 1]} << 8 |
                               uint32_t{in[at + 2]} << 16 | uint32_t{in[at + 3]} << 24;
          const uint64_t pick = below(std::size(kWords) + 2);
          put32(in, at,
                pick < std::size(kWords)    ? kWords[pick]
                : pick == std::size(kWords) ? old + 1
                                            : old - 1);
        }
        break;
      case 5:  // erase a range
        if (!in.empty()) {
          const std::size_t from = below(in.size());
          in.erase(in.begin() + from, in.begin() + from + below(in.size() - from + 1));
        }
        break;
      case 6: {  // splice: keep a prefix, take the tail of another seed
        const auto& other = seeds_[below(seeds_.size())];
        const std::size_t keep = below(in.size() + 1);
        const std::size_t from = below(other.size() + 1);
        in.resize(keep);
        in.insert(in.end(), other.begin() + from, other.end());
        break;
      }
      default:  // duplicate a range
        if (!in.empty()) {
          const std::size_t from = below(in.size());
          const std::size_t n = 1 + below(std::min<std::size_t>(in.size() - from, 64));
          const std::vector<uint8_t> copy(in.begin() + from, in.begin() + from + n);
          in.insert(in.begin() + below(in.size() + 1), copy.begin(), copy.end());
        }
        break;
    }
  }

  const std::vector<std::vector<uint8_t>>& seeds_;
  std::mt19937_64 rng_{0x6e63636f6d667a7aull};  // "nccomfzz"
};

TEST(FuzzReplayCorpus, SeedFilesMatchTheEncoders) {
  for (const auto& target : target_names()) {
    std::map<std::string, std::vector<uint8_t>> expected;
    for (auto& seed : make_seeds(target)) expected[seed.name] = seed.bytes;
    EXPECT_EQ(corpus_on_disk(target), expected)
        << "tests/fuzz/corpus/" << target << " is stale; rewrite it with "
        << "`build/bin/fuzz_write_corpus tests/fuzz/corpus` (target fuzz_write_corpus)";
  }
}

TEST(FuzzReplayCorpus, ValidSeedsDecodeAndEdgeSeedsAreNamed) {
  for (const auto& target : target_names()) {
    for (const auto& seed : make_seeds(target)) {
      const bool valid = seed.name.rfind("valid-", 0) == 0;
      EXPECT_TRUE(valid || seed.name.rfind("edge-", 0) == 0) << target << "/" << seed.name;
      if (valid) {
        EXPECT_TRUE(seed_decodes(target, seed.bytes)) << target << "/" << seed.name;
      }
    }
  }
}

class FuzzReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzReplay, SeedsThenMutations) {
  const Target run = target_function(GetParam());
  std::vector<std::vector<uint8_t>> seeds;
  for (auto& [name, bytes] : corpus_on_disk(GetParam())) seeds.push_back(bytes);
  ASSERT_FALSE(seeds.empty()) << "no seed corpus in " << NCCOM_FUZZ_CORPUS_DIR << "/" << GetParam();
  for (const auto& seed : seeds) EXPECT_EQ(run(seed.data(), seed.size()), 0);

  Mutator mutator(seeds);
  int decoded = 0;
  for (int i = 0; i < kMutatedInputs; ++i) {
    const std::vector<uint8_t> input = mutator.next();
    // A heap copy of exactly input.size() bytes, so ASan catches a read past it.
    std::unique_ptr<uint8_t[]> exact(new uint8_t[std::max<std::size_t>(input.size(), 1)]);
    std::copy(input.begin(), input.end(), exact.get());
    ASSERT_EQ(run(exact.get(), input.size()), 0);
    decoded += seed_decodes(GetParam(), input) ? 1 : 0;
  }
  // The mutations must reach the accepting paths too, not only the errors.
  EXPECT_GT(decoded, 0) << "no mutated input decoded";
  RecordProperty("decoded", decoded);
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(target_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nccom::fuzz
