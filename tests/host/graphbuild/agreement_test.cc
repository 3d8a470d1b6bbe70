// The settings every rank must share (graphbuild/agreement.h): ranks as
// threads over an in-memory all-gather with the bootstrap's contract (each
// rank's slice in, everyone's out).
#include "graphbuild/agreement.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using nccom::graphbuild::AgreedSetting;
using nccom::graphbuild::check_agreement;

// One all-gather among n threads, used once.
class Gather {
 public:
  explicit Gather(int n) : n_(n) {}
  nccom::Status operator()(int rank, void* data, std::size_t per_rank) {
    std::unique_lock lock(mu_);
    if (buffer_.empty()) buffer_.resize(per_rank * static_cast<std::size_t>(n_));
    std::memcpy(buffer_.data() + per_rank * static_cast<std::size_t>(rank),
                static_cast<uint8_t*>(data) + per_rank * static_cast<std::size_t>(rank), per_rank);
    if (++arrived_ == n_) cv_.notify_all();
    cv_.wait(lock, [&] { return arrived_ == n_; });
    std::memcpy(data, buffer_.data(), buffer_.size());
    return {};
  }

 private:
  int n_;
  int arrived_ = 0;
  std::vector<uint8_t> buffer_;
  std::mutex mu_;
  std::condition_variable cv_;
};

// Every rank's outcome for its settings.
std::vector<nccom::Status> run(const std::vector<std::vector<AgreedSetting>>& settings) {
  const int n = static_cast<int>(settings.size());
  Gather gather(n);
  std::vector<nccom::Status> out(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      out[static_cast<std::size_t>(r)] = check_agreement(
          r, n, settings[static_cast<std::size_t>(r)],
          [&gather, r](void* data, std::size_t per_rank) { return gather(r, data, per_rank); });
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

std::vector<AgreedSetting> base() {
  return {{"transport.plugins", "p2p,net", "default"},
          {"graph.use_new_algorithm", "0", "default"},
          {"net plugin", "AWS Libfabric (Neuron ncclNet_v6)", "net.plugin and its layout"}};
}

TEST(Agreement, RanksThatAgreeGoOn) {
  for (const auto& s : run({base(), base(), base(), base()})) EXPECT_TRUE(s);
}

// The same message on every rank: the setting, the odd rank first with its
// value and where it came from, then the others.
TEST(Agreement, ADifferenceFailsEveryRankAlikeNamingTheSettingTheRanksAndTheValues) {
  std::vector<std::vector<AgreedSetting>> s = {base(), base(), base(), base()};
  s[2][1] = {"graph.use_new_algorithm", "1", "env NCCL_GRAPH_USE_NEW_ALGORITHM"};
  const auto out = run(s);
  for (int r = 0; r < 4; ++r) {
    ASSERT_FALSE(out[static_cast<std::size_t>(r)]) << "rank " << r;
    EXPECT_EQ(out[static_cast<std::size_t>(r)].error().message,
              "graph.use_new_algorithm differs between the ranks: \"1\" on rank 2 (env "
              "NCCL_GRAPH_USE_NEW_ALGORITHM); \"0\" on ranks 0, 1, 3 (default on rank 0). It "
              "decides what goes on the wire or which path a rank takes: set it alike on every "
              "rank");
    EXPECT_EQ(out[static_cast<std::size_t>(r)].error().status, NRT_INVALID);
  }
}

TEST(Agreement, TheNetPluginIsCompared) {
  std::vector<std::vector<AgreedSetting>> s = {base(), base()};
  s[0][2].value = "socket (Neuron ncclNet_v6)";
  for (const auto& st : run(s)) {
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find("net plugin differs between the ranks: \"socket (Neuron "
                                      "ncclNet_v6)\" on rank 0"),
              std::string::npos)
        << st.error().message;
    EXPECT_NE(st.error().message.find("\"AWS Libfabric (Neuron ncclNet_v6)\" on rank 1"),
              std::string::npos)
        << st.error().message;
  }
}

// A setting one rank does not list (another build) is named, not ignored;
// long values are cut alike on every rank, so they still compare equal.
TEST(Agreement, AMissingSettingIsNamedAndLongValuesCompareAlike) {
  std::vector<std::vector<AgreedSetting>> s = {base(), base()};
  for (auto& rank : s) rank[0].value = std::string(500, 'x');
  EXPECT_TRUE(run(s)[0]);
  s[1].pop_back();
  for (const auto& st : run(s)) {
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find("net plugin differs between the ranks"), std::string::npos);
    EXPECT_NE(st.error().message.find("(not compared: another libnccom build?)\" on rank 1"),
              std::string::npos)
        << st.error().message;
  }
}

// A record that is not one (garbage from a peer) fails naming its rank.
TEST(Agreement, AnUnreadableRecordNamesItsRank) {
  auto st = check_agreement(0, 2, base(), [](void* data, std::size_t per_rank) {
    std::memset(static_cast<uint8_t*>(data) + per_rank, 0xff, per_rank);
    return nccom::Status{};
  });
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("rank 1 sent no readable list"), std::string::npos)
      << st.error().message;
}

}  // namespace
