// The topology XML fuzz target (tests/fuzz/fuzz_topo_xml.cc) without
// libFuzzer: its seeds and 5,000 deterministic mutations of them (fixed
// seed), so every ctest run exercises it. A broken invariant aborts inside
// the target, which fails this test.
#include "build_paths.h"
#include "topo_test_util.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

extern "C" int nccom_fuzz_topo_xml(const uint8_t* data, size_t size);

namespace nccom::topo::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(TOPO_FUZZ_CORPUS_DIR)) {
    std::ifstream in(entry.path(), std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

int run(const std::string& input) {
  // An exact-size heap copy, so a sanitizer build sees any read past the end.
  std::vector<uint8_t> bytes(input.begin(), input.end());
  return nccom_fuzz_topo_xml(bytes.data(), bytes.size());
}

TEST(TopoXml, FuzzTargetReplaysSeedsAndMutations) {
  const auto corpus = seeds();
  ASSERT_GE(corpus.size(), 3u) << "no seeds in " << TOPO_FUZZ_CORPUS_DIR;
  for (const auto& s : corpus) EXPECT_EQ(run(s), 0);
  std::mt19937_64 rng(0x70b0);
  static const std::string kTokens[] = {
      "<",     ">",        "/>",       "</",      "='",
      "\"",    "&amp;",    "<!--",     "-->",     " ",
      "<gpu ", "rank=",    "<nvlink ", "<cpu ",   "<pci ",
      "0x03",  "<?xml ?>", "&#1;",     "busid='", std::string(300, 'a')};
  for (int i = 0; i < 5000; ++i) {
    std::string s = corpus[rng() % corpus.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % (s.size() + 1);
      switch (rng() % 5) {
        case 0: s.erase(at, rng() % 16); break;
        case 1: s.insert(at, kTokens[rng() % std::size(kTokens)]); break;
        case 2:
          if (at < s.size()) s[at] = static_cast<char>(rng());
          break;
        case 3: s.resize(at); break;
        default: {  // duplicate a range
          const std::size_t len =
              std::min<std::size_t>(rng() % 200, s.size() - std::min(at, s.size()));
          s.insert(at, s.substr(at, len));
        }
      }
    }
    ASSERT_EQ(run(s), 0);
  }
}

}  // namespace
}  // namespace nccom::topo::test
