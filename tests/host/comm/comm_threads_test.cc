// Communicators of 1..64 ranks as threads: flat and hierarchical, 1 to 4
// emulated hosts. Every rank ends with the same, correct peer table; the
// bootstrap services work between any two ranks.
#include "bootstrap/allgather.h"
#include "comm_test_util.h"
#include "health/report.h"
#include "health/snapshot.h"
#include "health/state.h"
#include "machine.h"

#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace {

using nccom::bootstrap::MsgType;
using nccom_test::bring_up;
using nccom_test::loopback_settings;
using nccom_test::on_every_rank;

using Shape = std::tuple<std::string, int, int>;  // protocol, ranks, hosts

class CommThreads : public ::testing::TestWithParam<Shape> {};

TEST_P(CommThreads, EveryRankHasTheSamePeerTableAndTheServicesWork) {
  const auto& [protocol, nranks, hosts] = GetParam();
  const auto settings = loopback_settings(protocol, std::chrono::seconds(60));
  auto ranks = bring_up(nranks, hosts, settings);
  for (int r = 0; r < nranks; ++r) {
    ASSERT_TRUE(ranks[r].status) << "rank " << r << ": " << ranks[r].status.error().message;
  }

  // The same table everywhere, and it describes the ranks correctly.
  const auto& reference = ranks[0].comm->peers();
  ASSERT_EQ(static_cast<int>(reference.size()), nranks);
  for (int r = 0; r < nranks; ++r) {
    const auto& comm = *ranks[r].comm;
    EXPECT_EQ(comm.cluster_id(), ranks[0].comm->cluster_id());
    EXPECT_EQ(comm.epoch(), ranks[0].comm->epoch());
    EXPECT_EQ(comm.node_count(), std::min(hosts, nranks));
    for (int q = 0; q < nranks; ++q) {
      EXPECT_EQ(comm.peers()[q].encode(), reference[q].encode()) << "rank " << r << " peer " << q;
    }
    const auto dev = nccom_test::device_for(r, nranks, hosts);
    EXPECT_EQ(reference[r].rank, r);
    EXPECT_EQ(reference[r].device, dev.nec_dev_id);
    EXPECT_EQ(reference[r].virtual_server_id, static_cast<int32_t>(dev.virtual_server_id));
    EXPECT_EQ(reference[r].comm, reinterpret_cast<uintptr_t>(ranks[r].comm.get()));
  }
  if (nranks > 1) {
    EXPECT_NE(ranks[0].comm->cluster_id(), 0u);
  }

  // All-gather of odd-sized slices, with the rule's algorithm; then a
  // message from every rank to every other (17 and 129 bytes, as libnrt).
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  auto fail = [&](const std::string& what) {
    std::lock_guard lock(failures_mutex);
    failures.push_back(what);
  };
  on_every_rank(ranks, [&](int rank, nccom::comm::Communicator& comm) {
    constexpr std::size_t kSlice = 37;
    std::vector<uint8_t> data(kSlice * nranks, 0xee);
    for (std::size_t i = 0; i < kSlice; ++i)
      data[rank * kSlice + i] = static_cast<uint8_t>(rank * 7 + i);
    if (auto ok = comm.all_gather(data.data(), kSlice); !ok) return fail(ok.error().message);
    for (int q = 0; q < nranks; ++q) {
      for (std::size_t i = 0; i < kSlice; ++i) {
        if (data[q * kSlice + i] != static_cast<uint8_t>(q * 7 + i)) {
          return fail("rank " + std::to_string(rank) + ": slice " + std::to_string(q) + " wrong");
        }
      }
    }
    // Each algorithm explicitly (recursive doubling only for powers of two).
    for (auto algorithm : {nccom::bootstrap::AllGatherAlgorithm::kRing,
                           nccom::bootstrap::AllGatherAlgorithm::kRecursiveDoubling,
                           nccom::bootstrap::AllGatherAlgorithm::kBruck}) {
      if (algorithm == nccom::bootstrap::AllGatherAlgorithm::kRecursiveDoubling &&
          (nranks & (nranks - 1)) != 0) {
        continue;
      }
      std::vector<uint8_t> slices(kSlice * nranks, 0);
      for (std::size_t i = 0; i < kSlice; ++i)
        slices[rank * kSlice + i] = static_cast<uint8_t>(rank ^ i);
      if (auto ok = comm.all_gather(slices.data(), kSlice, algorithm); !ok)
        return fail(ok.error().message);
      for (int q = 0; q < nranks; ++q) {
        for (std::size_t i = 0; i < kSlice; ++i) {
          if (slices[q * kSlice + i] != static_cast<uint8_t>(q ^ i)) {
            return fail(std::string(nccom::bootstrap::algorithm_name(algorithm)) + ": rank " +
                        std::to_string(rank) + " slice " + std::to_string(q) + " wrong");
          }
        }
      }
    }
    if (nranks > 16) return;  // the n^2 exchange below stays for small worlds
    for (int q = 0; q < nranks; ++q) {
      if (q == rank) continue;
      uint8_t msg[129];
      std::memset(msg, rank, sizeof msg);
      if (auto ok = comm.send(q, MsgType::kUser, msg, sizeof msg); !ok)
        return fail(ok.error().message);
    }
    for (int q = 0; q < nranks; ++q) {
      if (q == rank) continue;
      uint8_t msg[129];
      if (auto ok = comm.recv(q, MsgType::kUser, msg, sizeof msg); !ok)
        return fail(ok.error().message);
      for (uint8_t b : msg) {
        if (b != q)
          return fail("rank " + std::to_string(rank) + ": bad bytes from " + std::to_string(q));
      }
    }
  });
  EXPECT_TRUE(failures.empty()) << failures.front();
  // The root's thread ends just after its last answer, not before the
  // ranks read it: it is given a bound to get there.
  EXPECT_EQ(nccom::comm::wait_roots(std::chrono::seconds(10)), 0)
      << "the root ends once everybody is answered";
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks_" +
         std::to_string(std::get<2>(info.param)) + "hosts";
}

