// watch.h, the service as a communicator and the proxy scheduler see it: a
// rank listed from init, joined with its communicator's cards, the
// scheduler's reports landing in its stream counters, the verdict the
// health thread sets coming back, and the rank gone once it leaves.
#include "health/watch.h"

#include "health/service.h"
#include "health/state.h"
#include "health/wire.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

namespace nccom::health {
namespace {

constexpr uint64_t kSecret = 0x5ec12e7;

std::shared_ptr<CommRecord> record_of(uint64_t hash) {
  for (const auto& c : Registry::instance().comms()) {
    if (c->hash() == hash) return c;
  }
  return nullptr;
}

CardBytes start_service(bool enabled) {
  auto loopback = bootstrap::SocketAddress::parse("127.0.0.1:1");
  if (!loopback) {
    ADD_FAILURE() << loopback.error().message;
    return CardBytes{};
  }
  loopback->set_port(0);  // the service listens on an ephemeral port
  ServiceSettings s;
  s.enabled = enabled;
  s.client_address.clear();
  s.keepalive_ms = 50;
  return own_card(s, *loopback, "here");
}

class HealthWatch : public ::testing::Test {
 protected:
  void TearDown() override {
    stop_service();
    Registry::instance().clear();
  }
};

TEST_F(HealthWatch, ARankIsListedFromInitAndGoneWhenItLeaves) {
  const CardBytes mine = start_service(true);
  auto own = Card::decode(mine.data(), mine.size());
  ASSERT_TRUE(own) << own.error().message;
  ASSERT_TRUE(own->service);
  std::shared_ptr<RankWatch> w = watch(0xa1, 0, 2);
  ASSERT_NE(w, nullptr);
  auto init = record_of(0xa1);
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->state(), CommState::kInit);
  EXPECT_TRUE(init->processes().empty());

  // Rank 1's process runs no service: its card is all zero.
  w->join(kSecret, {mine, CardBytes{}});
  auto running = record_of(0xa1);
  ASSERT_NE(running, nullptr);
  EXPECT_NE(running, init) << "the init record gives way to the running one";
  EXPECT_EQ(running->state(), CommState::kRunning);
  EXPECT_EQ(running->processes(), (std::vector<uint64_t>{own->process, 0}));
  EXPECT_EQ(w->lost(), "");

  w->leave();
  EXPECT_EQ(record_of(0xa1), nullptr);
  w->leave();  // a second leave (the destructor's) changes nothing
  w.reset();
}

TEST_F(HealthWatch, TheSchedulersReportsLandInTheRecordAndItsVerdictComesBack) {
  const CardBytes mine = start_service(true);
  std::shared_ptr<RankWatch> w = watch(0xa2, 1, 2);
  ASSERT_NE(w, nullptr);
  w->join(kSecret, {CardBytes{}, mine});
  auto record = record_of(0xa2);
  ASSERT_NE(record, nullptr);
  StreamProgress& sp = record->stream(2);

  w->began(2, 7, 5000);
  EXPECT_EQ(sp.started.load(), 1u);
  EXPECT_TRUE(sp.running.load());
  EXPECT_EQ(sp.block.load(), 7);
  EXPECT_EQ(sp.began_ms.load(), 5000u);
  proxy::StallDescription what;
  what.ops = "send op 1, descriptor 4 of 9";
  what.target = {1, 3, "its oldest request (SEND) is in the net plugin"};
  w->stalled(2, what);
  EXPECT_TRUE(sp.waiting_known.load());
  EXPECT_EQ(sp.waiting_peer.load(), 1);
  EXPECT_EQ(sp.waiting_channel.load(), 3);
  {
    std::lock_guard lock(sp.mu);
    EXPECT_EQ(sp.waiting_what, what.ops);
    EXPECT_EQ(sp.waiting_in, what.target.in);
  }
  w->moved(2, 6000, true);
  EXPECT_EQ(sp.last_progress_ms.load(), 6000u);
  EXPECT_FALSE(sp.waiting_known.load()) << "moving ends the stall";
  EXPECT_EQ(sp.waiting_peer.load(), -1);

  EXPECT_EQ(w->verdict(2), std::nullopt);
  {
    std::lock_guard lock(sp.mu);  // as the health thread decides
    sp.verdict.set = true;
    sp.verdict.text = "no progress for 61000 ms (health.stall_warn_s): waiting on rank 0";
  }
  sp.has_verdict.store(true);
  EXPECT_EQ(w->verdict(2), std::optional<std::string>(sp.verdict.text));
  w->failed(2, sp.verdict.text);
  const std::vector<ErrorRecord> errors = Registry::instance().errors();
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.back().comm, 0xa2u);
  EXPECT_EQ(errors.back().rank, 1);
  EXPECT_EQ(errors.back().text, "proxy: " + sp.verdict.text);

  w->stopped(2);
  EXPECT_EQ(w->verdict(2), std::nullopt) << "stop forgets the verdict";
  EXPECT_FALSE(sp.running.load());
  w->completed(2);
  EXPECT_EQ(sp.completed.load(), 1u);
  // A stream the record does not have is ignored.
  w->began(99, 1, 1);
  EXPECT_EQ(w->verdict(99), std::nullopt);
  w->leave();
}

TEST_F(HealthWatch, AServiceThatIsOffWatchesNothing) {
  const CardBytes mine = start_service(false);
  auto own = Card::decode(mine.data(), mine.size());
  ASSERT_TRUE(own) << own.error().message;
  EXPECT_FALSE(own->service);
  EXPECT_NE(own->process, 0u) << "the card still names the process";
  EXPECT_EQ(watch(0xa3, 0, 2), nullptr);
  EXPECT_EQ(record_of(0xa3), nullptr);
}

}  // namespace
}  // namespace nccom::health
