#include "transfer.h"

#include "net_ops.h"

#include <nccom/transport_plugin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

namespace nccom::plugin_check {
namespace {

constexpr std::size_t kGuard = 64;  // guard bytes after each receive buffer
constexpr unsigned char kGuardByte = 0xA5;
constexpr std::size_t kPage = 4096;

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t pattern_word(uint32_t key, std::size_t index) {
  return mix((static_cast<uint64_t>(key) << 40) ^ index);
}

std::string describe(Role role, std::size_t index, const Message& m) {
  return std::string(role == Role::kSend ? "send #" : "receive #") + std::to_string(index) + " (" +
         std::to_string(m.size) + " bytes, tag " + std::to_string(m.tag) + ")";
}

// One message in flight; the arrays irecv/iflush take stay alive here.
struct Slot {
  void* data = nullptr;
  int size = 0;
  int tag = 0;
  void* mhandle = nullptr;
  void* request = nullptr;
  uint64_t tests = 0;  // test calls that answered "not done"
  std::chrono::steady_clock::time_point posted;
};

// A received size left unwritten is the plugin's right in NVIDIA's layouts
// (NCCL read it only to size a GPU flush), not in the Neuron ones.
Expected<> verify_receive(const Slot& slot, const Message& m, std::size_t index, int reported,
                          net::Layout layout) {
  const std::string what = describe(Role::kRecv, index, m);
  if (reported == NCCOM_NET_SIZE_UNREPORTED) {
    if (layout != net::Layout::kNvidia) {
      return fail("test of " + what +
                  " left the received size unwritten; a plugin of the Neuron layouts must "
                  "report it (nccom needs it for receives whose length the sender sets)");
    }
  } else if (reported != m.size) {
    return fail("test of " + what + " reported " + std::to_string(reported) +
                " bytes; the sender sent " + std::to_string(m.size));
  }
  const auto* bytes = static_cast<const unsigned char*>(slot.data);
  const long long bad = first_mismatch(bytes, static_cast<std::size_t>(m.size), m.key);
  if (bad >= 0) {
    return fail(what + ": received data differs from what was sent, first at byte " +
                std::to_string(bad));
  }
  for (std::size_t i = 0; i < kGuard; ++i) {
    if (bytes[m.capacity + i] != kGuardByte) {
      return fail(what + ": the plugin wrote past the end of the " + std::to_string(m.capacity) +
                  "-byte receive buffer (byte +" + std::to_string(i) + " after it changed)");
    }
  }
  return {};
}

Expected<> flush(net::Net& net, void* comm, Slot& slot, const Deadline& deadline,
                 const std::string& what) {
  void* request = nullptr;
  const ncclResult_t rc = net.iflush(comm, 1, &slot.data, &slot.size, &slot.mhandle, &request);
  if (rc != ncclSuccess) return nccl_failure("iflush after " + what, rc);
  if (request == nullptr) return {};  // nothing to flush
  auto waited = wait_request(net, request, deadline, "iflush after " + what);
  if (!waited) return waited.take_error();
  return {};
}

}  // namespace

Arena::Arena(std::size_t size) : size_((size + kPage - 1) / kPage * kPage) {
  if (size_ == 0) size_ = kPage;
  data_ = static_cast<unsigned char*>(std::aligned_alloc(kPage, size_));
  if (data_ == nullptr) std::abort();  // the tool cannot go on without memory
}

// Buffers a plugin may still write into are kept here (reachable, so leak
// checkers stay quiet) until the process ends.
void Arena::leak() {
  static std::mutex mutex;
  static auto* kept = new std::vector<unsigned char*>;  // never destroyed
  if (leaked_) return;
  leaked_ = true;
  std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(data_);
}

Arena::~Arena() {
  if (!leaked_) std::free(data_);
}

void fill_pattern(unsigned char* data, std::size_t size, uint32_t key) {
  for (std::size_t w = 0; w * 8 < size; ++w) {
    const uint64_t word = pattern_word(key, w);
    std::memcpy(data + w * 8, &word, std::min<std::size_t>(8, size - w * 8));
  }
}

long long first_mismatch(const unsigned char* data, std::size_t size, uint32_t key) {
  for (std::size_t w = 0; w * 8 < size; ++w) {
    const uint64_t word = pattern_word(key, w);
    const std::size_t n = std::min<std::size_t>(8, size - w * 8);
    if (std::memcmp(data + w * 8, &word, n) == 0) continue;
    const auto* expected = reinterpret_cast<const unsigned char*>(&word);
    for (std::size_t i = 0; i < n; ++i) {
      if (data[w * 8 + i] != expected[i]) return static_cast<long long>(w * 8 + i);
    }
  }
  return -1;
}

namespace {

// The bytes each message takes in the arena: its larger side, a guard, a
// cache line's alignment.
std::size_t arena_bytes(const Plan& plan, std::vector<std::size_t>& offsets) {
  std::size_t total = 0;
  offsets.resize(plan.messages.size());
  for (std::size_t i = 0; i < plan.messages.size(); ++i) {
    offsets[i] = total;
    const Message& m = plan.messages[i];
    total += (static_cast<std::size_t>(std::max(m.size, m.capacity)) + kGuard + 63) / 64 * 64;
  }
  return total;
}

// One side of a plan on one comm: its messages posted within the window,
// tested oldest first, checked, and bounded by the deadline.
class PlanRun {
 public:
  PlanRun(net::Net& net, void* comm, Role role, const Plan& plan, const Deadline& deadline)
      : net_(net),
        comm_(comm),
        role_(role),
        plan_(plan),
        deadline_(deadline),
        arena_(arena_bytes(plan, offsets_)),
        slots_(plan.messages.size()) {}

