// NetNeuronConnector: the plugin descriptor, connection setup over the socket
// net, registration, and create_op's refusals of what it cannot walk.
#include "device.h"

#include <cstring>

namespace nn_test {
namespace {

class NetNeuronConnector : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(transport(), nullptr);
    std::string why;
    net = net_plugin("socket", &why);
    ASSERT_NE(net, nullptr) << why;
  }
  const ncclNet_v6_t* net = nullptr;
};

TEST_F(NetNeuronConnector, VtableIsComplete) {
  const nccom_transport_ops_t* t = transport();
  EXPECT_EQ(t->head.struct_size, sizeof(nccom_transport_ops_t));
  EXPECT_EQ(t->ops_version, NCCOM_TRANSPORT_OPS_VERSION);
  for (const void* slot :
       {(const void*)t->can_connect, (const void*)t->setup, (const void*)t->connect,
        (const void*)t->free_connector, (const void*)t->reg_mr, (const void*)t->dereg_mr,
        (const void*)t->create_op, (const void*)t->op_progress, (const void*)t->op_rearm,
        (const void*)t->op_describe, (const void*)t->op_free}) {
    EXPECT_NE(slot, nullptr);
  }
}

TEST_F(NetNeuronConnector, ConnectsAndLogsTheChannelLines) {
  auto ranks = make_ranks(2, net);
  clear_logs();
  Link link = connect_link(*ranks[0], *ranks[1], 3);
  ASSERT_FALSE(HasFailure());
  const std::string logs = captured_logs();
  EXPECT_NE(logs.find("Channel 03 : 0[10] -> 1[11] [send] via NET_NEURON/test/0"),
            std::string::npos)
      << logs;
  EXPECT_NE(logs.find("Channel 03 : 0[10] -> 1[11] [receive] via NET_NEURON/test/0"),
            std::string::npos)
      << logs;
  int ok = 0;
  EXPECT_EQ(transport()->can_connect(transport_ctx(), &ranks[0]->comm, &ranks[0]->peers[0],
                                     &ranks[0]->peers[1], &ok),
            NCCOM_PLUGIN_OK);
  EXPECT_EQ(ok, 1);
  free_link(link);
}

// A net that claims four devices, all of them the inner net's device 0: the
// device a connector picks shows in its channel line.
const ncclNet_v6_t* four_devices(const ncclNet_v6_t* inner) {
  static const ncclNet_v6_t* in = nullptr;
  static ncclNet_v6_t t{};
  in = inner;
  t = *inner;
  t.devices = [](int* n) {
    *n = 4;
    return ncclSuccess;
  };
  t.getProperties = [](int, ncclNetProperties_v6_t* p) { return in->getProperties(0, p); };
  t.listen = [](int, void* handle, void** listen_comm) {
    return in->listen(0, handle, listen_comm);
  };
  t.connect = [](int, void* handle, void** send_comm) { return in->connect(0, handle, send_comm); };
  return &t;
}

TEST_F(NetNeuronConnector, SetupUsesTheTopologysNicForTheChannel) {
  const ncclNet_v6_t* four = four_devices(net);
  std::vector<int32_t> nic(NCCOM_TRANSPORT_MESH_CHANNEL + 1, -1);
  nic[3] = 6;  // the topology's NIC 6 → device 6 % 4
  for (const bool lent : {true, false}) {
    auto ranks = make_ranks(2, four);
    for (auto& r : ranks) {
      r->comm.net_devices = 4;
      r->comm.channel_nic = lent ? nic.data() : nullptr;
    }
    clear_logs();
    Link link = connect_link(*ranks[0], *ranks[1], 3);
    ASSERT_FALSE(HasFailure());
    const std::string logs = captured_logs();
    const std::string dev = lent ? "2" : "3";  // else channel % devices
    EXPECT_NE(logs.find("Channel 03 : 0[10] -> 1[11] [send] via NET_NEURON/test/" + dev),
              std::string::npos)
        << (lent ? "lent: " : "none: ") << logs;
    EXPECT_NE(logs.find("Channel 03 : 0[10] -> 1[11] [receive] via NET_NEURON/test/" + dev),
              std::string::npos)
        << logs;
    free_link(link);
  }
}

TEST_F(NetNeuronConnector, SetupRefusesSelfAndOutOfRangePeers) {
  auto ranks = make_ranks(2, net);
  uint8_t blob[NCCOM_TRANSPORT_CONNECT_BYTES];
  void* conn = nullptr;
  char err[512] = "";
  EXPECT_EQ(transport()->setup(transport_ctx(), &ranks[0]->comm, NCCOM_TRANSPORT_RECV, 0,
                               &ranks[0]->peers[0], blob, &conn, err, sizeof err),
            NCCOM_PLUGIN_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(err, "not self"), nullptr) << err;
  EXPECT_EQ(conn, nullptr);
}

