// GraphPreset: the per-rank fragment (ncclTopoPreset). GraphFragmentWire: its
// 960-byte form (the original's ncclTopoRanks) and the decoder's checks on
// untrusted bytes.
#include "rings/fragment.h"
#include "synthetic.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>

namespace nccom::rings {
namespace {

// One node holding ranks 4..7; channel 0 orders them 5 7 4 6, channel 1 6 4 7 5.
topo::TopoGraph twoChannelGraph() {
  topo::TopoGraph g;
  g.nChannels = 2;
  g.nLocal = 4;
  g.intra = {5, 7, 4, 6, 6, 4, 7, 5};
  g.inter = {{0, 1}, {2, 3}};
  return g;
}

TEST(GraphPreset, MiddleRankGetsLocalNeighboursAndNodeEnds) {
  auto f = preset(twoChannelGraph(), 7);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->ringRecv[0], 5);
  EXPECT_EQ(f->ringSend[0], 6);
  EXPECT_EQ(f->ringPrev[0], 5);
  EXPECT_EQ(f->ringNext[0], 4);
  EXPECT_EQ(f->ringRecv[1], 6);
  EXPECT_EQ(f->ringSend[1], 5);
  EXPECT_EQ(f->ringPrev[1], 4);
  EXPECT_EQ(f->ringNext[1], 5);
  EXPECT_EQ(f->activeChannels(), 2);
  for (int c = 2; c < kMaxChannels; ++c) {
    EXPECT_EQ(f->ringRecv[c], -1);
    EXPECT_EQ(f->ringNext[c], -1);
  }
}

TEST(GraphPreset, HeadAndTailHaveMinusOneTowardsTheNetwork) {
  auto head = preset(twoChannelGraph(), 5);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->ringPrev[0], -1);  // head of channel 0
  EXPECT_EQ(head->ringNext[0], 7);
  EXPECT_EQ(head->ringPrev[1], 7);  // tail of channel 1
  EXPECT_EQ(head->ringNext[1], -1);
}

TEST(GraphPreset, SingleLocalRankIsHeadAndTail) {
  topo::TopoGraph g;
  g.nChannels = 1;
  g.nLocal = 1;
  g.intra = {3};
  g.inter = {{0, 0}};
  auto f = preset(g, 3);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->ringRecv[0], 3);
  EXPECT_EQ(f->ringSend[0], 3);
  EXPECT_EQ(f->ringPrev[0], -1);
  EXPECT_EQ(f->ringNext[0], -1);
}

TEST(GraphPreset, RejectsMalformedGraphs) {
  auto notMine = preset(twoChannelGraph(), 9);
  ASSERT_FALSE(notMine.ok());
  EXPECT_CONTAINS(notMine.error().message, "rank 9 is not in graph channel 0");

  auto dup = twoChannelGraph();
  dup.intra[5] = 6;  // channel 1: 6 6 7 5
  auto d = preset(dup, 7);
  ASSERT_FALSE(d.ok());
  EXPECT_CONTAINS(d.error().message, "channel 1 lists rank 6 twice");

  auto other = twoChannelGraph();
  other.intra[4] = 8;  // channel 1 holds 8 instead of 6
  auto o = preset(other, 7);
  ASSERT_FALSE(o.ok());
  EXPECT_CONTAINS(o.error().message, "channel 1 orders other ranks than channel 0");

  auto many = twoChannelGraph();
  many.nChannels = 33;
  EXPECT_CONTAINS(preset(many, 7).error().message, "nChannels 33 outside [1, 32]");
  auto none = twoChannelGraph();
  none.nChannels = 0;
  EXPECT_FALSE(preset(none, 7).ok());
  auto shortIntra = twoChannelGraph();
  shortIntra.intra.resize(6);
  EXPECT_CONTAINS(preset(shortIntra, 7).error().message, "needs nChannels*nLocal = 8");
}