  Expected<RunStats> run() {
    if (auto ready = prepare(); !ready) return ready.take_error();
    const std::size_t n = slots_.size();
    while (completed_ < n) {
      if (auto posted = post(); !posted) return abandon(posted.take_error());
      if (auto tested = test_oldest(); !tested) return abandon(tested.take_error());
      if (completed_ < n && deadline_.expired()) return abandon(stalled());
      std::this_thread::yield();
    }
    auto dereg = expect_ok(net_.dereg_mr(comm_, mhandle_), "deregMr");
    if (!dereg) return dereg.take_error();
    return stats_;
  }

 private:
  // The buffers: send data in the pattern, receive room behind guard bytes,
  // one registration for all.
  Expected<bool> prepare() {
    std::memset(arena_.data(), kGuardByte, arena_.size());
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const Message& m = plan_.messages[i];
      slots_[i].data = arena_.data() + offsets_[i];
      slots_[i].size = role_ == Role::kSend ? m.size : m.capacity;
      slots_[i].tag = m.tag;
      if (role_ == Role::kSend) fill_pattern(arena_.data() + offsets_[i], m.size, m.key);
    }
    auto reg = expect_ok(net_.reg_mr(comm_, arena_.data(), arena_.size(), NCCL_PTR_HOST, &mhandle_),
                         "regMr of " + std::to_string(arena_.size()) + " bytes");
    if (!reg) return reg.take_error();
    for (Slot& s : slots_) s.mhandle = mhandle_;
    return true;
  }

  // Posts messages while the window has room and the plugin takes them.
  Expected<bool> post() {
    while (next_ < slots_.size() && outstanding_.size() < static_cast<std::size_t>(plan_.window)) {
      Slot& s = slots_[next_];
      const ncclResult_t rc =
          role_ == Role::kSend
              ? net_.isend(comm_, s.data, s.size, s.tag, s.mhandle, &s.request)
              : net_.irecv(comm_, 1, &s.data, &s.size, &s.tag, &s.mhandle, &s.request);
      if (rc != ncclSuccess) {
        return nccl_failure(std::string(role_ == Role::kSend ? "isend" : "irecv") + " of " +
                                describe(role_, next_, plan_.messages[next_]),
                            rc);
      }
      if (s.request == nullptr) {  // back-pressure: retry after testing
        ++stats_.back_pressure;
        break;
      }
      s.posted = std::chrono::steady_clock::now();
      outstanding_.push_back(next_++);
    }
    return true;
  }

