// net::SetupCalls: a plugin's connect/accept on helper threads. A gated Net
// stands in for a plugin whose calls block until the test opens the gate, as
// a v4 plugin's accept blocks until the peer connects.
#include "net/setup_calls.h"

#include "child_process.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace nccom::net {
namespace {

using nccom_test::thread_count;

class GatedNet : public Net {
 public:
  explicit GatedNet(std::string name)
      : Net(PluginInfo{std::move(name), 4, Layout::kNeuron, "/plugins/libgated.so", {}}, 0) {}

  // Blocks until open() (or returns at once when already open).
  void open() {
    std::lock_guard l(m_);
    open_ = true;
    cv_.notify_all();
  }
  // Waits until `what` was recorded; false after 10 s.
  bool wait_for(const std::string& what) {
    std::unique_lock l(m_);
    return cv_.wait_for(l, std::chrono::seconds(10), [&] { return has(what); });
  }
  bool recorded(const std::string& what) {
    std::lock_guard l(m_);
    return has(what);
  }
  int entered(const std::string& what) {
    std::lock_guard l(m_);
    int n = 0;
    for (const auto& c : calls_) n += c == what;
    return n;
  }

  ncclResult_t connect_result = ncclSuccess;
  char stage_byte = 'S';  // what connect writes into the handle's byte 100

  ncclResult_t connect(int dev, void* handle, void** comm) override {
    note("connect " + std::to_string(dev) + " " + std::string(static_cast<char*>(handle), 4));
    gate();
    static_cast<char*>(handle)[100] = stage_byte;
    *comm = connect_result == ncclSuccess ? static_cast<void*>(&send_comm_) : nullptr;
    return connect_result;
  }
  ncclResult_t accept(void*, void** comm) override {
    note("accept");
    gate();
    *comm = &recv_comm_;
    return ncclSuccess;
  }
  ncclResult_t close_send(void* c) override {
    return note(c == &send_comm_ ? "close_send" : "close_send ?");
  }
  ncclResult_t close_recv(void* c) override {
    return note(c == &recv_comm_ ? "close_recv" : "close_recv ?");
  }
  ncclResult_t close_listen(void*) override { return note("close_listen"); }

  ncclResult_t init(ncclDebugLogger_t) override { return ncclSuccess; }
  ncclResult_t fini() override { return ncclSuccess; }
  ncclResult_t devices(int* n) override {
    *n = 1;
    return ncclSuccess;
  }
  ncclResult_t get_properties(int, ncclNetProperties_v6_t*) override { return ncclSuccess; }
  ncclResult_t listen(int, void*, void**) override { return ncclSuccess; }
  ncclResult_t reg_mr(void*, void*, size_t, int, void**) override { return ncclSuccess; }
  ncclResult_t reg_mr_dma_buf(void*, void*, size_t, int, uint64_t, int, void**) override {
    return ncclSuccess;
  }
  ncclResult_t dereg_mr(void*, void*) override { return ncclSuccess; }
  ncclResult_t isend(void*, void*, int, int, void*, void**) override { return ncclSuccess; }
  ncclResult_t irecv(void*, int, void**, int*, int*, void**, void**) override {
    return ncclSuccess;
  }
  ncclResult_t iflush(void*, int, void**, int*, void**, void**) override { return ncclSuccess; }
  ncclResult_t test(void*, int*, int*) override { return ncclSuccess; }
  ncclResult_t get_mr_key(void*, uint64_t*) override { return ncclSuccess; }
  ncclResult_t iwrite(void*, void*, size_t, void*, uint64_t, uint64_t, void**) override {
    return ncclSuccess;
  }
  ncclResult_t iwrite_inline(void*, void*, size_t, uint64_t, uint64_t, void**) override {
    return ncclSuccess;
  }
  ncclResult_t iread(void*, void*, size_t, void*, uint64_t, uint64_t, void**) override {
    return ncclSuccess;
  }

  int send_comm_ = 0, recv_comm_ = 0;