TEST_F(NetNeuronConnector, RegMrNeedsAnEstablishedConnection) {
  auto ranks = make_ranks(2, net);
  uint8_t blob[NCCOM_TRANSPORT_CONNECT_BYTES];
  void* conn = nullptr;
  char err[512] = "";
  ASSERT_EQ(transport()->setup(transport_ctx(), &ranks[0]->comm, NCCOM_TRANSPORT_SEND, 0,
                               &ranks[0]->peers[1], blob, &conn, err, sizeof err),
            NCCOM_PLUGIN_OK);
  char buf[64];
  void* mh = nullptr;
  EXPECT_NE(transport()->reg_mr(transport_ctx(), conn, buf, sizeof buf, NCCL_PTR_HOST, &mh, err,
                                sizeof err),
            NCCOM_PLUGIN_OK);
  EXPECT_NE(std::strstr(err, "before the connection is established"), nullptr) << err;
  transport()->free_connector(transport_ctx(), conn);
}

// A valid one-op block on a connected pair, which each case breaks once.
struct Block {
  std::vector<std::unique_ptr<Rank>> ranks;
  Link link;
  std::unique_ptr<DeviceChannel> chan;
  uint32_t sems[4] = {};
  char data[64] = {};
  std::vector<net_ops_info_t> ops;
  std::vector<net_src_addr_t> src;
  void* op = nullptr;

  explicit Block(const ncclNet_v6_t* net) {
    ranks = make_ranks(2, net);
    link = connect_link(*ranks[0], *ranks[1], 0);
    chan = std::make_unique<DeviceChannel>(0, ENC_PATTERN_RING, link.send_conn, nullptr);
    net_ops_info_t o{};
    o.inc_send_handshake = &sems[0];
    o.inc_send_complete = &sems[1];
    o.inc_recv_handshake = &sems[2];
    o.inc_recv_complete = &sems[3];
    o.net_idx_loop_size = 512;
    o.initial_send_credits = 1;
    o.ending_recv_credits = 1;
    o.data_type_sz = 4;
    o.unrolled_count = 1;
    o.func_rel_op_idx = 42;
    o.tx_entry_cnt = 1;
    o.enc_channel = &chan->ch;
    ops.push_back(o);
    net_src_addr_t e{};
    e.host_addr = data;
    e.size = sizeof data;
    e.mark = NET_TRANSFER;
    e.dst_rank = 1;
    src.push_back(e);
    e = net_src_addr_t{};
    e.mark = NET_OP_COMPLETE;
    e.dst_rank = -1;
    src.push_back(e);
    e.mark = EXEC_COMPLETE;
    src.push_back(e);
  }
  ~Block() {
    if (op != nullptr) transport()->op_free(op);
    free_link(link);
  }
  std::string create(nccom_plugin_status_t* st) {
    char err[1024] = "";
    *st = transport()->create_op(transport_ctx(), &ranks[0]->comm, NCCOM_TRANSPORT_SEND, ops.data(),
                                 static_cast<int>(ops.size()), src.data(),
                                 static_cast<int>(src.size()), &op, err, sizeof err);
    return err;
  }
};

void expect_refused(Block& b, const char* text) {
  nccom_plugin_status_t st;
  const std::string err = b.create(&st);
  EXPECT_EQ(st, NCCOM_PLUGIN_INVALID_ARGUMENT) << err;
  EXPECT_NE(err.find(text), std::string::npos) << err;
}

TEST_F(NetNeuronConnector, CreateOpAcceptsTheValidBlock) {
  Block b(net);
  nccom_plugin_status_t st;
  const std::string err = b.create(&st);
  EXPECT_EQ(st, NCCOM_PLUGIN_OK) << err;
  char text[256];
  transport()->op_describe(b.op, text, sizeof text);
  EXPECT_NE(std::strstr(text, "send op: execution 0, descriptor 0 of 3"), nullptr) << text;
}

TEST_F(NetNeuronConnector, FirstTouchGrantsCreditsThenIdlesUntilTheDevicePublishes) {
  Block b(net);
  nccom_plugin_status_t st;
  ASSERT_EQ((b.create(&st), st), NCCOM_PLUGIN_OK);
  char err[512] = "";
  int idle = 0, done = 0;
  ASSERT_EQ(transport()->op_progress(b.op, &idle, &done, err, sizeof err), NCCOM_PLUGIN_OK);
  EXPECT_EQ(idle, 0);
  EXPECT_EQ(b.sems[0], 1u);  // initial_send_credits on the send handshake
  for (int t = 0; t < 100; ++t) {
    ASSERT_EQ(transport()->op_progress(b.op, &idle, &done, err, sizeof err), NCCOM_PLUGIN_OK);
    EXPECT_EQ(idle, 1);
    EXPECT_EQ(done, 0);
  }
  EXPECT_EQ(b.sems[0], 1u);
  EXPECT_EQ(b.sems[1], 0u);
}

