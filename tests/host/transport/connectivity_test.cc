// The peer plans of neuronExpandConnectivity: MESH, RDH (powers of two and
// not), DEFAULT; every plan symmetric (a lists b iff b lists a), never self.
#include "transport/connectivity.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace nccom::transport {
namespace {

std::vector<int> peers(enc_net_connectivity_t c, int rank, int n) {
  auto p = connectivity_peers(c, rank, n);
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? *p : std::vector<int>{};
}

TEST(Connectivity, MeshIsEveryOtherRank) {
  EXPECT_EQ(peers(ENC_CONNECTIVITY_MESH, 2, 4), (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(peers(ENC_CONNECTIVITY_MESH, 0, 1).empty());
}

TEST(Connectivity, DefaultIsNone) { EXPECT_TRUE(peers(ENC_CONNECTIVITY_DEFAULT, 1, 8).empty()); }

TEST(Connectivity, RdhOnAPowerOfTwoIsRankXorPowersOfTwo) {
  // Hand-checked: 5 = 0b101 -> 4 (^1), 7 (^2), 1 (^4).
  EXPECT_EQ(peers(ENC_CONNECTIVITY_RDH, 5, 8), (std::vector<int>{1, 4, 7}));
  EXPECT_EQ(peers(ENC_CONNECTIVITY_RDH, 0, 2), (std::vector<int>{1}));
}

TEST(Connectivity, RdhFoldsTheExtraRanksOfANonPowerOfTwo) {
  // n = 6: p2 = 4; ranks 4, 5 fold into 0, 1.
  EXPECT_EQ(peers(ENC_CONNECTIVITY_RDH, 0, 6), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(peers(ENC_CONNECTIVITY_RDH, 1, 6), (std::vector<int>{0, 3, 5}));
  EXPECT_EQ(peers(ENC_CONNECTIVITY_RDH, 3, 6), (std::vector<int>{1, 2}));
  EXPECT_EQ(peers(ENC_CONNECTIVITY_RDH, 4, 6), (std::vector<int>{0}));
  EXPECT_EQ(peers(ENC_CONNECTIVITY_RDH, 5, 6), (std::vector<int>{1}));
  EXPECT_EQ(peers(ENC_CONNECTIVITY_RDH, 2, 3), (std::vector<int>{0}));
}

TEST(Connectivity, EveryPlanIsSymmetricAndWithoutSelf) {
  for (auto c : {ENC_CONNECTIVITY_MESH, ENC_CONNECTIVITY_RDH, ENC_CONNECTIVITY_DEFAULT}) {
    for (int n = 1; n <= 17; ++n) {
      for (int a = 0; a < n; ++a) {
        const auto pa = peers(c, a, n);
        EXPECT_TRUE(std::is_sorted(pa.begin(), pa.end()));
        for (int b : pa) {
          ASSERT_NE(a, b);
          ASSERT_TRUE(b >= 0 && b < n);
          const auto pb = peers(c, b, n);
          EXPECT_NE(std::find(pb.begin(), pb.end(), a), pb.end())
              << connectivity_name(c) << " n=" << n << ": " << a << " lists " << b;
        }
      }
    }
  }
}

TEST(Connectivity, RefusesBadArguments) {
  auto p = connectivity_peers(7u, 0, 4);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("connectivity 7 is none of"), std::string::npos);
  p = connectivity_peers(ENC_CONNECTIVITY_MESH, 4, 4);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("rank 4 is not in 0..3"), std::string::npos);
}

}  // namespace
}  // namespace nccom::transport