  // Oldest first, stopping at the first that is not done: the order NCCL's
  // proxy and nccom's test in, which plugins derived from NCCL's socket
  // code rely on.
  Expected<bool> test_oldest() {
    for (auto it = outstanding_.begin(); it != outstanding_.end();) {
      Slot& s = slots_[*it];
      const Message& m = plan_.messages[*it];
      int done = 0, size = NCCOM_NET_SIZE_UNREPORTED;
      const ncclResult_t rc = net_.test(s.request, &done, &size);
      if (rc != ncclSuccess) {
        Failure f = nccl_failure("test of " + describe(role_, *it, m), rc);
        outstanding_.erase(it);  // a failed test releases its request
        return f;
      }
      if (!done) {
        ++s.tests;
        break;
      }
      if (role_ == Role::kRecv) {
        auto ok = verify_receive(s, m, *it, size, net_.info().layout);
        if (ok && plan_.flush) ok = flush(net_, comm_, s, deadline_, describe(role_, *it, m));
        if (!ok) return ok.take_error();
      } else if (size != NCCOM_NET_SIZE_UNREPORTED && size != m.size) {
        return fail("test of " + describe(role_, *it, m) + " reported " + std::to_string(size) +
                    " bytes sent");
      }
      ++completed_;
      it = outstanding_.erase(it);
    }
    return true;
  }

  // Past the deadline: how many are left, and the oldest one's story (a
  // request that test keeps answering "not done" for is named as such).
  Failure stalled() const {
    const std::size_t n = slots_.size();
    const std::size_t oldest = outstanding_.empty() ? next_ : outstanding_.front();
    std::string tested;
    if (!outstanding_.empty()) {
      const Slot& s = slots_[oldest];
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - s.posted);
      tested = ", posted " + std::to_string(waited.count()) + " ms ago and tested " +
               std::to_string(s.tests) + " times, never done";
    }
    return timeout(std::to_string(n - completed_) + " of " + std::to_string(n) +
                   (role_ == Role::kSend ? " sends" : " receives") +
                   " to complete (oldest: " + describe(role_, oldest, plan_.messages[oldest]) +
                   tested + "; " + std::to_string(n - next_) + " not yet accepted by the plugin)");
  }

  // After a failure: with nothing left in flight everything is released as
  // usual; otherwise the requests may still point into the buffers, which
  // are kept, registration and all.
  Expected<RunStats> abandon(Failure f) {
    if (outstanding_.empty()) {
      (void)net_.dereg_mr(comm_, mhandle_);
    } else {
      arena_.leak();
    }
    return f;
  }

  net::Net& net_;
  void* comm_;
  Role role_;
  const Plan& plan_;
  const Deadline& deadline_;
  std::vector<std::size_t> offsets_;  // before arena_: its initializer fills them
  Arena arena_;
  std::vector<Slot> slots_;
  void* mhandle_ = nullptr;
  RunStats stats_;
  std::vector<std::size_t> outstanding_;
  std::size_t next_ = 0, completed_ = 0;
};

}  // namespace

Expected<RunStats> run_plan(net::Net& net, void* comm, Role role, const Plan& plan,
                            const Deadline& deadline) {
  return PlanRun(net, comm, role, plan, deadline).run();
}

std::string encode(const Plan& plan) {
  std::ostringstream out;
  out << plan.window << ' ' << (plan.flush ? 1 : 0) << ' ' << plan.messages.size();
  for (const Message& m : plan.messages) {
    out << ' ' << m.size << ':' << m.tag << ':' << m.capacity << ':' << m.key;
  }
  return out.str();
}

Expected<Plan> decode(const std::string& text) {
  std::istringstream in(text);
  Plan plan;
  int flush = 0;
  std::size_t n = 0;
  if (!(in >> plan.window >> flush >> n) || plan.window < 1) return fail("bad plan: " + text);
  plan.flush = flush != 0;
  for (std::size_t i = 0; i < n; ++i) {
    Message m;
    char c1 = 0, c2 = 0, c3 = 0;
    if (!(in >> m.size >> c1 >> m.tag >> c2 >> m.capacity >> c3 >> m.key) || c1 != ':' ||
        c2 != ':' || c3 != ':' || m.size < 0 || m.capacity < 0) {
      return fail("bad plan: " + text);
    }
    plan.messages.push_back(m);
  }
  return plan;
}

}  // namespace nccom::plugin_check