INSTANTIATE_TEST_SUITE_P(Flat, CommThreads,
                         ::testing::Values(Shape{"flat", 1, 1}, Shape{"flat", 2, 1},
                                           Shape{"flat", 3, 1}, Shape{"flat", 4, 2},
                                           Shape{"flat", 5, 2}, Shape{"flat", 8, 2},
                                           Shape{"flat", 13, 3}, Shape{"flat", 16, 4},
                                           Shape{"flat", 64, 4}),
                         shape_name);
INSTANTIATE_TEST_SUITE_P(Hierarchical, CommThreads,
                         ::testing::Values(Shape{"hierarchical", 1, 1}, Shape{"hierarchical", 2, 1},
                                           Shape{"hierarchical", 3, 3}, Shape{"hierarchical", 4, 2},
                                           Shape{"hierarchical", 8, 4},
                                           Shape{"hierarchical", 16, 4},
                                           Shape{"hierarchical", 64, 4}),
                         shape_name);

}  // namespace

namespace {

// The same over IPv6 loopback: the id carries a [::1] root address.
TEST(CommThreadsIpv6, FourRanksOverIpv6Loopback) {
  if (std::string why = nccom_test::machine::ipv6_loopback(); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kIpv6Loopback) << why;
  auto settings = nccom_test::loopback_settings("flat", std::chrono::seconds(30));
  auto v6 = nccom::bootstrap::SocketAddress::parse("[::1]:1");
  ASSERT_TRUE(v6);
  v6->set_port(0);
  settings.interface.address = *v6;
  auto ranks = nccom_test::bring_up(4, 2, settings);
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(ranks[r].status) << ranks[r].status.error().message;
  }
  EXPECT_EQ(ranks[0].comm->node_count(), 2);
}

}  // namespace

namespace {

// The ranks of communicators as this process's health snapshot lists them:
// hash -> rank -> state.
std::map<uint64_t, std::map<int, std::string>> listed_comms() {
  const std::string text = nccom::health::Registry::instance().snapshot_text(1, 1, "here", {});
  auto snap = nccom::health::parse_snapshot(text);
  EXPECT_TRUE(snap) << text;
  std::map<uint64_t, std::map<int, std::string>> out;
  if (snap) {
    for (const auto& c : snap->comms) out[c.hash][c.rank] = c.state;
  }
  return out;
}

// A rank is listed as "init" from the moment it starts its communicator, so
// a communicator whose init waits on a rank that never came shows who came
// and who is missing; once the last rank comes, every rank is "running".
TEST(CommThreadsHealth, RanksInInitAreListedAndTheMissingOneIsNamed) {
  const auto settings = loopback_settings("flat", std::chrono::seconds(60));
  auto id = nccom::comm::get_unique_id(nullptr, 3, false, settings);
  ASSERT_TRUE(id) << id.error().message;
  const ncclUniqueId bytes = id->encode();
  std::vector<nccom_test::RankOutcome> outcomes(3);
  auto start = [&](int r) {
    return std::thread([&, r] { outcomes[r] = nccom_test::init_rank(bytes, r, 3, 1, settings); });
  };
  const auto before = listed_comms();
  std::vector<std::thread> threads;
  threads.push_back(start(0));
  threads.push_back(start(1));

  // Wait (bounded) until ranks 0 and 1 of a new communicator list themselves.
  uint64_t hash = 0;
  std::map<int, std::string> ranks;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& [h, r] : listed_comms()) {
      if (before.count(h) == 0 && r.size() == 2) {
        hash = h;
        ranks = r;
      }
    }
    if (hash != 0) break;
    std::this_thread::yield();
  }
  ASSERT_NE(hash, 0u) << "ranks 0 and 1 never listed themselves";
  EXPECT_EQ(ranks, (std::map<int, std::string>{{0, "init"}, {1, "init"}}));

  // The report built from this process's real snapshot names rank 2 missing.
  nccom::health::JobView job;
  nccom::health::Member me;
  me.process = 1;
  me.pid = 1;
  me.host = "here";
  auto snap = nccom::health::parse_snapshot(
      nccom::health::Registry::instance().snapshot_text(1, 1, "here", {}));
  ASSERT_TRUE(snap);
  me.snapshot = *snap;
  job.members.push_back(me);
  job.answered_by = 1;
  const std::string text = nccom::health::render_text(job, false);
  EXPECT_NE(text.find("comm " + nccom::health::hex(hash) + ": 3 ranks: 2 init, 1 missing"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("missing: rank 2 ("), std::string::npos) << text;

  threads.push_back(start(2));
  for (auto& t : threads) t.join();
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(outcomes[r].status) << "rank " << r << ": " << outcomes[r].status.error().message;
  }
  EXPECT_EQ(listed_comms()[hash],
            (std::map<int, std::string>{{0, "running"}, {1, "running"}, {2, "running"}}));
  outcomes.clear();
  EXPECT_EQ(listed_comms().count(hash), 0u) << "freed communicators stay listed";
}

}  // namespace
