#include "world_rank.h"

#include <cstring>
#include <thread>
#include <tuple>

namespace nccom::bench {
namespace {

void inc_semaphore(volatile uint32_t* sem, uint32_t val) {
  __atomic_fetch_add(sem, val, __ATOMIC_SEQ_CST);
}

}  // namespace

World::World(const WorldConfig& config) : cfg_(config) {
  std::string why;
  t_ = transport_ops(&ctx_, &why);
  if (t_ == nullptr) {
    error_ = "NET_NEURON transport: " + why;
    return;
  }
  if (cfg_.net == nullptr || cfg_.slices == 0 || cfg_.credits == 0 || cfg_.credits > 0x1FF ||
      cfg_.window == 0 || cfg_.window + 2 >= kLoop || cfg_.slice_bytes > 0x7FFFFFFF ||
      (cfg_.check_data && cfg_.slice_bytes < sizeof(Stamp))) {
    error_ =
        "bad configuration: need a net, slices >= 1, credits in 1..511, window in 1..509, "
        "slice_bytes < 2 GiB (>= 16 to check data)";
    return;
  }
  if (static_cast<double>(cfg_.slices) * static_cast<double>(cfg_.slice_bytes) > (1ULL << 30)) {
    error_ = "slices x slice_bytes is above 1 GiB per arena";
    return;
  }
  for (int r = 0; r < 2; ++r) {
    ranks_[r] = std::make_unique<Rank>();
    Rank& k = *ranks_[r];
    k.r = r;
    for (int p = 0; p < 2; ++p) {
      k.peers[p].rank = p;
      k.peers[p].device = p;
      k.peers[p].host_hash = 0x1000 + p;  // two emulated servers
      k.peers[p].pid_hash = 0x2000 + p;
      k.peers[p].bus_id = 0x10 + p;
    }
    k.comm.struct_size = sizeof k.comm;
    k.comm.rank = r;
    k.comm.n_ranks = 2;
    k.comm.peers = k.peers.data();
    k.net = nccom::util::as_transport_net(cfg_.net);
    k.comm.net = &k.net;
    k.comm.net_name = cfg_.net->name;
    k.comm.net_devices = 1;
    k.comm.inc_semaphore = inc_semaphore;
  }
  connect_links();
  if (!ok()) return;
  for (int r = 0; r < 2 && ok(); ++r) build(r);
}

void World::connect_links() {
  // Link r: rank r sends, rank 1-r receives, channel 0.
  std::array<std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES>, 2> send_blob{}, recv_blob{};
  char err[512] = "";
  for (int r = 0; r < 2; ++r) {
    Rank& s = *ranks_[r];
    Rank& d = *ranks_[1 - r];
    if (t_->setup(ctx_, &d.comm, NCCOM_TRANSPORT_RECV, 0, &d.peers[r], recv_blob[r].data(),
                  &d.recv_conn, err, sizeof err) != NCCOM_PLUGIN_OK ||
        t_->setup(ctx_, &s.comm, NCCOM_TRANSPORT_SEND, 0, &s.peers[1 - r], send_blob[r].data(),
                  &s.send_conn, err, sizeof err) != NCCOM_PLUGIN_OK) {
      error_ = std::string("setup: ") + err;
      return;
    }
  }
  const uint64_t deadline = now_ns() + 60'000'000'000ULL;
  std::array<int, 4> done{};
  while (!(done[0] && done[1] && done[2] && done[3])) {
    for (int r = 0; r < 2; ++r) {
      Rank& s = *ranks_[r];
      Rank& d = *ranks_[1 - r];
      if ((!done[2 * r] && t_->connect(ctx_, s.send_conn, recv_blob[r].data(), &done[2 * r], err,
                                       sizeof err) != NCCOM_PLUGIN_OK) ||
          (!done[2 * r + 1] && t_->connect(ctx_, d.recv_conn, send_blob[r].data(), &done[2 * r + 1],
                                           err, sizeof err) != NCCOM_PLUGIN_OK)) {
        error_ = std::string("connect: ") + err;
        return;
      }
    }
    if (now_ns() > deadline) {
      error_ = "connect: the two links did not connect within 60 s";
      return;
    }
    std::this_thread::yield();
  }
}

// The block: one op, `slices` NET_TRANSFERs each way, closed by
// NET_OP_COMPLETE, then EXEC_COMPLETE; registered with the transport (or
// the scheduler).
void World::build(int r) {
  Rank& k = *ranks_[r];
  const size_t arena = cfg_.slices * cfg_.slice_bytes + 64;
  k.send_arena.assign(arena, 0);
  k.recv_arena.assign(arena, kUntouched);
  char err[512] = "";
  if (t_->reg_mr(ctx_, k.send_conn, k.send_arena.data(), arena, NCCL_PTR_HOST, &k.send_mh, err,
                 sizeof err) != NCCOM_PLUGIN_OK ||
      t_->reg_mr(ctx_, k.recv_conn, k.recv_arena.data(), arena, NCCL_PTR_HOST, &k.recv_mh, err,
                 sizeof err) != NCCOM_PLUGIN_OK) {
    error_ = std::string("reg_mr: ") + err;
    return;
  }
  k.ch.id = 0;
  k.ch.pattern = ENC_PATTERN_RING;
  k.ch.net_send = &k.net_send;
  k.ch.net_recv = &k.net_recv;
  for (auto [conn, words, nc] : {std::tuple{k.send_conn, &k.send_words, &k.net_send},
                                 std::tuple{k.recv_conn, &k.recv_words, &k.net_recv}}) {
    nc->fold_n = 1;
    nc->net_host_mem.va = words;
    nc->net_host_mem.size = sizeof *words;
    nc->nccl_connector = conn;
    nc->dynamic_input_host_mem = &k.dyn;
  }
  net_ops_info_t& i = k.info;
  i.inc_send_handshake = &k.sems[kSendHs];
  i.inc_send_complete = &k.sems[kSendCmp];
  i.inc_recv_handshake = &k.sems[kRecvHs];
  i.inc_recv_complete = &k.sems[kRecvCmp];
  i.tx_entry_cnt = cfg_.slices;
  i.rx_entry_cnt = cfg_.slices;
  i.net_idx_loop_size = kLoop;
  i.initial_send_credits = cfg_.credits;
  i.ending_recv_credits = kEnding;
  i.data_type_sz = 4;
  i.unrolled_count = 1;
  i.enc_channel = &k.ch;
  for (uint32_t s = 0; s < cfg_.slices; ++s) {
    net_src_addr_t e{};
    e.host_addr = k.send_arena.data() + s * cfg_.slice_bytes;
    e.nccl_mhandle = k.send_mh;
    e.size = cfg_.slice_bytes;
    e.mark = NET_TRANSFER;
    e.dst_rank = 1 - r;
    k.src.push_back(e);
    net_dest_addr_t d{};
    d.host_addr = k.recv_arena.data() + s * cfg_.slice_bytes;
    d.nccl_mhandle = k.recv_mh;
    d.size = cfg_.slice_bytes;
    d.mark = NET_TRANSFER;
    d.src_rank = 1 - r;
    k.dst.push_back(d);
  }
  for (net_addr_mark_t m : {NET_OP_COMPLETE, EXEC_COMPLETE}) {
    net_src_addr_t e{};
    e.mark = m;
    e.dst_rank = -1;
    k.src.push_back(e);
    net_dest_addr_t d{};
    d.mark = m;
    d.src_rank = -1;
    k.dst.push_back(d);
  }
  if (cfg_.check_data) {
    for (uint32_t s = 0; s < cfg_.slices; ++s) {
      *k.stamp(k.send_arena, s, cfg_.slice_bytes) = Stamp{kStampMagic, 0, s, uint32_t(r)};
    }
  }
  if (cfg_.scheduler) {
    k.proxy_transport = plugin_proxy_transport(t_, ctx_, &k.comm);
    k.scheduler =
        std::make_unique<proxy::Scheduler>(*k.proxy_transport, proxy::SchedulerSettings{});
    const proxy::BlockFifos f{&k.info,          1, k.src.data(), int(k.src.size()), k.dst.data(),
                              int(k.dst.size())};
    if (Status s = k.scheduler->start(0, 0, f); !s)
      error_ = "Scheduler::start: " + s.error().message;
    return;
  }
  for (int dir = 0; dir < 2; ++dir) {
    const bool send = dir == NCCOM_TRANSPORT_SEND;
    if (t_->create_op(ctx_, &k.comm, send ? NCCOM_TRANSPORT_SEND : NCCOM_TRANSPORT_RECV, &k.info, 1,
                      send ? static_cast<const void*>(k.src.data()) : k.dst.data(),
                      int(send ? k.src.size() : k.dst.size()), &k.ops[dir], err,
                      sizeof err) != NCCOM_PLUGIN_OK) {
      error_ = std::string("create_op: ") + err;
      return;
    }
  }
}

World::~World() {
  for (auto& k : ranks_) {
    if (!k) continue;
    if (k->scheduler) (void)k->scheduler->stop(0);
    k->scheduler.reset();
    for (void*& op : k->ops) {
      if (op != nullptr) t_->op_free(op);
      op = nullptr;
    }
  }
  for (auto& k : ranks_) {
    if (!k) continue;
    if (k->send_mh != nullptr) t_->dereg_mr(ctx_, k->send_conn, k->send_mh);
    if (k->recv_mh != nullptr) t_->dereg_mr(ctx_, k->recv_conn, k->recv_mh);
  }
  for (auto& k : ranks_) {
    if (!k) continue;
    if (k->send_conn != nullptr) t_->free_connector(ctx_, k->send_conn);
    if (k->recv_conn != nullptr) t_->free_connector(ctx_, k->recv_conn);
  }
}

}  // namespace nccom::bench
