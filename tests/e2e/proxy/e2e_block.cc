#include "e2e_block.h"

#include <nccom/nccl_ptr.h>

#include <algorithm>

namespace proxy_e2e {
namespace {

constexpr int kSendHs = 0, kSendCmp = 1, kRecvHs = 2, kRecvCmp = 3;

uint32_t load(const volatile uint32_t* w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }

// One index step per FIFO entry (docs/decisions/net-neuron-transport.md,
// "Publication"); data and table writes before the index (release).
void advance(volatile uint32_t* word, uint32_t loop) {
  __atomic_store_n(word, (load(word) + 1) % loop, __ATOMIC_RELEASE);
}

volatile uint32_t* post_send(enc_net_connector_t* c, int fold) {
  return &static_cast<enc_net_host_memory_t*>(c->net_host_mem.va)->post_send[fold].index;
}
volatile uint32_t* post_recv(enc_net_connector_t* c, int fold) {
  return &static_cast<enc_net_host_memory_t*>(c->net_host_mem.va)->post_recv[fold].index;
}

nrt_emu_dyn_entry_t& entry(enc_host_mem_shared_t* t, int peer) {
  return NRT_EMU_DYN_TABLE_ENTRIES(t->mem.va)[peer];
}

std::string status(const char* what, NRT_STATUS s) {
  return std::string(what) + " returned " + std::to_string(s);
}

constexpr uint32_t kLoop = 512;

}  // namespace

RankDevice::~RankDevice() {
  for (StreamState& s : streams_) {
    for (OpState& o : s.ops) {
      if (o.send_mh != nullptr)
        t_->neuronNetDeregMr(comm_, o.pattern, o.send_key, true, NET_SEND_COMM, o.send_mh);
      if (o.recv_mh != nullptr)
        t_->neuronNetDeregMr(comm_, o.pattern, o.recv_key, false, NET_RECV_COMM, o.recv_mh);
    }
  }
  if (mem_ != nullptr) nrt_emu_devmem_destroy(mem_);
}

std::string RankDevice::build() {
  if (NRT_STATUS s = nrt_emu_devmem_create(1 << 20, &mem_); s != NRT_SUCCESS)
    return status("nrt_emu_devmem_create", s);
  streams_.resize(static_cast<size_t>(plan_.streams));  // never resized again: blocks point into it
  for (int i = 0; i < plan_.streams; ++i) {
    streams_[i].stream = static_cast<uint32_t>(i);
    if (std::string e = build_stream(streams_[i], i * plan_.channels); !e.empty()) return e;
  }
  return "";
}

std::string RankDevice::build_stream(StreamState& s, int first_channel) {
  s.ops.resize(static_cast<size_t>(plan_.channels));
  if (NRT_STATUS st = nrt_emu_devmem_trigger_word(mem_, &s.trigger); st != NRT_SUCCESS)
    return status("trigger word", st);
  const uint32_t n = static_cast<uint32_t>(plan_.sizes.size());
  for (int k = 0; k < plan_.channels; ++k) {
    OpState& o = s.ops[k];
    const int idx = first_channel + k;
    o.prev = prev_[static_cast<size_t>(idx)];
    o.next = next_[static_cast<size_t>(idx)];
    o.channel = plan_.mesh ? kMeshChannelIdBase + idx : idx;
    o.pattern = plan_.mesh ? ENC_PATTERN_MESH : ENC_PATTERN_RING;
    o.send_key = plan_.mesh ? o.next : o.channel;  // MESH: the channel argument is the peer
    o.recv_key = plan_.mesh ? o.prev : o.channel;
    void* send = nullptr;
    void* recv = nullptr;
    if (NRT_STATUS st = t_->neuronGetNetConnector(comm_, o.pattern, o.send_key, true, &send);
        st != NRT_SUCCESS || !send)
      return status("neuronGetNetConnector(send)", st);
    if (NRT_STATUS st = t_->neuronGetNetConnector(comm_, o.pattern, o.recv_key, false, &recv);
        st != NRT_SUCCESS || !recv)
      return status("neuronGetNetConnector(recv)", st);
    if (plan_.dynamic) {
      if (NRT_STATUS st = nrt_emu_devmem_dynamic_table(mem_, nranks_, &o.send_table);
          st != NRT_SUCCESS)
        return status("dynamic table", st);
      if (NRT_STATUS st = nrt_emu_devmem_dynamic_table(mem_, nranks_, &o.recv_table);
          st != NRT_SUCCESS)
        return status("dynamic table", st);
    }
    if (NRT_STATUS st =
            nrt_emu_devmem_connector(mem_, plan_.folds, o.send_table, send, &o.send_conn);
        st != NRT_SUCCESS)
      return status("connector", st);
    if (NRT_STATUS st =
            nrt_emu_devmem_connector(mem_, plan_.folds, o.recv_table, recv, &o.recv_conn);
        st != NRT_SUCCESS)
      return status("connector", st);
    if (NRT_STATUS st =
            nrt_emu_devmem_channel(mem_, o.channel, o.pattern, o.recv_conn, o.send_conn, &o.chan);
        st != NRT_SUCCESS)
      return status("channel", st);
    for (volatile uint32_t*& w : o.sem) {
      if (NRT_STATUS st = nrt_emu_devmem_semaphore(mem_, &w); st != NRT_SUCCESS)
        return status("semaphore", st);
    }
    // Slices one after another with a 64-byte gap that must stay untouched.
    size_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
      o.dyn_off.push_back(plan_.dynamic ? (i % 3) * 2 : 0);
      o.off.push_back(at);
      at += plan_.sizes[i] + o.dyn_off.back() * kElem + 64;
    }
    o.send_buf.assign(at + 64, 0);
    o.recv_buf.assign(at + 64, kUntouched);
    if (NRT_STATUS st =
            t_->neuronNetRegMr(comm_, o.pattern, o.send_key, true, NET_SEND_COMM, o.send_buf.data(),
                               o.send_buf.size(), NCCL_PTR_HOST, &o.send_mh);
        st != NRT_SUCCESS)
      return status("neuronNetRegMr(send)", st);
    if (NRT_STATUS st =
            t_->neuronNetRegMr(comm_, o.pattern, o.recv_key, false, NET_RECV_COMM,
                               o.recv_buf.data(), o.recv_buf.size(), NCCL_PTR_HOST, &o.recv_mh);
        st != NRT_SUCCESS)
      return status("neuronNetRegMr(recv)", st);

    net_ops_info_t info{};
    info.inc_send_handshake = o.sem[kSendHs];
    info.inc_send_complete = plan_.shared_sems ? o.sem[kSendHs] : o.sem[kSendCmp];
    info.inc_recv_handshake = o.sem[kRecvHs];
    info.inc_recv_complete = plan_.shared_sems ? o.sem[kRecvHs] : o.sem[kRecvCmp];
    info.early_send_completion = plan_.early_send;
    info.early_recv_posting = plan_.early_recv;
    info.tx_entry_cnt = n;
    info.rx_entry_cnt = n;
    info.net_idx_loop_size = kLoop;
    info.initial_send_credits = plan_.credits;
    info.ending_recv_credits = plan_.ending;
    info.data_type_sz = kElem;
    info.is_dynamic_send_recv_sz = plan_.dynamic;
    info.basic_block_id = 7;
    info.func_rel_op_idx = 100 + static_cast<uint32_t>(k);
    info.unrolled_count = 1;
    info.enc_channel = o.chan;
    info.variable_peer = plan_.mesh;
    s.info.push_back(info);
    for (uint32_t i = 0; i < n; ++i) {
      net_src_addr_t e{};
      e.net_op_idx = static_cast<uint32_t>(k);
      e.host_addr = o.send_buf.data() + o.off[i];
      e.nccl_mhandle = o.send_mh;
      e.size = plan_.sizes[i];
      e.mark = NET_TRANSFER;
      e.dst_rank = o.next;
      s.src.push_back(e);
      net_dest_addr_t d{};
      d.net_op_idx = static_cast<uint32_t>(k);
      d.host_addr = o.recv_buf.data() + o.off[i];
      d.nccl_mhandle = o.recv_mh;
      d.size = plan_.sizes[i];
      d.mark = NET_TRANSFER;
      d.src_rank = o.prev;
      s.dst.push_back(d);
    }
    net_src_addr_t ce{};
    ce.net_op_idx = static_cast<uint32_t>(k);
    ce.mark = NET_OP_COMPLETE;
    ce.dst_rank = -1;
    s.src.push_back(ce);
    net_dest_addr_t cd{};
    cd.net_op_idx = static_cast<uint32_t>(k);
    cd.mark = NET_OP_COMPLETE;
    cd.src_rank = -1;
    s.dst.push_back(cd);
  }
  net_src_addr_t xe{};
  xe.net_op_idx = static_cast<uint32_t>(plan_.channels - 1);
  xe.mark = EXEC_COMPLETE;
  xe.dst_rank = -1;
  s.src.push_back(xe);
  net_dest_addr_t xd{};
  xd.net_op_idx = static_cast<uint32_t>(plan_.channels - 1);
  xd.mark = EXEC_COMPLETE;
  xd.src_rank = -1;
  s.dst.push_back(xd);
  s.block = {7,
             s.info.data(),
             static_cast<int>(s.info.size()),
             s.src.data(),
             static_cast<int>(s.src.size()),
             s.dst.data(),
             static_cast<int>(s.dst.size())};
  return "";
}

