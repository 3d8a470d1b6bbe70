#include "device.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace nn_test {
namespace {

constexpr int kSendHs = 0, kSendCmp = 1, kRecvHs = 2, kRecvCmp = 3;
constexpr uint8_t kUntouched = 0xEE;

void advance(volatile uint32_t* word, uint32_t loop) {
  const uint32_t v = load(word);
  __atomic_store_n(word, (v + 1) % loop, __ATOMIC_RELEASE);  // data before index
}

}  // namespace

TwoRanks::TwoRanks(const ncclNet_v6_t* net, BlockSpec spec) : spec_(std::move(spec)) {
  const ncclNet_v6_t* used = spec_.net_override != nullptr ? spec_.net_override : net;
  ranks_ = make_ranks(2, used, spec_.sidelink);
  links_[0] = connect_link(*ranks_[0], *ranks_[1], 0);
  links_[1] = connect_link(*ranks_[1], *ranks_[0], 0);
  if (::testing::Test::HasFailure()) return;
  // The plan: slice s of op o, laid out one after another in each arena.
  size_t send_off = 0, recv_off = 0;
  for (uint32_t o = 0; o < spec_.ops.size(); ++o) {
    const OpSpec& os = spec_.ops[o];
    const uint32_t cap = os.sizes.empty() ? 0 : *std::max_element(os.sizes.begin(), os.sizes.end());
    for (size_t k = 0; k < os.sizes.size(); ++k) {
      Slice s;
      s.op = o;
      s.size = os.sizes[k];
      s.capacity = os.dynamic ? cap : s.size;
      s.dyn_send_off = os.dynamic ? (slices_.size() % 3) * 8 : 0;
      s.dyn_recv_off = os.dynamic ? (slices_.size() % 5) * 4 : 0;
      s.send_off = send_off;
      s.recv_off = recv_off;
      send_off += s.capacity + s.dyn_send_off + 64;
      recv_off += s.capacity + s.dyn_recv_off + 64;
      slices_.push_back(s);
    }
  }
  for (int r = 0; r < 2; ++r) {
    chan_[r] = std::make_unique<DeviceChannel>(
        0, spec_.variable_peer ? ENC_PATTERN_MESH : ENC_PATTERN_RING,
        spec_.variable_peer ? nullptr : links_[r].send_conn,
        spec_.variable_peer ? nullptr : links_[1 - r].recv_conn, spec_.fold_n);
    register_arena(send_arena_[r], links_[r].send_conn, send_off + 64);
    register_arena(recv_arena_[r], links_[1 - r].recv_conn, recv_off + 64);
    build(r);
  }
  const nccom_transport_ops_t* t = transport();
  char err[1024] = "";
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(t->create_op(transport_ctx(), &ranks_[r]->comm, NCCOM_TRANSPORT_SEND,
                           ops_info_[r].data(), static_cast<int>(ops_info_[r].size()),
                           src_[r].data(), static_cast<int>(src_[r].size()),
                           &ops_[r][NCCOM_TRANSPORT_SEND], err, sizeof err),
              NCCOM_PLUGIN_OK)
        << err;
    EXPECT_EQ(t->create_op(transport_ctx(), &ranks_[r]->comm, NCCOM_TRANSPORT_RECV,
                           ops_info_[r].data(), static_cast<int>(ops_info_[r].size()),
                           dst_[r].data(), static_cast<int>(dst_[r].size()),
                           &ops_[r][NCCOM_TRANSPORT_RECV], err, sizeof err),
              NCCOM_PLUGIN_OK)
        << err;
  }
  reset_for_execution();
}

TwoRanks::~TwoRanks() {
  for (int r = 0; r < 2; ++r) {
    for (void*& op : ops_[r]) {
      if (op != nullptr) transport()->op_free(op);
      op = nullptr;
    }
  }
  for (int r = 0; r < 2; ++r) {
    deregister_arena(send_arena_[r]);
    deregister_arena(recv_arena_[r]);
  }
  for (Link& l : links_) free_link(l);
}