TEST(GraphPreset, KangaLaneIsTheRanksSlotOfEachPath) {
  const KangaPaths paths = {{6, 4, 7, 5}, {4, 5, 6, 7}};
  // Node ranks ascending: 4 5 6 7. Rank 4 is slot 0 (entries 0..3), the
  // others have slots 1..3 whose entries [4s, 4s+4) lie past these paths.
  auto f4 = preset(twoChannelGraph(), 4, paths);
  ASSERT_TRUE(f4.ok());
  EXPECT_EQ(f4->kangaPath[0], (std::array<int, 4>{6, 4, 7, 5}));
  EXPECT_EQ(f4->kangaPath[1], (std::array<int, 4>{4, 5, 6, 7}));
  EXPECT_EQ(f4->kangaPath[2], (std::array<int, 4>{-1, -1, -1, -1}));
  auto f6 = preset(twoChannelGraph(), 6, paths);
  ASSERT_TRUE(f6.ok());
  EXPECT_EQ(f6->kangaPath[0], (std::array<int, 4>{-1, -1, -1, -1}));
  EXPECT_EQ(localSlot(twoChannelGraph(), 6), 2);
  EXPECT_EQ(localSlot(twoChannelGraph(), 9), -1);

  // 8 local ranks 0..7 and an 8-entry path: slot 1 (rank 1) carries entries 4..7.
  topo::TopoGraph g;
  g.nChannels = 1;
  g.nLocal = 8;
  g.intra = {0, 1, 2, 3, 4, 5, 6, 7};
  g.inter = {{0, 1}};
  auto f1 = preset(g, 1, {{7, 6, 5, 4, 3, 2, 1, 0}});
  ASSERT_TRUE(f1.ok());
  EXPECT_EQ(f1->kangaPath[0], (std::array<int, 4>{3, 2, 1, 0}));
}

TEST(GraphPreset, RejectsTooManyOrTooLongKangaPaths) {
  EXPECT_CONTAINS(preset(twoChannelGraph(), 4, KangaPaths(5, {4})).error().message,
                  "5 kangaRing paths, MAX_KANGA_PATHS is 4");
  EXPECT_CONTAINS(preset(twoChannelGraph(), 4, {std::vector<int>(65, 4)}).error().message,
                  "has 65 entries, at most 64");
}

int le32(const std::array<uint8_t, kFragmentBytes>& b, std::size_t off) {
  return static_cast<int>(uint32_t{b[off]} | uint32_t{b[off + 1]} << 8 |
                          uint32_t{b[off + 2]} << 16 | uint32_t{b[off + 3]} << 24);
}

TEST(GraphFragmentWire, LayoutIsLittleEndianAtTheSpecOffsets) {
  auto f = preset(twoChannelGraph(), 7, {{6, 4, 7, 5}, {4, 5, 6, 7}});
  ASSERT_TRUE(f.ok());
  f->kangaPath[1][2] = 0x01020304;  // a value whose byte order shows
  const auto b = encodeFragment(*f);
  ASSERT_EQ(b.size(), 960u);
  EXPECT_EQ(le32(b, 0), 5);                       // ringRecv[0]
  EXPECT_EQ(le32(b, 4), 6);                       // ringRecv[1]
  EXPECT_EQ(le32(b, 128), 6);                     // ringSend[0]
  EXPECT_EQ(le32(b, 256), 5);                     // ringPrev[0]
  EXPECT_EQ(le32(b, 384 + 4), 5);                 // ringNext[1]
  EXPECT_EQ(le32(b, 8), -1);                      // ringRecv[2], unused
  const std::size_t k12 = 896 + 4 * (1 * 4 + 2);  // JbogKangaringPath[1][2]
  EXPECT_EQ(b[k12], 0x04);
  EXPECT_EQ(b[k12 + 3], 0x01);
  for (std::size_t off = 512; off < 896; ++off) ASSERT_EQ(b[off], 0) << "tree byte " << off;
}

TEST(GraphFragmentWire, RoundTripsEveryField) {
  auto f = preset(twoChannelGraph(), 4, {{6, 4, 7, 5}});
  ASSERT_TRUE(f.ok());
  const auto b = encodeFragment(*f);
  auto back = decodeFragment(b, 4, 8);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->ringRecv, f->ringRecv);
  EXPECT_EQ(back->ringSend, f->ringSend);
  EXPECT_EQ(back->ringPrev, f->ringPrev);
  EXPECT_EQ(back->ringNext, f->ringNext);
  EXPECT_EQ(back->kangaPath, f->kangaPath);
}

// Encodes rank 7's fragment, applies `edit` to the bytes, decodes as from rank 7.
std::string decodeError(const std::function<void(std::array<uint8_t, kFragmentBytes>&)>& edit,
                        int nRanks = 8) {
  auto f = preset(twoChannelGraph(), 7);
  auto b = encodeFragment(*f);
  edit(b);
  auto r = decodeFragment(b, 7, nRanks);
  return r.ok() ? std::string("decoded") : r.error().message;
}

void put(std::array<uint8_t, kFragmentBytes>& b, std::size_t off, int v) {
  for (int i = 0; i < 4; ++i)
    b[off + i] = static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i));
}