 private:
  bool has(const std::string& what) const {
    for (const auto& c : calls_)
      if (c == what) return true;
    return false;
  }
  ncclResult_t note(std::string c) {
    std::lock_guard l(m_);
    calls_.push_back(std::move(c));
    cv_.notify_all();
    return ncclSuccess;
  }
  void gate() {
    std::unique_lock l(m_);
    cv_.wait(l, [&] { return open_; });
  }
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
  std::vector<std::string> calls_;
};

// Calls `call` until it answers a comm (each call waits at most
// SetupCalls::kCollectWait for the helper); false after 10 s.
template <class F>
bool until_comm(F call, void** comm, ncclResult_t* rc = nullptr) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < end) {
    const ncclResult_t r = call();
    if (rc != nullptr) *rc = r;
    if (r != ncclSuccess || *comm != nullptr) return true;
  }
  return false;
}

TEST(NetSetupCalls, ABlockingAcceptAnswersCallAgainUntilThePluginReturns) {
  const int threads_before = thread_count();
  GatedNet net("gated");
  SetupCalls calls(net);
  int listen_comm = 0;
  void* comm = &net;  // must be set to NULL while pending
  EXPECT_EQ(calls.accept(&listen_comm, &comm), ncclSuccess);
  EXPECT_EQ(comm, nullptr);
  ASSERT_TRUE(net.wait_for("accept"));
  // Still inside the plugin: the caller is not, and asking again neither
  // blocks nor starts a second call on the same listen comm.
  EXPECT_EQ(calls.accept(&listen_comm, &comm), ncclSuccess);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(net.entered("accept"), 1);
  const auto pending = calls.in_flight();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].call, "accept");
  EXPECT_EQ(calls.helpers(), 1u);

  net.open();
  ASSERT_TRUE(until_comm([&] { return calls.accept(&listen_comm, &comm); }, &comm));
  EXPECT_EQ(comm, &net.recv_comm_);
  EXPECT_EQ(calls.helpers(), 0u);
  EXPECT_TRUE(calls.in_flight().empty());
  EXPECT_EQ(thread_count(), threads_before);  // the helper was joined
}

TEST(NetSetupCalls, ConnectWorksOnACopyOfTheHandleAndHandsTheStageBack) {
  GatedNet net("gated");
  SetupCalls calls(net);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  std::memcpy(handle, "peer", 4);
  void* comm = nullptr;
  EXPECT_EQ(calls.connect(2, handle, &comm), ncclSuccess);
  ASSERT_TRUE(net.wait_for("connect 2 peer"));
  EXPECT_EQ(handle[100], 0);  // the helper writes its own copy
  const auto pending = calls.in_flight();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].call, "connect (device 2)");
  net.open();
  ASSERT_TRUE(until_comm([&] { return calls.connect(2, handle, &comm); }, &comm));
  EXPECT_EQ(comm, &net.send_comm_);
  EXPECT_EQ(handle[100], 'S');  // collected with the result
  EXPECT_EQ(net.entered("connect 2 peer"), 1);
}

TEST(NetSetupCalls, APluginErrorReachesTheCallerWithNoComm) {
  GatedNet net("gated");
  net.open();
  net.connect_result = ncclSystemError;
  SetupCalls calls(net);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = "errs";
  void* comm = nullptr;
  ncclResult_t rc = ncclSuccess;
  ASSERT_TRUE(until_comm([&] { return calls.connect(0, handle, &comm); }, &comm, &rc));
  EXPECT_EQ(rc, ncclSystemError);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(calls.helpers(), 0u);
}

