#include "in_process_exchange.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace nccom::bootstrap::testing {

using Clock = std::chrono::steady_clock;

class InProcessNetwork::Endpoint : public PeerExchange {
 public:
  Endpoint(InProcessNetwork& network, int rank) : network_(network), rank_(rank) {}

  Status exchange(int send_to, const void* send_data, std::size_t send_size, int recv_from,
                  void* recv_data, std::size_t recv_size, MsgType type) override {
    records_.push_back(
        {static_cast<int>(records_.size()), rank_, send_to, send_size, recv_from, recv_size, type});
    if (!valid_peer(send_to) || !valid_peer(recv_from)) {
      return make_error(NRT_INVALID, who() + "bad peer " + std::to_string(send_to) + "/" +
                                         std::to_string(recv_from));
    }
    const Clock::time_point deadline = Clock::now() + network_.timeout_;
    uint64_t seq = 0;
    if (send_to >= 0) seq = post(send_to, send_data, send_size, type);
    if (recv_from >= 0) {
      Status received = take(recv_from, recv_data, recv_size, type, deadline);
      if (!received) {
        if (send_to >= 0) retract(send_to, type, seq);
        return received;
      }
    }
    if (send_to >= 0) return wait_taken(send_to, type, seq, send_size, deadline);
    return {};
  }

  const std::vector<ExchangeRecord>& records() const { return records_; }

 private:
  bool valid_peer(int peer) const {
    return peer >= -1 && peer < network_.nranks() && peer != rank_;
  }
  std::string who() const { return "in-process rank " + std::to_string(rank_) + ": "; }
  static std::string type_text(MsgType type) {
    return "(type " + std::to_string(static_cast<uint32_t>(type)) + ")";
  }

  uint64_t post(int to, const void* data, std::size_t size, MsgType type) {
    Mailbox& box = network_.mailbox(rank_, to, type);
    std::lock_guard<std::mutex> lock(box.mutex);
    const uint64_t seq = box.posted++;
    box.messages.push_back({static_cast<const uint8_t*>(data), size, seq});
    box.changed.notify_all();
    return seq;
  }

  // Copies under the mailbox lock, so a sender that holds the lock sees its
  // message either untouched or fully taken.
  Status take(int from, void* data, std::size_t size, MsgType type, Clock::time_point deadline) {
    Mailbox& box = network_.mailbox(from, rank_, type);
    std::unique_lock<std::mutex> lock(box.mutex);
    if (!box.changed.wait_until(lock, deadline, [&] { return !box.messages.empty(); })) {
      return make_error(NRT_TIMEOUT, who() + "nothing from rank " + std::to_string(from) + " " +
                                         type_text(type) + " within " +
                                         std::to_string(network_.timeout_.count()) + " ms");
    }
    const Message message = box.messages.front();
    const bool fits = message.size == size;
    if (fits && size > 0) std::memcpy(data, message.data, size);
    box.messages.pop_front();
    ++box.taken;  // a mismatched message is dropped, which frees its sender
    box.changed.notify_all();
    if (!fits) {
      return make_error(NRT_FAILURE, who() + "expected " + std::to_string(size) +
                                         " bytes from rank " + std::to_string(from) + ", got " +
                                         std::to_string(message.size));
    }
    return {};
  }

  Status wait_taken(int to, MsgType type, uint64_t seq, std::size_t size,
                    Clock::time_point deadline) {
    Mailbox& box = network_.mailbox(rank_, to, type);
    std::unique_lock<std::mutex> lock(box.mutex);
    if (box.changed.wait_until(lock, deadline, [&] { return box.taken > seq; })) return {};
    remove(box, seq);
    return make_error(NRT_TIMEOUT, who() + "rank " + std::to_string(to) + " did not take " +
                                       std::to_string(size) + " bytes " + type_text(type) +
                                       " within " + std::to_string(network_.timeout_.count()) +
                                       " ms");
  }

  // Our buffer must not be read after we return with an error.
  void retract(int to, MsgType type, uint64_t seq) {
    Mailbox& box = network_.mailbox(rank_, to, type);
    std::lock_guard<std::mutex> lock(box.mutex);
    remove(box, seq);
  }

  static void remove(Mailbox& box, uint64_t seq) {
    auto it = std::find_if(box.messages.begin(), box.messages.end(),
                           [&](const Message& m) { return m.seq == seq; });
    if (it != box.messages.end()) box.messages.erase(it);
  }

  InProcessNetwork& network_;
  const int rank_;
  std::vector<ExchangeRecord> records_;
};

InProcessNetwork::InProcessNetwork(int nranks, std::chrono::milliseconds timeout)
    : timeout_(timeout) {
  for (int rank = 0; rank < nranks; ++rank) {
    endpoints_.push_back(std::make_unique<Endpoint>(*this, rank));
  }
}

InProcessNetwork::~InProcessNetwork() = default;

PeerExchange& InProcessNetwork::endpoint(int rank) { return *endpoints_.at(rank); }

const std::vector<ExchangeRecord>& InProcessNetwork::records(int rank) const {
  return endpoints_.at(rank)->records();
}

std::size_t InProcessNetwork::undelivered() const {
  std::lock_guard<std::mutex> lock(boxes_mutex_);
  std::size_t count = 0;
  for (const auto& [key, box] : boxes_) {
    std::lock_guard<std::mutex> box_lock(box->mutex);
    count += box->messages.size();
  }
  return count;
}

InProcessNetwork::Mailbox& InProcessNetwork::mailbox(int from, int to, MsgType type) {
  std::lock_guard<std::mutex> lock(boxes_mutex_);
  auto& box = boxes_[{from, to, static_cast<uint32_t>(type)}];
  if (!box) box = std::make_unique<Mailbox>();
  return *box;
}

}  // namespace nccom::bootstrap::testing