TEST_F(NetNeuronConnector, DeviceRunningPastExecCompleteIsAnError) {
  Block b(net);
  b.src[0].size = 0;  // an EMPTY slice: no peer needed
  nccom_plugin_status_t st;
  ASSERT_EQ((b.create(&st), st), NCCOM_PLUGIN_OK);
  b.chan->send_words.post_send[0].index = 4;  // 3 entries + one that does not exist
  char err[1024] = "";
  int idle = 0, done = 0;
  nccom_plugin_status_t rc = NCCOM_PLUGIN_OK;
  for (int t = 0; t < 10 && rc == NCCOM_PLUGIN_OK && !done; ++t) {
    rc = transport()->op_progress(b.op, &idle, &done, err, sizeof err);
  }
  EXPECT_EQ(rc, NCCOM_PLUGIN_ERROR);
  EXPECT_NE(std::strstr(err, "beyond EXEC_COMPLETE"), nullptr) << err;
  EXPECT_NE(std::strstr(err, "func_rel_op:42"), nullptr) << err;
}

TEST_F(NetNeuronConnector, CreateOpRefusesWhatItCannotWalk) {
  {
    Block b(net);
    b.ops[0].enc_channel = nullptr;
    expect_refused(b, "enc_channel is NULL");
  }
  {
    Block b(net);
    b.chan->ch.pattern = ENC_PATTERN_INVALID;
    expect_refused(b, "neither RING (0) nor MESH (1)");
  }
  {
    Block b(net);
    static int not_a_connector = 0;
    b.chan->net_send.nccl_connector = &not_a_connector;
    expect_refused(b, "is not a live NET_NEURON connector");
  }
  {
    Block b(net);
    b.chan->net_send.nccl_connector = b.link.recv_conn;  // wrong direction
    expect_refused(b, "another communicator or direction");
  }
  {
    Block b(net);
    static int remote = 0;
    b.src[0].dst_mhandle = &remote;
    expect_refused(b, "send-side RMA read path");
  }
  {
    Block b(net);
    std::swap(b.src[1], b.src[2]);
    expect_refused(b, "EXEC_COMPLETE must be the last entry");
  }
  {
    Block b(net);
    b.chan->net_send.fold_n = 9;
    expect_refused(b, "fold_n is 9");
  }
  {
    Block b(net);
    b.chan->net_send.net_host_mem.va = nullptr;
    expect_refused(b, "net_host_mem.va is NULL");
  }
  {
    Block b(net);
    b.ops[0].inc_send_complete = nullptr;
    expect_refused(b, "_complete is NULL");
  }
  {
    Block b(net);
    b.ops[0].variable_peer = true;
    b.src[0].dst_rank = 5;
    expect_refused(b, "variable peer rank 5 has no NET_NEURON connection on channel 0");
  }
  {
    Block b(net);
    b.src[1] = b.src[0];  // transfers, then EXEC_COMPLETE without closing the op
    b.ops[0].tx_entry_cnt = 2;
    expect_refused(b, "has transfers but no NET_OP_COMPLETE");
  }
  {
    Block b(net);
    b.src.insert(b.src.begin() + 2, b.src[0]);  // a transfer after the op was closed
    expect_refused(b, "appears after its NET_OP_COMPLETE");
  }
  {
    Block b(net);
    b.src[0].net_op_idx = 3;
    expect_refused(b, "is not below ops_n 1");
  }
}

TEST_F(NetNeuronConnector, TwoOpsOnOneConnectionAtOnceAreRefusedWhilePosting) {
  Block a(net);
  nccom_plugin_status_t st;
  ASSERT_EQ((a.create(&st), st), NCCOM_PLUGIN_OK);
  void* second = nullptr;
  char err[1024] = "";
  ASSERT_EQ(transport()->create_op(transport_ctx(), &a.ranks[0]->comm, NCCOM_TRANSPORT_SEND,
                                   a.ops.data(), 1, a.src.data(), 3, &second, err, sizeof err),
            NCCOM_PLUGIN_OK)
      << err;
  // The device publishes the slice twice over (once per op's walk).
  volatile uint32_t* word = &a.chan->send_words.post_send[0].index;
  *word = 1;
  int idle = 0, done = 0;
  ASSERT_EQ(transport()->op_progress(a.op, &idle, &done, err, sizeof err), NCCOM_PLUGIN_OK) << err;
  EXPECT_EQ(transport()->op_progress(second, &idle, &done, err, sizeof err), NCCOM_PLUGIN_ERROR);
  EXPECT_NE(std::strstr(err, "in use by another registered op"), nullptr) << err;
  transport()->op_free(second);
}

}  // namespace
}  // namespace nn_test
