// In-process PeerExchange for the all-gather suites: n ranks as n threads,
// one mailbox per (from, to, type), every call recorded per rank.
//
// Sends are rendezvous, like a socket whose buffer is smaller than the
// message: exchange() posts its send, receives, then waits until the peer
// has copied the send out. A schedule that only works with buffering fails
// here too, and nothing is copied twice (the suites move multi-MiB slices).
// Every wait has a deadline, so a broken schedule fails with NRT_TIMEOUT
// and never hangs.
#pragma once

#include "bootstrap/allgather.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace nccom::bootstrap::testing {

// One exchange() call as the calling rank made it (peer -1: side skipped).
struct ExchangeRecord {
  int round = 0;  // the calling rank's 0-based exchange count
  int rank = -1;
  int send_to = -1;
  std::size_t send_bytes = 0;
  int recv_from = -1;
  std::size_t recv_bytes = 0;
  MsgType type = MsgType::kRing;
};

class InProcessNetwork {
 public:
  explicit InProcessNetwork(int nranks,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~InProcessNetwork();
  InProcessNetwork(const InProcessNetwork&) = delete;
  InProcessNetwork& operator=(const InProcessNetwork&) = delete;

  int nranks() const { return static_cast<int>(endpoints_.size()); }
  // Rank `rank`'s transport; use it from one thread at a time.
  PeerExchange& endpoint(int rank);
  // Rank `rank`'s calls, in order. Read after that rank's thread is joined.
  const std::vector<ExchangeRecord>& records(int rank) const;
  // Messages posted but never taken (0 after a correct schedule).
  std::size_t undelivered() const;

 private:
  class Endpoint;
  struct Message {
    const uint8_t* data;  // the sender's buffer, valid until taken or retracted
    std::size_t size;
    uint64_t seq;
  };
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable changed;  // a message posted or taken
    std::deque<Message> messages;
    uint64_t posted = 0;
    uint64_t taken = 0;
  };
  Mailbox& mailbox(int from, int to, MsgType type);

  std::chrono::milliseconds timeout_;
  mutable std::mutex boxes_mutex_;
  std::map<std::tuple<int, int, uint32_t>, std::unique_ptr<Mailbox>> boxes_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
};

}  // namespace nccom::bootstrap::testing
