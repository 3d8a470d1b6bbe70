// The service's side of watch.h: a rank's record in the process's registry,
// handed to the engine once the communicator's cards are known, and the
// proxy scheduler's reports written into that record's stream counters.
#include "health/watch.h"

#include "health/service.h"
#include "health/state.h"
#include "health/wire.h"
#include "log/log.h"

#include <utility>

namespace nccom::health {
namespace {

class Watch final : public RankWatch {
 public:
  Watch(uint64_t hash, int rank, int nranks)
      : record_(Registry::instance().add_comm(hash, rank, nranks, {})) {}
  ~Watch() override { leave(); }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  void join(uint64_t secret, const std::vector<CardBytes>& bytes) override {
    std::vector<Card> cards;
    std::vector<uint64_t> processes;
    for (std::size_t r = 0; r < bytes.size(); ++r) {
      auto card = Card::decode(bytes[r].data(), bytes[r].size());
      if (!card) {
        // A rank whose process runs no health service (or sent garbage) is
        // not watched; the communicator works without it.
        NCCOM_INFO(log::kInit,
                   "health: rank %zu sent no usable health card (%s); it is not watched", r,
                   card.error().message.c_str());
        cards.emplace_back();
      } else {
        cards.push_back(*card);
      }
      processes.push_back(cards.back().process);
    }
    // The "init" record (no processes) gives way to the running one.
    Registry::instance().remove_comm(record_.get());
    record_ = Registry::instance().add_comm(record_->hash(), record_->rank(), record_->nranks(),
                                            std::move(processes));
    record_->set_state(CommState::kRunning);
    add_comm(record_, secret, cards);
  }

  std::string lost() const override { return record_->lost(); }

  void leave() override {
    if (std::exchange(left_, true)) return;
    remove_comm(record_.get());
    Registry::instance().remove_comm(record_.get());
  }

  void began(uint32_t stream, uint32_t block, uint64_t now_ms) override {
    StreamProgress* p = progress_of(stream);
    if (p == nullptr) return;
    p->last_progress_ms.store(now_ms, std::memory_order_relaxed);
    p->began_ms.store(now_ms, std::memory_order_relaxed);
    p->waiting_peer.store(-1, std::memory_order_relaxed);
    p->waiting_known.store(false, std::memory_order_relaxed);
    p->running.store(true, std::memory_order_relaxed);
    p->block.store(block, std::memory_order_relaxed);
    p->started.fetch_add(1, std::memory_order_release);
  }

  void moved(uint32_t stream, uint64_t now_ms, bool after_stall) override {
    StreamProgress* p = progress_of(stream);
    if (p == nullptr) return;
    p->last_progress_ms.store(now_ms, std::memory_order_relaxed);
    if (after_stall) {
      p->waiting_peer.store(-1, std::memory_order_relaxed);
      p->waiting_known.store(false, std::memory_order_relaxed);
    }
  }

  void completed(uint32_t stream) override {
    StreamProgress* p = progress_of(stream);
    if (p == nullptr) return;
    p->running.store(false, std::memory_order_relaxed);
    p->completed.fetch_add(1, std::memory_order_release);
  }

  void stalled(uint32_t stream, proxy::StallDescription what) override {
    StreamProgress* p = progress_of(stream);
    if (p == nullptr) return;
    {
      std::lock_guard lock(p->mu);
      p->waiting_what = std::move(what.ops);
      p->waiting_in = std::move(what.target.in);
    }
    p->waiting_channel.store(what.target.channel, std::memory_order_relaxed);
    p->waiting_peer.store(what.target.peer, std::memory_order_release);
    p->waiting_known.store(true, std::memory_order_release);
  }

  std::optional<std::string> verdict(uint32_t stream) override {
    StreamProgress* p = progress_of(stream);
    if (p == nullptr || !p->has_verdict.load(std::memory_order_acquire)) return std::nullopt;
    std::lock_guard lock(p->mu);
    return p->verdict.text;
  }

  void failed(uint32_t /*stream*/, const std::string& message) override {
    Registry::instance().record_error(record_->hash(), record_->rank(), "proxy: " + message);
  }

  void stopped(uint32_t stream) override {
    StreamProgress* p = progress_of(stream);
    if (p == nullptr) return;
    std::lock_guard lock(p->mu);
    p->running.store(false);
    p->has_verdict.store(false);
    p->verdict = {};
  }

 private:
  // The record is replaced only by join(), before any scheduler exists.
  StreamProgress* progress_of(uint32_t stream) {
    return stream < static_cast<uint32_t>(kStreams) ? &record_->stream(static_cast<int>(stream))
                                                    : nullptr;
  }

  std::shared_ptr<CommRecord> record_;
  bool left_ = false;
};

}  // namespace

CardBytes own_card(const ServiceSettings& settings, const bootstrap::SocketAddress& host,
                   const std::string& host_label) {
  return ensure_service(settings, host, host_label).encode();
}

std::shared_ptr<RankWatch> watch(uint64_t comm_hash, int rank, int nranks) {
  if (!service_running()) return nullptr;
  return std::make_shared<Watch>(comm_hash, rank, nranks);
}

void record_error(uint64_t comm_hash, int rank, std::string text) {
  Registry::instance().record_error(comm_hash, rank, std::move(text));
}

}  // namespace nccom::health
