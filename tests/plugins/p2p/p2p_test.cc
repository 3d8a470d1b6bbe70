// The P2P transport as the host uses it: libnccom-p2p.so loaded by the plugin
// loader, bound by TransportBackend. Reachability by locality, the 80-byte
// connect info (checked field by field against the original's p2pConnectInfo),
// the handshake in both modes with its channel line, and every refusal of a
// blob that does not come from the expected peer.
#include "build_paths.h"
#include "connect_info.h"
#include "plugin/plugin_loader.h"
#include "transport/link_exchange.h"
#include "transport/selection.h"
#include "transport/transport_backend.h"

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace nccom::transport {
namespace {

std::mutex g_log_mutex;
std::vector<std::string> g_log;

void capture(nccom_log_level_t, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::lock_guard lock(g_log_mutex);
  g_log.emplace_back(buf);
}

nccom_host_api_t host_api() {
  nccom_host_api_t h{};
  h.struct_size = sizeof h;
  h.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  h.log = &capture;
  return h;
}

class P2pTransport : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = plugin::load_plugin("p2p", NCCOM_PLUGIN_KIND_TRANSPORT, host_api(), {P2P_PLUGIN_DIR});
    ASSERT_TRUE(p.ok()) << p.error().message;
    plugin_ = std::move(*p);
    auto b = TransportBackend::bind(*plugin_);
    ASSERT_TRUE(b.ok()) << b.error().message;
    backend_.emplace(*b);
    // Ranks 0,1 on server A (0 and 1 in one process), rank 2 on server B,
    // rank 3 on server A in another pod node.
    const uint64_t host[4] = {0xA, 0xA, 0xB, 0xA};
    const uint64_t pid[4] = {0x100, 0x100, 0x300, 0x400};
    for (int r = 0; r < 4; ++r) {
      peers_[r].rank = r;
      peers_[r].device = r;
      peers_[r].host_hash = host[r];
      peers_[r].pid_hash = pid[r];
      peers_[r].pod_node_id = r == 3 ? 1 : 0;
      peers_[r].bus_id = 0x10 + r;
      comm_[r].struct_size = sizeof comm_[r];
      comm_[r].rank = r;
      comm_[r].n_ranks = 4;
      comm_[r].peers = peers_;
    }
    std::lock_guard lock(g_log_mutex);
    g_log.clear();
  }

  bool can(int a, int b) {
    auto ok = backend_->can_connect(comm_[a], peers_[a], peers_[b]);
    EXPECT_TRUE(ok.ok());
    return ok.ok() && *ok;
  }

  std::unique_ptr<plugin::LoadedPlugin> plugin_;
  std::optional<TransportBackend> backend_;
  nccom_transport_peer_t peers_[4]{};
  nccom_transport_comm_t comm_[4]{};
};

TEST_F(P2pTransport, IsProxyFree) {
  EXPECT_FALSE(backend_->has_proxy());
  EXPECT_EQ(backend_->name(), "p2p");
}

TEST_F(P2pTransport, ReachesOnlyOtherRanksOfTheSameServerAndPodNode) {
  EXPECT_TRUE(can(0, 1));
  EXPECT_TRUE(can(1, 0));
  EXPECT_FALSE(can(0, 0)) << "self";
  EXPECT_FALSE(can(0, 2)) << "another server";
  EXPECT_FALSE(can(2, 0));
  EXPECT_FALSE(can(0, 3)) << "same server, another pod node";
}

TEST_F(P2pTransport, BlobIsTheSpecConnectInfo) {
  auto s = backend_->setup(comm_[0], NCCOM_TRANSPORT_SEND, 5, peers_[1]);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const uint8_t* b = s->blob.data();
  int32_t rank = -1, read = -1;
  void* ptr = reinterpret_cast<void*>(1);
  std::memcpy(&rank, b + 0, 4);
  std::memcpy(&read, b + 4, 4);
  std::memcpy(&ptr, b + 8, 8);
  EXPECT_EQ(rank, 0);  // the sender of the blob
  EXPECT_EQ(read, 0);
  EXPECT_EQ(ptr, nullptr);
  uint64_t magic = 0, host = 0, pid = 0;
  std::memcpy(&magic, b + 16, 8);
  std::memcpy(&host, b + 16 + 16, 8);
  std::memcpy(&pid, b + 16 + 24, 8);
  EXPECT_EQ(magic, p2p::kIpcMagic);
  EXPECT_EQ(host, 0xAu);
  EXPECT_EQ(pid, 0x100u);
  for (size_t i = 80; i < NCCOM_TRANSPORT_CONNECT_BYTES; ++i) EXPECT_EQ(b[i], 0) << "byte " << i;
}

// Sets up rank a's send end and rank b's recv end on `channel`, connects both.
void handshake(const TransportBackend& t, nccom_transport_comm_t* comm,
               nccom_transport_peer_t* peers, int a, int b, int channel) {
  auto send = t.setup(comm[a], NCCOM_TRANSPORT_SEND, channel, peers[b]);
  auto recv = t.setup(comm[b], NCCOM_TRANSPORT_RECV, channel, peers[a]);
  ASSERT_TRUE(send.ok()) << send.error().message;
  ASSERT_TRUE(recv.ok()) << recv.error().message;
  auto up = t.connect_step(*send->connector, recv->blob);
  ASSERT_TRUE(up.ok()) << up.error().message;
  EXPECT_TRUE(*up);
  up = t.connect_step(*recv->connector, send->blob);
  ASSERT_TRUE(up.ok()) << up.error().message;
  EXPECT_TRUE(*up);
}

