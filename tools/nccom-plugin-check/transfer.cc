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

Expected<RunStats> run_plan(net::Net& net, void* comm, Role role, const Plan& plan,
                            const Deadline& deadline) {
  const std::size_t n = plan.messages.size();
  std::vector<std::size_t> offsets(n);
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    offsets[i] = total;
    const Message& m = plan.messages[i];
    total += (static_cast<std::size_t>(std::max(m.size, m.capacity)) + kGuard + 63) / 64 * 64;
  }
  Arena arena(total);
  std::memset(arena.data(), kGuardByte, arena.size());
  std::vector<Slot> slots(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Message& m = plan.messages[i];
    slots[i].data = arena.data() + offsets[i];
    slots[i].size = role == Role::kSend ? m.size : m.capacity;
    slots[i].tag = m.tag;
    if (role == Role::kSend) fill_pattern(arena.data() + offsets[i], m.size, m.key);
  }
  void* mhandle = nullptr;
  auto reg = expect_ok(net.reg_mr(comm, arena.data(), arena.size(), NCCL_PTR_HOST, &mhandle),
                       "regMr of " + std::to_string(arena.size()) + " bytes");
  if (!reg) return reg.take_error();
  for (Slot& s : slots) s.mhandle = mhandle;

  RunStats stats;
  std::vector<std::size_t> outstanding;
  std::size_t next = 0, completed = 0;
  // After a failure: with nothing left in flight (a failed test releases
  // its request) everything is released as usual; otherwise the requests
  // may still point into the buffers, which are kept, registration and all.
  auto abandon = [&](Failure f) -> Expected<RunStats> {
    if (outstanding.empty()) {
      (void)net.dereg_mr(comm, mhandle);
    } else {
      arena.leak();
    }
    return f;
  };
  while (completed < n) {
    while (next < n && outstanding.size() < static_cast<std::size_t>(plan.window)) {
      Slot& s = slots[next];
      const ncclResult_t rc =
          role == Role::kSend
              ? net.isend(comm, s.data, s.size, s.tag, s.mhandle, &s.request)
              : net.irecv(comm, 1, &s.data, &s.size, &s.tag, &s.mhandle, &s.request);
      if (rc != ncclSuccess) {
        return abandon(nccl_failure(std::string(role == Role::kSend ? "isend" : "irecv") + " of " +
                                        describe(role, next, plan.messages[next]),
                                    rc));
      }
      if (s.request == nullptr) {  // back-pressure: retry after testing
        ++stats.back_pressure;
        break;
      }
      s.posted = std::chrono::steady_clock::now();
      outstanding.push_back(next++);
    }
    // Oldest first, stopping at the first that is not done: the order NCCL's
    // proxy and nccom's test in, which plugins derived from NCCL's socket
    // code rely on.
    for (auto it = outstanding.begin(); it != outstanding.end();) {
      Slot& s = slots[*it];
      const Message& m = plan.messages[*it];
      int done = 0, size = NCCOM_NET_SIZE_UNREPORTED;
      const ncclResult_t rc = net.test(s.request, &done, &size);
      if (rc != ncclSuccess) {
        Failure f = nccl_failure("test of " + describe(role, *it, m), rc);
        outstanding.erase(it);
        return abandon(std::move(f));
      }
      if (!done) {
        ++s.tests;
        break;
      }
      if (role == Role::kRecv) {
        auto ok = verify_receive(s, m, *it, size, net.info().layout);
        if (ok && plan.flush) ok = flush(net, comm, s, deadline, describe(role, *it, m));
        if (!ok) return abandon(ok.take_error());
      } else if (size != NCCOM_NET_SIZE_UNREPORTED && size != m.size) {
        return abandon(fail("test of " + describe(role, *it, m) + " reported " +
                            std::to_string(size) + " bytes sent"));
      }
      ++completed;
      it = outstanding.erase(it);
    }
    if (completed < n && deadline.expired()) {
      const std::size_t oldest = outstanding.empty() ? next : outstanding.front();
      std::string tested;
      if (!outstanding.empty()) {
        // A request test keeps answering "not done" for: the plugin's
        // never-completing request, named as such.
        const Slot& s = slots[oldest];
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - s.posted);
        tested = ", posted " + std::to_string(waited.count()) + " ms ago and tested " +
                 std::to_string(s.tests) + " times, never done";
      }
      return abandon(
          timeout(std::to_string(n - completed) + " of " + std::to_string(n) +
                  (role == Role::kSend ? " sends" : " receives") +
                  " to complete (oldest: " + describe(role, oldest, plan.messages[oldest]) +
                  tested + "; " + std::to_string(n - next) + " not yet accepted by the plugin)"));
    }
    std::this_thread::yield();
  }
  auto dereg = expect_ok(net.dereg_mr(comm, mhandle), "deregMr");
  if (!dereg) return dereg.take_error();
  return stats;
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
