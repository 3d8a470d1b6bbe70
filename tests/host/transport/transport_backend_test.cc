// Transport plugins as the host sees them: vtable checks at bind, the
// connection handshake, and the scheduler ticking a plugin's ops through
// the adapter — real shared objects, loaded by the plugin loader.
#include "transport/transport_backend.h"

#include "block_builder.h"
#include "build_paths.h"
#include "plugin/plugin_loader.h"
#include "proxy/scheduler.h"

#include <gtest/gtest.h>

#include <string>

namespace nccom::transport {
namespace {

nccom_host_api_t host_api() {
  nccom_host_api_t h{};
  h.struct_size = sizeof h;
  h.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  return h;
}

std::unique_ptr<plugin::LoadedPlugin> load(const std::string& variant) {
  auto p = plugin::load_plugin("xport_" + variant, NCCOM_PLUGIN_KIND_TRANSPORT, host_api(),
                               {XPORT_PLUGIN_DIR});
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? std::move(*p) : nullptr;
}

int& counter(plugin::LoadedPlugin& p, const char* name) {
  return *static_cast<int*>(p.library().symbol(name));
}

struct TwoRanks {
  nccom_transport_peer_t peers[2]{};
  nccom_transport_comm_t comm{};
  TwoRanks() {
    for (int r = 0; r < 2; ++r) {
      peers[r].rank = r;
      peers[r].host_hash = 0x1000 + r;
    }
    comm.struct_size = sizeof comm;
    comm.rank = 0;
    comm.n_ranks = 2;
    comm.peers = peers;
  }
};

TEST(TransportHost, ConnectorsHandshakeAndAreReleased) {
  auto p = load("default");
  ASSERT_NE(p, nullptr);
  auto b = TransportBackend::bind(*p);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_TRUE(b->has_proxy());
  TwoRanks world;
  auto ok = b->can_connect(world.comm, world.peers[0], world.peers[1]);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(*ok);
  {
    auto mine = b->setup(world.comm, NCCOM_TRANSPORT_SEND, 3, world.peers[1]);
    ASSERT_TRUE(mine.ok()) << mine.error().message;
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(mine->blob.data())), "rank 0 channel 3");
    EXPECT_EQ(counter(*p, "xport_test_live_connectors"), 1);
    std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES> theirs{};
    std::snprintf(reinterpret_cast<char*>(theirs.data()), theirs.size(), "rank 1 channel 3");
    auto step = b->connect_step(*mine->connector, theirs);
    ASSERT_TRUE(step.ok());
    EXPECT_FALSE(*step);  // in progress
    step = b->connect_step(*mine->connector, theirs);
    ASSERT_TRUE(step.ok());
    EXPECT_TRUE(*step);
  }
  EXPECT_EQ(counter(*p, "xport_test_live_connectors"), 0);
}

TEST(TransportHost, ConnectionErrorsNameThePluginAndTheReason) {
  auto p = load("default");
  ASSERT_NE(p, nullptr);
  auto b = TransportBackend::bind(*p);
  ASSERT_TRUE(b.ok());
  TwoRanks world;
  auto self = b->setup(world.comm, NCCOM_TRANSPORT_RECV, 0, world.peers[0]);
  ASSERT_FALSE(self.ok());
  EXPECT_NE(self.error().message.find("transport plugin xport_test ("), std::string::npos);
  EXPECT_NE(
      self.error().message.find("setup returned INVALID_ARGUMENT: cannot connect rank 0 to itself"),
      std::string::npos)
      << self.error().message;
  EXPECT_EQ(self.error().status, NRT_INVALID);

  auto mine = b->setup(world.comm, NCCOM_TRANSPORT_RECV, 1, world.peers[1]);
  ASSERT_TRUE(mine.ok());
  std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES> garbage{};
  garbage.fill('x');  // not even NUL-terminated
  auto step = b->connect_step(*mine->connector, garbage);
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.error().message.find("is not from rank 1"), std::string::npos)
      << step.error().message;
}