TEST(GraphFragmentWire, RejectsOutOfRangeRanksNamingRankAndField) {
  EXPECT_EQ(decodeError([](auto& b) { put(b, 4, 8); }),
            "ring fragment from rank 7: ringRecv[1] = 8 outside [0, 8)");
  EXPECT_EQ(decodeError([](auto& b) { put(b, 128, -3); }),
            "ring fragment from rank 7: ringSend[0] = -3 outside [0, 8)");
  EXPECT_EQ(decodeError([](auto& b) { put(b, 256, 1000000); }),
            "ring fragment from rank 7: ringPrev[0] = 1000000 outside [-1, 8)");
  EXPECT_EQ(decodeError([](auto& b) { put(b, 896 + 4 * 5, 8); }),
            "ring fragment from rank 7: JbogKangaringPath[5] = 8 outside [-1, 8)");
  EXPECT_CONTAINS(decodeError([](auto&) {}, 7), "source rank 7 outside [0, 7)");
}

TEST(GraphFragmentWire, RejectsBrokenHeadTailRules) {
  // Rank 7 is neither head nor tail of channel 0: its prev must not be -1.
  EXPECT_CONTAINS(
      decodeError([](auto& b) { put(b, 256, -1); }),
      "ringPrev[0] = -1: only the node's ring head (ringRecv) may have no local predecessor");
  // Claiming rank 7 is channel 1's tail while it still names a successor.
  EXPECT_CONTAINS(decodeError([](auto& b) { put(b, 128 + 4, 7); }),
                  "ringNext[1] = 5: the node's ring tail has no local successor");
  EXPECT_CONTAINS(decodeError([](auto& b) { put(b, 384, 7); }),
                  "ringNext[0] names the source rank itself");
}

TEST(GraphFragmentWire, RejectsChannelCountShapes) {
  // No channel at all.
  EXPECT_CONTAINS(decodeError([](auto& b) {
                    put(b, 0, -1);
                    put(b, 4, -1);
                  }),
                  "ringRecv[0] = -1: a fragment carries at least one channel");
  // Channel 0 without a head: no channel, whatever follows.
  EXPECT_CONTAINS(decodeError([](auto& b) { put(b, 0, -1); }),
                  "ringRecv[0] = -1: a fragment carries at least one channel");
  // A gap: channel 1 ends the prefix but still has data.
  EXPECT_CONTAINS(decodeError([](auto& b) { put(b, 4, -1); }),
                  "ringSend[1] = 5: the fragment has 1 channels, later slots must be -1");
  EXPECT_CONTAINS(decodeError([](auto& b) { put(b, 384 + 4 * 31, 3); }),
                  "ringNext[31] = 3: the fragment has 2 channels");
}

TEST(GraphFragmentWire, RejectsWrongLengthAndTreeBytes) {
  auto f = preset(twoChannelGraph(), 7);
  auto b = encodeFragment(*f);
  auto shortRead = decodeFragment(std::span<const uint8_t>(b.data(), 959), 7, 8);
  ASSERT_FALSE(shortRead.ok());
  EXPECT_EQ(shortRead.error().message, "ring fragment from rank 7: 959 bytes, expected 960");
  EXPECT_EQ(shortRead.error().status, NRT_INVALID);
  std::vector<uint8_t> longer(b.begin(), b.end());
  longer.push_back(0);
  EXPECT_FALSE(decodeFragment(longer, 7, 8).ok());
  EXPECT_CONTAINS(decodeError([](auto& b) { b[700] = 1; }), "tree byte 700 is 1");
}

// Untrusted bytes: random corruptions of a valid fragment either decode to
// something that passes every documented rule, or fail with a message.
TEST(GraphFragmentWire, RandomCorruptionIsRejectedOrValid) {
  const auto valid = encodeFragment(*preset(twoChannelGraph(), 7, {{6, 4, 7, 5}}));
  std::mt19937 rng(2024);
  int accepted = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    auto b = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      const std::size_t off = rng() % kFragmentBytes;
      b[off] = (rng() % 2) ? static_cast<uint8_t>(rng()) : static_cast<uint8_t>(0xff);
    }
    auto r = decodeFragment(b, 7, 8);
    if (!r.ok()) {
      ASSERT_FALSE(r.error().message.empty());
      continue;
    }
    ++accepted;
    const int n = r->activeChannels();
    ASSERT_GE(n, 1);
    for (int c = 0; c < kMaxChannels; ++c) {
      if (c >= n) {
        ASSERT_EQ(r->ringSend[c], -1);
        continue;
      }
      ASSERT_TRUE(r->ringRecv[c] >= 0 && r->ringRecv[c] < 8);
      ASSERT_TRUE(r->ringNext[c] >= -1 && r->ringNext[c] < 8);
      ASSERT_EQ(r->ringPrev[c] == -1, r->ringRecv[c] == 7);
    }
  }
  EXPECT_GT(accepted, 0);  // some corruptions stay valid (e.g. in-range rank swaps)
}

}  // namespace
}  // namespace nccom::rings