void TwoRanks::build(int r) {
  const int peer = 1 - r;
  sems_[r].assign(spec_.ops.size(), Sems{});
  for (uint32_t o = 0; o < spec_.ops.size(); ++o) {
    const OpSpec& os = spec_.ops[o];
    net_ops_info_t info{};
    Sems& s = sems_[r][o];
    info.inc_send_handshake = &s.w[kSendHs];
    info.inc_send_complete = spec_.shared_semaphores ? &s.w[kSendHs] : &s.w[kSendCmp];
    info.inc_recv_handshake = &s.w[kRecvHs];
    info.inc_recv_complete = spec_.shared_semaphores ? &s.w[kRecvHs] : &s.w[kRecvCmp];
    info.early_send_completion = os.early_send;
    info.early_recv_posting = os.early_recv;
    info.net_idx_loop_size = spec_.loop_size;
    info.initial_send_credits = os.credits;
    info.ending_recv_credits = os.ending;
    info.data_type_sz = 4;
    info.is_dynamic_send_recv_sz = os.dynamic;
    info.unrolled_count = 1;
    info.variable_peer = spec_.variable_peer;
    info.func_rel_op_idx = 100 + o;
    info.enc_channel = &chan_[r]->ch;
    ops_info_[r].push_back(info);
  }
  auto close_op = [](auto& fifo, uint32_t o, net_addr_mark_t mark) {
    typename std::decay_t<decltype(fifo)>::value_type e{};
    e.net_op_idx = o;
    e.mark = mark;
    if constexpr (std::is_same_v<decltype(e), net_src_addr_t>) {
      e.dst_rank = -1;
    } else {
      e.src_rank = -1;
    }
    fifo.push_back(e);
  };
  for (uint32_t o = 0; o < spec_.ops.size(); ++o) {
    bool any = false;
    for (const Slice& s : slices_) {
      if (s.op != o) continue;
      any = true;
      if (sends(r)) {
        net_src_addr_t e{};
        e.net_op_idx = o;
        e.host_addr = send_arena_[r].bytes.data() + s.send_off;
        e.nccl_mhandle = send_arena_[r].mhandle;
        e.size = s.capacity;
        e.mark = NET_TRANSFER;
        e.dst_rank = peer;
        src_[r].push_back(e);
        ++ops_info_[r][o].tx_entry_cnt;
      }
      if (sends(peer)) {
        net_dest_addr_t e{};
        e.net_op_idx = o;
        e.host_addr = recv_arena_[r].bytes.data() + s.recv_off;
        e.nccl_mhandle = recv_arena_[r].mhandle;
        e.size = s.capacity;
        e.mark = NET_TRANSFER;
        e.src_rank = peer;
        dst_[r].push_back(e);
        ++ops_info_[r][o].rx_entry_cnt;
      }
    }
    if (any && sends(r)) close_op(src_[r], o, NET_OP_COMPLETE);
    if (any && sends(peer)) close_op(dst_[r], o, NET_OP_COMPLETE);
  }
  close_op(src_[r], 0, EXEC_COMPLETE);
  close_op(dst_[r], 0, EXEC_COMPLETE);
}

void TwoRanks::reset_for_execution() {
  for (int r = 0; r < 2; ++r) {
    for (Sems& s : sems_[r]) s = Sems{};
    for (DirState& d : dev_[r]) {
      d.next = 0;
      d.published.assign(spec_.ops.size(), 0);
    }
    done_[r] = {false, false};
    std::fill(recv_arena_[r].bytes.begin(), recv_arena_[r].bytes.end(), kUntouched);
    for (size_t i = 0; i < slices_.size(); ++i) {
      const Slice& s = slices_[i];
      uint8_t* base = send_arena_[r].bytes.data() + s.send_off + s.dyn_send_off;
      for (size_t k = 0; k < s.size; ++k) base[k] = pattern(r, exec_, static_cast<int>(i), k);
    }
    for (DynTable* t : {&chan_[r]->table_send, &chan_[r]->table_recv}) {
      std::lock_guard lock(t->mu);
      t->recv_sizes.clear();
    }
  }
}

uint32_t TwoRanks::credits(int r, uint32_t op) const {
  const Sems& s = sems_[r][op];
  return spec_.shared_semaphores ? load(&s.w[kSendHs]) : load(&s.w[kSendHs]) + load(&s.w[kSendCmp]);
}

uint32_t TwoRanks::arrived(int r, uint32_t op) const {
  const Sems& s = sems_[r][op];
  return spec_.shared_semaphores ? load(&s.w[kRecvHs]) : load(&s.w[kRecvCmp]);
}

