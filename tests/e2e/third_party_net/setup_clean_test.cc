// The host's connect/accept helpers (net::SetupCalls) over the real
// third-party v4 plugin, whose connect and accept block: after many
// connections — collected, or given up on while the accept was still inside
// the plugin — no helper thread and no descriptor is left.
#include "build_paths.h"
#include "child_process.h"
#include "net/bind.h"
#include "net/selection.h"
#include "net/setup_calls.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace nccom::net {
namespace {

using nccom_test::open_fd_count;
using nccom_test::thread_count;

// Calls `step` until `done()` or 10 s.
template <class Step, class Done>
bool drive(Step step, Done done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < end) step();
  return done();
}

TEST(ThirdPartyNetSetupCalls, BlockingPluginConnectionsLeaveNoThreadOrDescriptor) {
  auto bound = open_and_bind(std::string(TPN_PLUGIN_DIR) + "/libtpn-neuron_v4.so", Layout::kNeuron,
                             {}, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  Net& net = **bound;
  ASSERT_EQ(net.init(nullptr), ncclSuccess);
  SetupCalls& calls = net.setup_calls();
  const int threads = thread_count();
  const int fds = open_fd_count();

  for (int round = 0; round < 20; ++round) {
    unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listen_comm = nullptr;
    ASSERT_EQ(net.listen(0, handle, &listen_comm), ncclSuccess);
    void* send_comm = nullptr;
    void* recv_comm = nullptr;
    if (round % 2 == 0) {
      // Both ends collected, then closed.
      ASSERT_TRUE(drive(
          [&] {
            if (send_comm == nullptr) {
              ASSERT_EQ(calls.connect(0, handle, &send_comm), ncclSuccess);
            }
            if (recv_comm == nullptr) {
              ASSERT_EQ(calls.accept(listen_comm, &recv_comm), ncclSuccess);
            }
          },
          [&] { return send_comm != nullptr && recv_comm != nullptr; }));
      EXPECT_EQ(net.close_recv(recv_comm), ncclSuccess);
      EXPECT_EQ(calls.close_listen(listen_comm), ncclSuccess);
    } else {
      // The accept is inside the plugin when its caller gives up and closes
      // the listener; the connect that then arrives lets it return, and the
      // helper closes what it made.
      ASSERT_EQ(calls.accept(listen_comm, &recv_comm), ncclSuccess);
      ASSERT_EQ(recv_comm, nullptr);
      ASSERT_TRUE(calls.running(listen_comm));
      EXPECT_EQ(calls.close_listen(listen_comm), ncclSuccess);
      ASSERT_TRUE(drive([&] { ASSERT_EQ(calls.connect(0, handle, &send_comm), ncclSuccess); },
                        [&] { return send_comm != nullptr; }));
    }
    EXPECT_EQ(net.close_send(send_comm), ncclSuccess);
  }
  ASSERT_TRUE(drive([] { std::this_thread::yield(); }, [&] { return calls.helpers() == 0; }));
  EXPECT_TRUE(drive([] { std::this_thread::yield(); }, [&] { return thread_count() == threads; }))
      << thread_count() << " threads, " << threads << " before";
  EXPECT_TRUE(drive([] { std::this_thread::yield(); }, [&] { return open_fd_count() == fds; }))
      << open_fd_count() << " descriptors, " << fds << " before";
  retire(std::move(bound).value());  // kept loaded, as the host keeps an initialised plugin
}

}  // namespace
}  // namespace nccom::net