TEST_F(P2pTransport, HandshakeLogsDirectPointerInOneProcessAndIpcAcross) {
  handshake(*backend_, comm_, peers_, 0, 1, 2);  // same pid hash
  // Rank 1 and a rank 4th-like peer in another process: make rank 1's record
  // another process for the second handshake.
  peers_[1].pid_hash = 0x200;
  handshake(*backend_, comm_, peers_, 1, 0, 3);
  std::lock_guard lock(g_log_mutex);
  ASSERT_EQ(g_log.size(), 2u) << "one line per send end";
  EXPECT_EQ(g_log[0], "Channel 02 : 0[10] -> 1[11] via P2P/direct pointer");
  EXPECT_EQ(g_log[1], "Channel 03 : 1[11] -> 0[10] via P2P/IPC");
}

TEST_F(P2pTransport, RefusesBlobsNotFromTheExpectedPeer) {
  auto send = backend_->setup(comm_[0], NCCOM_TRANSPORT_SEND, 1, peers_[1]);
  ASSERT_TRUE(send.ok());
  auto expect_refused = [&](const Blob& blob, const std::string& words) {
    auto r = backend_->connect_step(*send->connector, blob);
    ASSERT_FALSE(r.ok()) << words;
    EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
  };
  auto good = backend_->setup(comm_[1], NCCOM_TRANSPORT_RECV, 1, peers_[0]);
  ASSERT_TRUE(good.ok());
  Blob b = good->blob;
  b[16] ^= 1;
  expect_refused(b, "not a P2P connect info");
  b = good->blob;
  b[100] = 7;
  expect_refused(b, "byte 100 beyond the 80-byte connect info");
  auto other_channel = backend_->setup(comm_[1], NCCOM_TRANSPORT_RECV, 4, peers_[0]);
  expect_refused(other_channel->blob, "written for channel 4");
  auto same_side = backend_->setup(comm_[1], NCCOM_TRANSPORT_SEND, 1, peers_[0]);
  expect_refused(same_side->blob, "(the opposite side)");
  {
    // A connector whose record of rank 1 names another process than the blob.
    nccom_transport_peer_t stale = peers_[1];
    stale.pid_hash = 0x999;
    auto other = backend_->setup(comm_[0], NCCOM_TRANSPORT_SEND, 1, stale);
    ASSERT_TRUE(other.ok());
    auto r = backend_->connect_step(*other->connector, good->blob);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("differs from the peer's record"), std::string::npos)
        << r.error().message;
  }
  // After all refusals the right blob still connects.
  auto up = backend_->connect_step(*send->connector, good->blob);
  ASSERT_TRUE(up.ok()) << up.error().message;
  EXPECT_TRUE(*up);
}

TEST_F(P2pTransport, SetupRefusesAPeerItCannotReach) {
  auto s = backend_->setup(comm_[0], NCCOM_TRANSPORT_SEND, 0, peers_[2]);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("not on this server"), std::string::npos) << s.error().message;
  s = backend_->setup(comm_[0], NCCOM_TRANSPORT_SEND, 0, peers_[0]);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("not self 0"), std::string::npos) << s.error().message;
}

TEST_F(P2pTransport, HasNoMemoryRegistration) {
  auto s = backend_->setup(comm_[0], NCCOM_TRANSPORT_SEND, 0, peers_[1]);
  ASSERT_TRUE(s.ok());
  auto mh = backend_->reg_mr(*s->connector, nullptr, 0, 1);
  ASSERT_FALSE(mh.ok());
  EXPECT_NE(mh.error().message.find("registers no memory"), std::string::npos);
}

// The host's P2P policy: NCCL_P2P_DISABLE=1 keeps every pair off P2P (the
// selection falls through to the next transport); NCCL_P2P_LEVEL=LOC keeps
// two devices apart but not two ranks of one device.
TEST_F(P2pTransport, HostPolicyGatesTheSelection) {
  std::vector<const TransportBackend*> list{&*backend_};
  auto open = P2pPolicy::from_text("", "");
  ASSERT_TRUE(open.ok());
  auto chosen = select_transport(list, *open, comm_[0], peers_[0], peers_[1]);
  ASSERT_TRUE(chosen.ok()) << chosen.error().message;
  EXPECT_EQ(*chosen, &*backend_);

  auto off = P2pPolicy::from_text("1", "");
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off->disabled);
  chosen = select_transport(list, *off, comm_[0], peers_[0], peers_[1]);
  ASSERT_FALSE(chosen.ok());
  EXPECT_NE(chosen.error().message.find("No transport found between devices 0 and 1"),
            std::string::npos);
  nccom_transport_peer_t same_device = peers_[1];
  same_device.device = peers_[0].device;
  EXPECT_FALSE(off->allows(peers_[0], same_device));

  auto loc = P2pPolicy::from_text("0", "LOC");
  ASSERT_TRUE(loc.ok());
  EXPECT_FALSE(loc->disabled);
  EXPECT_FALSE(loc->allows(peers_[0], peers_[1]));
  EXPECT_TRUE(loc->allows(peers_[0], same_device));
  auto nvl = P2pPolicy::from_text("", "NVL");
  ASSERT_TRUE(nvl.ok());
  EXPECT_TRUE(nvl->allows(peers_[0], peers_[1]));

  auto bad = P2pPolicy::from_text("yes", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("NCCL_P2P_DISABLE='yes'"), std::string::npos);
}

}  // namespace
}  // namespace nccom::transport