void RankDevice::prepare(int exec) {
  exec_ = exec;
  for (StreamState& s : streams_) {
    s.next_src = s.next_dst = 0;
    nrt_emu_proxy_arm_trigger(s.trigger);
    for (OpState& o : s.ops) {
      for (volatile uint32_t* w : o.sem) __atomic_store_n(w, 0u, __ATOMIC_RELEASE);
      o.pub_tx = o.pub_rx = 0;
      std::fill(o.recv_buf.begin(), o.recv_buf.end(), kUntouched);
      std::fill(o.send_buf.begin(), o.send_buf.end(), 0);
      for (size_t i = 0; i < plan_.sizes.size(); ++i) {
        uint8_t* b = o.send_buf.data() + o.off[i] + o.dyn_off[i] * kElem;
        for (size_t k = 0; k < plan_.sizes[i]; ++k)
          b[k] = pattern(rank_, o.channel, static_cast<int>(i), exec, k);
      }
      if (o.recv_table != nullptr) entry(o.recv_table, o.prev).recv_count = ~0ull;
    }
  }
}

std::string RankDevice::publish() {
  for (StreamState& s : streams_) {
    if (std::string e = publish_send(s); !e.empty()) return e;
    if (std::string e = publish_recv(s); !e.empty()) return e;
  }
  return "";
}

