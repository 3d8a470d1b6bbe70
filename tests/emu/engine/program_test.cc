// EngineProgram: the ring programs of every collective, executed for all
// ranks in memory (one FIFO of slices per ring hop, ranks stepped round
// robin), for 1-9 ranks, rings in scrambled orders, counts that do not
// divide by the rank count, slices of a few elements — results checked
// exactly against a reference, as the engine's devices would compute them.
#include "program.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <numeric>
#include <random>
#include <vector>

namespace nrt_emu::engine {
namespace {

struct Sim {
  int n;
  CollDesc d;
  std::vector<int> order;  // ring order (rank at position q)
  std::vector<std::vector<int64_t>> in, out;
  uint64_t slice = 3;
};

std::string run(Sim& s, const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  const int n = s.n;
  // One program per (rank, channel); channels are independent rings here
  // with the same order.
  for (size_t c = 0; c < ranges.size(); ++c) {
    std::vector<ChannelProgram> progs(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      Ring ring;
      ring.order = s.order;
      ring.pos = static_cast<int>(std::find(s.order.begin(), s.order.end(), r) - s.order.begin());
      if (auto st = build_ring_program(s.d, ring, r, ranges[c].first, ranges[c].second, s.slice,
                                       &progs[r]);
          !st)
        return st.error().message;
    }
    // queue[r] = slices travelling into rank r (from its ring predecessor).
    std::vector<std::deque<std::vector<int64_t>>> queue(static_cast<size_t>(n));
    std::vector<size_t> step(static_cast<size_t>(n), 0);
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < n; ++r) {
        const int pos =
            static_cast<int>(std::find(s.order.begin(), s.order.end(), r) - s.order.begin());
        const int next = s.order[static_cast<size_t>((pos + 1) % n)];
        while (step[r] < progs[r].steps.size()) {
          const Step& st = progs[r].steps[step[r]];
          std::vector<int64_t> v(st.elems);
          if (st.flags & kRecv) {
            if (queue[r].empty()) break;
            v = queue[r].front();
            queue[r].pop_front();
            if (v.size() != st.elems) return "slice size mismatch at rank " + std::to_string(r);
            if (st.flags & kReduce)
              for (uint64_t i = 0; i < st.elems; ++i)
                v[i] += s.in[r][static_cast<size_t>(st.src) + i];
          } else {
            for (uint64_t i = 0; i < st.elems; ++i) v[i] = s.in[r][static_cast<size_t>(st.src) + i];
          }
          if (st.dst >= 0)
            for (uint64_t i = 0; i < st.elems; ++i)
              s.out[r][static_cast<size_t>(st.dst) + i] = v[i];
          if (st.flags & kSend) queue[next].push_back(v);
          ++step[r];
          moved = true;
        }
      }
    }
    for (int r = 0; r < n; ++r) {
      if (step[r] != progs[r].steps.size())
        return "rank " + std::to_string(r) + " is stuck (deadlock)";
      if (!queue[r].empty()) return "rank " + std::to_string(r) + " has unconsumed slices";
    }
  }
  return "";
}

class EngineProgram : public ::testing::TestWithParam<int> {};

TEST_P(EngineProgram, EveryRingCollectiveIsRight) {
  const int n = GetParam();
  std::mt19937 rng(1234u + static_cast<unsigned>(n));
  for (Coll coll :
       {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast, Coll::Reduce}) {
    for (uint64_t count : {0ull, 1ull, 2ull, 7ull, 31ull, 100ull}) {
      for (int channels : {1, 3}) {
        Sim s;
        s.n = n;
        s.d.coll = coll;
        s.d.dtype = DType::Int64;
        s.d.count = count;
        s.d.root = static_cast<int>(rng() % static_cast<unsigned>(n));
        s.order.resize(static_cast<size_t>(n));
        std::iota(s.order.begin(), s.order.end(), 0);
        std::shuffle(s.order.begin() + 1, s.order.end(), rng);
        std::rotate(s.order.begin(), std::min_element(s.order.begin(), s.order.end()),
                    s.order.end());
        const uint64_t in_n = coll == Coll::ReduceScatter ? count * n : count;
        const uint64_t out_n = coll == Coll::AllGather ? count * n : count;
        s.in.assign(n, std::vector<int64_t>(in_n));
        s.out.assign(n, std::vector<int64_t>(out_n, -1));
        for (int r = 0; r < n; ++r)
          for (uint64_t i = 0; i < in_n; ++i) s.in[r][i] = static_cast<int64_t>(rng() % 1000);
        const std::string what = std::string(coll_name(coll)) + " n=" + std::to_string(n) +
                                 " count=" + std::to_string(count) +
                                 " channels=" + std::to_string(channels);
        ASSERT_EQ(run(s, split_channels(count, channels, 2)), "") << what;
        for (int r = 0; r < n; ++r) {
          for (uint64_t i = 0; i < out_n; ++i) {
            int64_t want = 0;
            switch (coll) {
              case Coll::AllReduce:
                for (int q = 0; q < n; ++q) want += s.in[q][i];
                break;
              case Coll::Reduce:
                if (r != s.d.root) {
                  want = -1;  // untouched
                } else {
                  for (int q = 0; q < n; ++q) want += s.in[q][i];
                }
                break;
              case Coll::ReduceScatter:
                for (int q = 0; q < n; ++q) want += s.in[q][r * count + i];
                break;
              case Coll::AllGather: want = s.in[i / count][i % count]; break;
              case Coll::Broadcast: want = s.in[s.d.root][i]; break;
              default: break;
            }
            ASSERT_EQ(s.out[r][i], want) << what << " rank " << r << " element " << i;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, EngineProgram, ::testing::Range(1, 10));

TEST(EngineProgramErrors, BadRingsAndRootsAreRefused) {
  CollDesc d;
  d.count = 10;
  ChannelProgram p;
  Ring ring;
  ring.order = {0, 1, 2};
  ring.pos = 1;  // rank 1 sits at position 1; rank 0 does not
  EXPECT_FALSE(build_ring_program(d, ring, 0, 0, 10, 4, &p).ok());
  ring.pos = 0;
  EXPECT_FALSE(build_ring_program(d, ring, 0, 0, 10, 0, &p).ok());  // 0-element slices
  d.coll = Coll::Broadcast;
  d.root = 3;
  EXPECT_NE(build_ring_program(d, ring, 0, 0, 10, 4, &p).error().message.find("root 3"),
            std::string::npos);
  d.coll = Coll::AllToAll;
  EXPECT_FALSE(build_ring_program(d, ring, 0, 0, 10, 4, &p).ok());
}

}  // namespace
}  // namespace nrt_emu::engine