// Publishes every entry the device may release now (one index step per FIFO
// entry, markers included: docs/decisions/net-neuron-transport.md, "Publication").
void TwoRanks::publish(int r, bool send) {
  DirState& d = dev_[r][send ? NCCOM_TRANSPORT_SEND : NCCOM_TRANSPORT_RECV];
  enc_net_host_memory_t& words = send ? chan_[r]->send_words : chan_[r]->recv_words;
  const size_t n = send ? src_[r].size() : dst_[r].size();
  size_t slice_index = 0;  // index into slices_ of the entry at d.next
  for (size_t i = 0; i < d.next; ++i) {
    const bool transfer = send ? src_[r][i].mark == NET_TRANSFER : dst_[r][i].mark == NET_TRANSFER;
    slice_index += transfer ? 1 : 0;
  }
  if (n == 1) return;  // only EXEC_COMPLETE: no op, no channel to publish on
  while (d.next < n) {
    const uint32_t mark = send ? src_[r][d.next].mark : dst_[r][d.next].mark;
    if (mark == NET_OP_COMPLETE && !send) {
      // The device moves to the next op only once this one's data arrived,
      // which also keeps it within the index ring (at most the window ahead).
      const uint32_t o = dst_[r][d.next].net_op_idx;
      if (arrived(r, o) < d.published[o]) break;
    }
    if (mark == NET_TRANSFER) {
      const Slice& s = slices_[slice_index];
      const OpSpec& os = spec_.ops[s.op];
      if (slice_index >= spec_.publish_limit) break;
      if (send) {
        if (credits(r, s.op) <= d.published[s.op]) break;  // no credit
        if (os.dynamic) {
          // One at a time: the size table holds one slice (shared words are
          // not combined with dynamic sizes in these tests).
          if (load(&sems_[r][s.op].w[kSendCmp]) < d.published[s.op]) break;
          chan_[r]->table_send.send_size[1 - r] = s.size;
          chan_[r]->table_send.send_offset[1 - r] = s.dyn_send_off;
        }
      } else {
        const uint32_t got = arrived(r, s.op);
        max_ahead_[r] =
            std::max(max_ahead_[r], got > d.published[s.op] ? got - d.published[s.op] : 0);
        if (d.published[s.op] >= got + spec_.recv_window) break;
        if (os.dynamic && got < d.published[s.op]) break;
        if (os.dynamic) chan_[r]->table_recv.recv_offset[1 - r] = s.dyn_recv_off;
      }
      ++d.published[s.op];
      ++slice_index;
    }
    for (int f = 0; f < spec_.fold_n; ++f) {
      advance(send ? &words.post_send[f].index : &words.post_recv[f].index, spec_.loop_size);
    }
    ++d.next;
  }
}