// Sends only while holding credits: handshake grants + completions.
std::string RankDevice::publish_send(StreamState& s) {
  while (s.next_src < s.src.size()) {
    const net_src_addr_t& e = s.src[s.next_src];
    OpState& o = s.ops[e.net_op_idx];
    if (e.mark == NET_TRANSFER) {
      if (o.pub_tx >= plan_.publish_limit) return "";
      const uint32_t credits =
          load(o.sem[kSendHs]) + (plan_.shared_sems ? 0 : load(o.sem[kSendCmp]));
      if (credits <= o.pub_tx) return "";
      if (plan_.dynamic) {
        // The table holds one slice per peer: publish the next one only after
        // the previous one completed.
        if (sends_done(o) < o.pub_tx) return "";
        nrt_emu_dyn_entry_t& d = entry(o.send_table, o.next);
        d.send_count = plan_.sizes[o.pub_tx] / kElem;
        d.send_offset = o.dyn_off[o.pub_tx];
      }
      ++o.pub_tx;
    }
    // Every fold publishes the entry (the proxy takes the minimum over folds),
    // the last fold first so that fold 0 alone never suffices.
    for (int f = plan_.folds - 1; f >= 0; --f) advance(post_send(o.send_conn, f), kLoop);
    ++s.next_src;
  }
  return "";
}

