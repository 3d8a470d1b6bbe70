// Moving verified data through a comm: a Plan lists the messages one end
// posts, in the order it posts them, and run_plan drives them to completion
// (both ends run it, each with its own list, concurrently).
//
// Every message carries a key; its bytes are a pattern derived from the
// key, so the receiver can tell which message landed where (tag matching)
// and whether a byte is wrong. Receive buffers are followed by guard bytes
// that must stay untouched.
#pragma once

#include "guard.h"
#include "net/net.h"
#include "outcome.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nccom::plugin_check {

struct Message {
  int size = 0;  // bytes sent (the receiver expects exactly this many)
  int tag = 0;
  int capacity = 0;  // receive buffer size (>= size); the sender uses size
  uint32_t key = 0;  // selects the data pattern
};

struct Plan {
  std::vector<Message> messages;       // in posting order
  int window = NCCL_NET_MAX_REQUESTS;  // at most this many outstanding
  bool flush = false;                  // receiver: iflush each completed receive
};

enum class Role { kSend, kRecv };

struct RunStats {
  int back_pressure = 0;  // NULL requests that were retried
};

// Posts every message of `plan` on `comm` (isend or irecv), keeping up to
// plan.window outstanding and retrying NULL requests, then tests them to
// completion and verifies sizes, data and guard bytes. Everything it
// registered is deregistered on success; after a failure that may leave
// requests in flight, the buffers are deliberately never freed.
Expected<RunStats> run_plan(net::Net& net, void* comm, Role role, const Plan& plan,
                            const Deadline& deadline);

// For the peer protocol: "<window> <flush> <n> size:tag:capacity:key ...".
std::string encode(const Plan& plan);
Expected<Plan> decode(const std::string& text);

// The pattern of message `key`, for checks that move data by other means.
void fill_pattern(unsigned char* data, std::size_t size, uint32_t key);
// The first byte that differs from the pattern, or -1.
long long first_mismatch(const unsigned char* data, std::size_t size, uint32_t key);

// Page-aligned host memory that a plugin may still hold: leak() it when a
// request that points into it could not be completed.
class Arena {
 public:
  explicit Arena(std::size_t size);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  void leak();

 private:
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
  bool leaked_ = false;
};

}  // namespace nccom::plugin_check