::testing::AssertionResult TwoRanks::tick_rank(int r, bool* rank_done) {
  char err[1024] = "";
  *rank_done = true;
  if (ops_[r][0] == nullptr) return ::testing::AssertionSuccess();  // closed
  publish(r, true);
  publish(r, false);
  for (int dir = 0; dir < 2; ++dir) {
    if (done_[r][dir]) continue;
    int idle = 0, done = 0;
    if (transport()->op_progress(ops_[r][dir], &idle, &done, err, sizeof err) != NCCOM_PLUGIN_OK) {
      last_error_[r] = err;
      return ::testing::AssertionFailure() << "rank " << r << " op_progress: " << err;
    }
    done_[r][dir] = done != 0;
    *rank_done = *rank_done && done_[r][dir];
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult TwoRanks::tick_once(bool* all_done) {
  *all_done = true;
  for (int r = 0; r < 2; ++r) {
    bool rank_done = false;
    if (auto ok = tick_rank(r, &rank_done); !ok) return ok;
    *all_done = *all_done && rank_done;
  }
  return ::testing::AssertionSuccess();
}

// One thread per rank, each ticking only its own ops and device, as two
// proxy workers would.
::testing::AssertionResult TwoRanks::run_execution_threaded(uint64_t tick_budget) {
  std::array<::testing::AssertionResult, 2> result = {::testing::AssertionSuccess(),
                                                      ::testing::AssertionSuccess()};
  std::array<bool, 2> finished = {false, false};
  std::atomic<bool> failed{false};
  auto worker = [&](int r) {
    for (uint64_t t = 0; t < tick_budget && !failed.load(); ++t) {
      bool done = false;
      result[r] = tick_rank(r, &done);
      if (!result[r]) {
        failed = true;
        return;
      }
      if (done) {
        finished[r] = true;
        return;
      }
      std::this_thread::yield();
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  for (int r = 0; r < 2; ++r) {
    if (!result[r]) return result[r];
    if (!finished[r]) {
      return ::testing::AssertionFailure()
             << "rank " << r << " not done after " << tick_budget << " ticks";
    }
  }
  return finish_execution();
}

::testing::AssertionResult TwoRanks::run_execution(uint64_t tick_budget) {
  bool all = false;
  uint64_t ticks = 0;
  for (; ticks < tick_budget && !all; ++ticks) {
    if (auto ok = tick_once(&all); !ok) return ok;
    if (!all) std::this_thread::yield();
  }
  if (!all) {
    std::string where;
    char buf[512];
    for (int r = 0; r < 2; ++r) {
      for (int dir = 0; dir < 2; ++dir) {
        transport()->op_describe(ops_[r][dir], buf, sizeof buf);
        where += "\n  rank " + std::to_string(r) + ": " + buf;
      }
    }
    return ::testing::AssertionFailure()
           << "execution " << exec_ << " not done after " << tick_budget << " ticks:" << where;
  }
  return finish_execution();
}

::testing::AssertionResult TwoRanks::finish_execution() {
  for (int r = 0; r < 2; ++r) {
    if (auto ok = check(r); !ok) return ok;
  }
  char err[1024] = "";
  for (int r = 0; r < 2; ++r) {
    for (void* op : ops_[r]) {
      if (transport()->op_rearm(op, err, sizeof err) != NCCOM_PLUGIN_OK) {
        return ::testing::AssertionFailure() << "op_rearm: " << err;
      }
    }
  }
  ++exec_;
  reset_for_execution();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult TwoRanks::check(int r) {
  const int peer = 1 - r;
  // The proxy hands the index words back at 0 for the next execution.
  for (int f = 0; f < spec_.fold_n; ++f) {
    if (load(&chan_[r]->send_words.post_send[f].index) != 0 ||
        load(&chan_[r]->recv_words.post_recv[f].index) != 0) {
      return ::testing::AssertionFailure() << "rank " << r << ": index words not reset to 0";
    }
  }
  for (uint32_t o = 0; o < spec_.ops.size(); ++o) {
    const OpSpec& os = spec_.ops[o];
    const uint32_t n = static_cast<uint32_t>(os.sizes.size());
    const bool has = n > 0;
    const uint32_t* w = sems_[r][o].w;
    const uint32_t send_hs = sends(r) && has ? os.credits : 0;
    const uint32_t send_cmp = sends(r) ? n : 0;
    const uint32_t recv_hs = sends(peer) && has ? os.ending : 0;
    const uint32_t recv_cmp = sends(peer) ? n : 0;
    std::array<uint32_t, 4> want = {send_hs, send_cmp, recv_hs, recv_cmp};
    if (spec_.shared_semaphores) want = {send_hs + send_cmp, 0, recv_hs + recv_cmp, 0};
    for (int k = 0; k < 4; ++k) {
      if (load(&w[k]) != want[k]) {
        return ::testing::AssertionFailure()
               << "rank " << r << " op " << o << " execution " << exec_ << ": semaphore "
               << (const char*[]){"send_handshake", "send_complete", "recv_handshake",
                                  "recv_complete"}[k]
               << " is " << load(&w[k]) << ", expected " << want[k];
      }
    }
  }
  if (!sends(peer)) return ::testing::AssertionSuccess();
  std::vector<std::pair<int, size_t>> want_sizes;
  for (size_t i = 0; i < slices_.size(); ++i) {
    const Slice& s = slices_[i];
    const uint8_t* got = recv_arena_[r].bytes.data() + s.recv_off + s.dyn_recv_off;
    for (size_t k = 0; k < s.size; ++k) {
      if (got[k] != pattern(peer, exec_, static_cast<int>(i), k)) {
        return ::testing::AssertionFailure()
               << "rank " << r << " slice " << i << " byte " << k << " of " << s.size
               << " differs (execution " << exec_ << ")";
      }
    }
    for (size_t k = s.size; k < s.capacity + 16; ++k) {
      if (got[k] != kUntouched) {
        return ::testing::AssertionFailure()
               << "rank " << r << " slice " << i << " written beyond its " << s.size << " bytes";
      }
    }
    if (spec_.ops[s.op].dynamic) want_sizes.emplace_back(peer, s.size);
  }
  std::lock_guard lock(chan_[r]->table_recv.mu);
  if (chan_[r]->table_recv.recv_sizes != want_sizes) {
    return ::testing::AssertionFailure()
           << "rank " << r << ": set_recv_size calls differ: got "
           << chan_[r]->table_recv.recv_sizes.size() << ", want " << want_sizes.size();
  }
  return ::testing::AssertionSuccess();
}

void TwoRanks::close_rank(int r) {
  for (void*& op : ops_[r]) {
    if (op != nullptr) transport()->op_free(op);
    op = nullptr;
  }
  deregister_arena(send_arena_[r]);
  deregister_arena(recv_arena_[r]);  // registered on r's receive connection
  transport()->free_connector(transport_ctx(), links_[r].send_conn);
  links_[r].send_conn = nullptr;
  transport()->free_connector(transport_ctx(), links_[1 - r].recv_conn);
  links_[1 - r].recv_conn = nullptr;
}

}  // namespace nn_test