// Receives within a window ahead of arrivals; an op is closed once all its
// data arrived.
std::string RankDevice::publish_recv(StreamState& s) {
  while (s.next_dst < s.dst.size()) {
    const net_dest_addr_t& e = s.dst[s.next_dst];
    OpState& o = s.ops[e.net_op_idx];
    const uint32_t got = arrived(o);
    if (e.mark == NET_OP_COMPLETE && got < o.pub_rx) return "";
    if (e.mark == NET_TRANSFER) {
      if (o.pub_rx >= plan_.publish_limit) return "";
      if (o.pub_rx >= got + plan_.recv_window) return "";
      if (plan_.dynamic) {
        if (got < o.pub_rx) return "";
        nrt_emu_dyn_entry_t& d = entry(o.recv_table, o.prev);
        if (o.pub_rx > 0 && d.recv_count != plan_.sizes[o.pub_rx - 1] / kElem) {
          return "channel " + std::to_string(o.channel) + " slice " + std::to_string(o.pub_rx - 1) +
                 ": nec_set_recv_size_bytes stored " + std::to_string(d.recv_count) +
                 " elements, expected " + std::to_string(plan_.sizes[o.pub_rx - 1] / kElem);
        }
        d.recv_offset = o.dyn_off[o.pub_rx];
        d.recv_count = ~0ull;
      }
      ++o.pub_rx;
    }
    for (int f = plan_.folds - 1; f >= 0; --f) advance(post_recv(o.recv_conn, f), kLoop);
    ++s.next_dst;
  }
  return "";
}

// With shared words the send word also holds the op's initial credits
// (granted before the first slice could be published), and the receive word
// gets the ending credits only after every slice arrived.
uint32_t RankDevice::sends_done(const OpState& o) const {
  if (!plan_.shared_sems) return load(o.sem[kSendCmp]);
  const uint32_t w = load(o.sem[kSendHs]);
  return w >= plan_.credits ? w - plan_.credits : 0;
}

uint32_t RankDevice::arrived(const OpState& o) const {
  return load(o.sem[plan_.shared_sems ? kRecvHs : kRecvCmp]);
}

uint64_t RankDevice::published() const {
  uint64_t n = 0;
  for (const StreamState& s : streams_) {
    for (const OpState& o : s.ops) n += o.pub_tx + o.pub_rx;
  }
  return n;
}

uint64_t RankDevice::transfers() const {
  return 2ull * plan_.sizes.size() * static_cast<uint64_t>(plan_.streams * plan_.channels);
}

std::string RankDevice::check(int exec) const {
  const uint32_t n = static_cast<uint32_t>(plan_.sizes.size());
  for (const StreamState& s : streams_) {
    for (const OpState& o : s.ops) {
      const std::string where = "exec " + std::to_string(exec) + " stream " +
                                std::to_string(s.stream) + " channel " + std::to_string(o.channel) +
                                ": ";
      uint32_t want[4] = {plan_.credits, n, plan_.ending, n};
      if (plan_.shared_sems) {
        want[kSendHs] += n;
        want[kSendCmp] = 0;
        want[kRecvHs] += n;
        want[kRecvCmp] = 0;
      }
      const char* names[4] = {"send_handshake", "send_complete", "recv_handshake", "recv_complete"};
      for (int k = 0; k < 4; ++k) {
        if (load(o.sem[k]) != want[k]) {
          return where + names[k] + " = " + std::to_string(load(o.sem[k])) + ", expected " +
                 std::to_string(want[k]);
        }
      }
      if (plan_.dynamic && n > 0 &&
          entry(o.recv_table, o.prev).recv_count != plan_.sizes[n - 1] / kElem) {
        return where + "last dynamic receive size " +
               std::to_string(entry(o.recv_table, o.prev).recv_count) + " elements, expected " +
               std::to_string(plan_.sizes[n - 1] / kElem);
      }
      std::vector<uint8_t> expect(o.recv_buf.size(), kUntouched);
      for (uint32_t i = 0; i < n; ++i) {
        uint8_t* b = expect.data() + o.off[i] + o.dyn_off[i] * kElem;
        for (size_t k = 0; k < plan_.sizes[i]; ++k)
          b[k] = pattern(o.prev, o.channel, static_cast<int>(i), exec, k);
      }
      for (size_t k = 0; k < expect.size(); ++k) {
        if (o.recv_buf[k] != expect[k]) {
          return where + "received byte " + std::to_string(k) + " is " +
                 std::to_string(o.recv_buf[k]) + ", expected " + std::to_string(expect[k]) +
                 " (from rank " + std::to_string(o.prev) + ")";
        }
      }
    }
  }
  return "";
}

}  // namespace proxy_e2e