TEST(TransportHost, BadVtablesAreRefusedAtBind) {
  struct Case {
    const char* variant;
    const char* expected;
  };
  for (const Case& c : {Case{"half_ops", "must be all set or all NULL; 3 of 5 are set"},
                        Case{"null_connect", "mandatory slot connect is NULL"}}) {
    auto p = load(c.variant);
    ASSERT_NE(p, nullptr);
    auto b = TransportBackend::bind(*p);
    ASSERT_FALSE(b.ok()) << c.variant;
    EXPECT_NE(b.error().message.find(c.expected), std::string::npos) << b.error().message;
  }
}

TEST(TransportHost, AProxyFreeTransportHasNoProxyTransport) {
  auto p = load("no_proxy");
  ASSERT_NE(p, nullptr);
  auto b = TransportBackend::bind(*p);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_FALSE(b->has_proxy());
  TwoRanks world;
  EXPECT_EQ(b->proxy_transport(world.comm), nullptr);
}

TEST(TransportHost, TheSchedulerTicksThePluginsOpsThroughExecutions) {
  auto p = load("default");
  ASSERT_NE(p, nullptr);
  auto b = TransportBackend::bind(*p);
  ASSERT_TRUE(b.ok());
  TwoRanks world;
  auto xport = b->proxy_transport(world.comm);
  ASSERT_NE(xport, nullptr);
  counter(*p, "xport_test_ticks_per_execution") = 3;
  proxy::testing::BlockBuilder block;
  block.op(2, 2).end();
  {
    proxy::Scheduler sched(*xport, proxy::SchedulerSettings{});
    ASSERT_TRUE(sched.start(0, 1, block.fifos()).ok());
    EXPECT_EQ(counter(*p, "xport_test_live_ops"), 2);
    for (int execution = 0; execution < 4; ++execution) {
      int ticks = 0;
      for (;;) {
        auto r = sched.progress(0, 1);
        ASSERT_TRUE(r.ok()) << r.error().message;
        ++ticks;
        if (r->done) break;
        ASSERT_LT(ticks, 10);
      }
      EXPECT_EQ(ticks, 3) << "execution " << execution;
    }
  }
  EXPECT_EQ(counter(*p, "xport_test_live_ops"), 0);
}

TEST(TransportHost, AnOpFailureBecomesAProxyFailureNamingTheOp) {
  auto p = load("fail_op");
  ASSERT_NE(p, nullptr);
  auto b = TransportBackend::bind(*p);
  ASSERT_TRUE(b.ok());
  TwoRanks world;
  auto xport = b->proxy_transport(world.comm);
  proxy::testing::BlockBuilder block;
  block.op(1, 1).end();
  proxy::Scheduler sched(*xport, proxy::SchedulerSettings{});
  ASSERT_TRUE(sched.start(2, 5, block.fifos()).ok());
  ASSERT_TRUE(sched.progress(2, 5).ok());
  auto r = sched.progress(2, 5);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, NRT_NETWORK_PROXY_FAILURE);
  EXPECT_EQ(r.error().message.rfind("peer rank 1 closed the connection (descriptor 2) "
                                    "(xport_test send op; stream 2, basic block 5)",
                                    0),
            0u)
      << r.error().message;
}

// A refused op fails the block's start with the plugin's reason first, the
// op after it, and frees the op already built (all or nothing).
TEST(TransportHost, ARefusedOpFailsTheStartNamingTheOp) {
  auto p = load("fail_create");
  ASSERT_NE(p, nullptr);
  auto b = TransportBackend::bind(*p);
  ASSERT_TRUE(b.ok());
  TwoRanks world;
  auto xport = b->proxy_transport(world.comm);
  proxy::testing::BlockBuilder block;
  block.op(1, 1).end();
  proxy::Scheduler sched(*xport, proxy::SchedulerSettings{});
  const Status s = sched.start(2, 5, block.fifos());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().status, NRT_INVALID);
  EXPECT_EQ(s.error().message.rfind("create_op failed: a fifo of ", 0), 0u) << s.error().message;
  EXPECT_NE(s.error().message.find(" entries holds no receive slot (xport_test recv op; stream 2, "
                                   "basic block 5)"),
            std::string::npos)
      << s.error().message;
  EXPECT_EQ(counter(*p, "xport_test_live_ops"), 0);
}

}  // namespace
}  // namespace nccom::transport