TEST(NetSetupCalls, CloseListenDuringAnAcceptIsDeferredToTheHelper) {
  const int threads_before = thread_count();
  GatedNet net("gated");
  SetupCalls calls(net);
  int listen_comm = 0;
  void* comm = nullptr;
  EXPECT_EQ(calls.accept(&listen_comm, &comm), ncclSuccess);
  ASSERT_TRUE(net.wait_for("accept"));
  // The host gives up (its deadline passed) and closes the listener: the
  // plugin is still inside accept on it, so nothing is closed yet.
  EXPECT_EQ(calls.close_listen(&listen_comm), ncclSuccess);
  EXPECT_FALSE(net.recorded("close_listen"));
  const auto pending = calls.in_flight();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].call, "accept, given up on");
  // Accepting again on the closed listen comm is a caller's error, and
  // starts no second call inside the plugin.
  EXPECT_EQ(calls.accept(&listen_comm, &comm), ncclInvalidUsage);
  EXPECT_EQ(net.entered("accept"), 1);
  // When the plugin lets go, what it returned and then the listener close.
  net.open();
  ASSERT_TRUE(net.wait_for("close_listen"));
  EXPECT_TRUE(net.recorded("close_recv"));
  EXPECT_FALSE(net.recorded("close_recv ?"));
  // The helper has left the plugin; it ends on its own (detached).
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (calls.helpers() != 0 && std::chrono::steady_clock::now() < end) std::this_thread::yield();
  EXPECT_EQ(calls.helpers(), 0u);
  while (thread_count() != threads_before && std::chrono::steady_clock::now() < end)
    std::this_thread::yield();
  EXPECT_EQ(thread_count(), threads_before);
}

TEST(NetSetupCalls, AHandleBufferReusedForAnotherPeerStartsAfreshAndTheOldConnectIsClosed) {
  GatedNet net("gated");
  SetupCalls calls(net);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = "old1";
  void* comm = nullptr;
  EXPECT_EQ(calls.connect(0, handle, &comm), ncclSuccess);
  ASSERT_TRUE(net.wait_for("connect 0 old1"));
  // The caller gave up on that connect and the buffer now holds another
  // handle: that is a new connect, never the old one's result.
  std::memcpy(handle, "new2", 4);
  EXPECT_EQ(calls.connect(0, handle, &comm), ncclSuccess);
  ASSERT_TRUE(net.wait_for("connect 0 new2"));
  net.open();
  ASSERT_TRUE(until_comm([&] { return calls.connect(0, handle, &comm); }, &comm));
  // The abandoned one's send comm is closed by its helper.
  ASSERT_TRUE(net.wait_for("close_send"));
  EXPECT_EQ(net.entered("connect 0 old1"), 1);
  EXPECT_EQ(net.entered("connect 0 new2"), 1);
}

TEST(NetSetupCalls, AConnectResultNobodyCollectsIsClosedOnceStale) {
  GatedNet net("gated");
  SetupCalls calls(net, std::chrono::milliseconds(50));
  char abandoned[NCCL_NET_HANDLE_MAXSIZE] = "gone";
  void* comm = nullptr;
  EXPECT_EQ(calls.connect(0, abandoned, &comm), ncclSuccess);
  EXPECT_EQ(comm, nullptr);  // the plugin is still inside connect
  ASSERT_TRUE(net.wait_for("connect 0 gone"));
  // It returns a send comm, but its caller never asks again. Other connects
  // go on; once that result is older than the stale bound, one closes it.
  net.open();
  char other[NCCL_NET_HANDLE_MAXSIZE] = "next";
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!net.recorded("close_send") && std::chrono::steady_clock::now() < end) {
    void* c = nullptr;
    ASSERT_TRUE(until_comm([&] { return calls.connect(0, other, &c); }, &c));
  }
  EXPECT_TRUE(net.recorded("close_send"));
}

TEST(NetSetupCalls, InFlightCallsAreDescribedWithThePluginAndItsFile) {
  GatedNet net("gated-describe");
  int listen_comm = 0;
  void* comm = nullptr;
  SetupCalls& calls = net.setup_calls();
  EXPECT_EQ(calls.accept(&listen_comm, &comm), ncclSuccess);
  ASSERT_TRUE(net.wait_for("accept"));
  const std::string text = describe_in_flight(net);
  EXPECT_NE(
      text.find("gated-describe (Neuron ncclNet_v4) from /plugins/libgated.so has 1 call(s) that "
                "have not returned: accept for "),
      std::string::npos)
      << text;
  net.open();
  ASSERT_TRUE(until_comm([&] { return calls.accept(&listen_comm, &comm); }, &comm));
  EXPECT_EQ(describe_in_flight(net), "");
}

}  // namespace
}  // namespace nccom::net
