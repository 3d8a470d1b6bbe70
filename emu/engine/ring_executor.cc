// RingExecutor (ring_executor.h): a plan's channel programs and the FIFOs
// of its network hops, and one execution of it — the device's side of every
// link (links.h) while the runtime's proxy worker ticks libnccom for the NET
// ones.
#include "ring_executor.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace nrt_emu::engine {

// Per channel, per execution.
struct Run {
  size_t step = 0;
  uint64_t sseq = 0, rseq = 0;  // slices sent / consumed
  uint64_t pub_rx = 0;          // NET receive descriptors released
  bool tx_closed = false, rx_closed = false;
  uint64_t by_reference = 0;  // DIRECT slices passed by reference
  const NetBlock* block = nullptr;
};

Status RingExecutor::submit_network(const Plan& p, NetTask& task, uint64_t execution) {
  std::vector<Channel>& chans = links_.lanes(p.kanga);
  std::vector<const NetBlock*> blocks;
  std::vector<volatile uint32_t*> triggers, sems;
  for (const NetBlock& b : p.blocks) {
    const Channel& c = chans[static_cast<size_t>(b.channel)];
    blocks.push_back(&b);
    triggers.push_back(c.trigger);
    for (volatile uint32_t* w : {c.send.hs, c.send.cmp, c.recv.hs, c.recv.cmp}) sems.push_back(w);
  }
  if (blocks.empty()) return {};
  return task.submit(self_.proxy, blocks, triggers, sems, execution);
}

std::string RingExecutor::waiting_for(const Plan& p, const std::vector<Run>& runs) {
  const std::vector<Channel>& chans = links_.lanes(p.kanga);
  for (size_t ci = 0; ci < chans.size(); ++ci) {
    const Run& r = runs[ci];
    const ChannelProgram& prog = p.progs[ci];
    const Channel& c = chans[ci];
    if (r.step >= prog.steps.size() && r.by_reference != 0 && !c.send.net &&
        load64(c.send.head) < c.send.base + r.sseq)
      return (p.kanga ? "kangaRing lane " : "channel ") + std::to_string(ci) + ": " +
             links_.describe_peer(c.next) + " to read the slices passed to it by reference (" +
             std::to_string(load64(c.send.head) - c.send.base) + " of " + std::to_string(r.sseq) +
             ")";
    if (r.step >= prog.steps.size()) continue;
    const Step& s = prog.steps[r.step];
    return (p.kanga ? "kangaRing lane " : "channel ") + std::to_string(ci) + " step " +
           std::to_string(r.step) + " of " + std::to_string(prog.steps.size()) + ": " +
           ((s.flags & kRecv)
                ? "slice " + std::to_string(r.rseq) + " from " + links_.describe_peer(c.prev) +
                      (c.recv.net ? " over the network" : " (direct)")
                : "room at " + links_.describe_peer(c.next) +
                      (c.send.net ? " over the network" : " (direct)"));
  }
  return "the network proxy to finish the task";
}

// Where step `s` reads its received slice and writes the slice it sends
// (a DIRECT send refreshes the head it has seen of its peer);
// false while the slice has not arrived or the peer has no room.
bool RingExecutor::step_slots(Channel& c, const Step& s, const Run& r, const uint8_t*& rslot,
                              uint8_t*& sslot) const {
  if ((s.flags & kRecv) != 0) {
    if (c.recv.net) {
      if (load32(c.recv.cmp) <= r.rseq) return false;
      rslot = c.recv.slots + (r.rseq % kSlots) * self_.slot_bytes;
    } else {
      const uint64_t g = c.recv.base + r.rseq;
      rslot = c.recv.slots + (g % kSlots) * self_.slot_bytes;
      if (!slice_arrived(rslot, g)) return false;
    }
  }
  if ((s.flags & kSend) != 0) {
    if (c.send.net) {
      if (r.sseq >= static_cast<uint64_t>(load32(c.send.hs)) + load32(c.send.cmp)) return false;
      sslot = c.send.slots + (r.sseq % kSlots) * self_.slot_bytes;
    } else {
      const uint64_t g = c.send.base + r.sseq;
      if (!slot_free(g, c.send.head_seen, c.send.head)) return false;
      sslot = c.send.slots + (g % kSlots) * self_.slot_bytes;
    }
  }
  return true;
}

// The payload of the received slice at `rslot`, its stamp checked: after
// the stamp, or where the sender's reference points.
Result<const uint8_t*> RingExecutor::received_payload(const Plan& p, size_t ci, const Channel& c,
                                                      const uint8_t* rslot, size_t bytes,
                                                      const SliceStamp& stamp) {
  if (Status st = links_.check_stamp(rslot, stamp, p.kanga ? "kangaRing lane" : "channel",
                                     static_cast<int>(ci), c.prev);
      !st)
    return st.take_error();
  SliceStamp got;
  std::memcpy(&got, rslot, sizeof got);
  if (got.by_reference != 0 && c.recv.net) {
    return engine_error(links_.describe_peer(c.prev) +
                        " passed a slice by reference over the network");
  }
  if (got.by_reference != 0) return links_.referenced_payload(c.prev, rslot, bytes);
  return rslot + kStampBytes;
}

// The slice goes out: its stamp after the payload (on a DIRECT link, the
// stamp is the slice's arrival) and the peer told; the received slot freed.
void RingExecutor::hand_over(Channel& c, const Step& s, Run& r, uint8_t* sstart, SliceStamp st) {
  if ((s.flags & kSend) != 0) {
    if (c.send.net) {
      std::memcpy(sstart, &st, sizeof st);
      publish(post_word(c.send.conn, true));
    } else {
      seal_slice(sstart, st, c.send.base + r.sseq);
      bell::ring(links_.peer_bell(c.next));
    }
    ++r.sseq;
  }
  if ((s.flags & kRecv) != 0) {
    if (!c.recv.net) {
      store64(c.recv.head, c.recv.base + r.rseq + 1);
      bell::ring(links_.peer_bell(c.prev));
    }
    ++r.rseq;
  }
}

// One step whose slots are ready (step_slots): the payload received, reduced
// or copied into its target, and sent on (by reference when DIRECT and the
// data stays final in the output).
Status RingExecutor::run_step(const Plan& p, size_t ci, Channel& c, const Step& s, Run& r,
                              const uint8_t* rslot, uint8_t* sslot, const SliceStamp& stamp) {
  const uint64_t es = dtype_size(p.desc.dtype);
  const bool rv = (s.flags & kRecv) != 0, sd = (s.flags & kSend) != 0;
  const size_t bytes = s.elems * es;
  const bool by_reference =
      sslot != nullptr && by_reference_ && !c.send.net && s.dst >= 0 && bytes > 0;
  uint8_t* const sstart = sslot;
  if (sslot != nullptr) sslot += kStampBytes;
  if (rv) {
    auto payload = received_payload(p, ci, c, rslot, bytes, stamp);
    if (!payload) return payload.take_error();
    rslot = *payload;
  }
  const auto* in = static_cast<const uint8_t*>(p.send);
  auto* out = static_cast<uint8_t*>(p.recv);
  const uint8_t* src = s.src >= 0 ? in + static_cast<uint64_t>(s.src) * es : nullptr;
  uint8_t* target = s.dst >= 0 ? out + static_cast<uint64_t>(s.dst) * es : sslot;
  if (bytes > 0 && target != nullptr) {
    if (rv && (s.flags & kReduce)) {
      reduce(p.desc.dtype, p.desc.op, target, rslot, src, s.elems);
    } else {
      const uint8_t* from = rv ? rslot : src;
      if (from != target) std::memmove(target, from, bytes);
    }
    if (s.flags & kAvg) avg_finish(p.desc.dtype, target, s.elems, self_.n);
    if (by_reference) {
      ++r.by_reference;
      const auto* base = static_cast<const uint8_t*>(nrt_emu_devmem_base(self_.user_mem));
      const SliceRef ref{static_cast<uint64_t>(target - base), bytes};
      std::memcpy(sslot, &ref, sizeof ref);
    } else if (sd && target != sslot) {
      std::memcpy(sslot, target, bytes);
    }
  }
  SliceStamp st = stamp;
  st.by_reference = by_reference ? 1 : 0;
  hand_over(c, s, r, sstart, st);
  return {};
}

Result<Progress> RingExecutor::advance(const Plan& p, size_t ci, Run& r, const SliceStamp& stamp) {
  Channel& c = links_.lanes(p.kanga)[ci];
  const ChannelProgram& prog = p.progs[ci];
  const bool net_tx = r.block != nullptr && r.block->op.tx_entry_cnt > 0;
  const bool net_rx = r.block != nullptr && r.block->op.rx_entry_cnt > 0;
  bool moved = false;
  // Receive descriptors, as far as free slots allow.
  while (net_rx && r.pub_rx < prog.recvs && r.pub_rx < r.rseq + kSlots) {
    publish(post_word(c.recv.conn, false));
    ++r.pub_rx;
    moved = true;
  }
  while (r.step < prog.steps.size()) {
    const Step& s = prog.steps[r.step];
    const uint8_t* rslot = nullptr;
    uint8_t* sslot = nullptr;
    if (!step_slots(c, s, r, rslot, sslot)) break;
    if (Status st = run_step(p, ci, c, s, r, rslot, sslot, stamp); !st) return st.take_error();
    ++r.step;
    moved = true;
  }
  // The end of the execution on the NET words: NET_OP_COMPLETE once the
  // op's entries are out (receive: once everything arrived), then
  // EXEC_COMPLETE on the same word.
  if (net_tx && !r.tx_closed && r.sseq == prog.sends) {
    publish(post_word(c.send.conn, true));
    publish(post_word(c.send.conn, true));
    r.tx_closed = moved = true;
  }
  if (net_rx && !r.rx_closed && r.rseq == prog.recvs) {
    publish(post_word(c.recv.conn, false));
    publish(post_word(c.recv.conn, false));
    r.rx_closed = moved = true;
  }
  // Slices passed by reference point into the output buffer, which the
  // caller may reuse once the call returns: the execution ends when the
  // receiver has read them all.
  const bool read = r.by_reference == 0 || load64(c.send.head) >= c.send.base + r.sseq;
  const bool done =
      r.step == prog.steps.size() && (!net_tx || r.tx_closed) && (!net_rx || r.rx_closed) && read;
  return Progress{moved, done};
}

Status RingExecutor::execute(Plan& p, uint64_t execution) {
  std::vector<Channel>& chans = links_.lanes(p.kanga);  // ring channels, or kangaRing lanes
  std::vector<Run> runs(chans.size());
  for (const NetBlock& b : p.blocks) runs[static_cast<size_t>(b.channel)].block = &b;

  // The network task: one stream per channel with a NET hop.
  NetTask task;
  if (Status s = submit_network(p, task, execution); !s) return s;
  const SliceStamp stamp = stamp_of(p, execution);
  const auto pass = [&]() -> Result<Progress> {
    Progress all{false, true};
    for (size_t ci = 0; ci < chans.size(); ++ci) {
      auto advanced = advance(p, ci, runs[ci], stamp);
      if (!advanced) return advanced.take_error();
      all.moved = all.moved || advanced->moved;
      all.done = all.done && advanced->done;
    }
    return all;
  };
  if (Status s = loop_.run(task, pass, [&] { return waiting_for(p, runs); }); !s) return s;
  for (size_t ci = 0; ci < chans.size(); ++ci) {
    if (!chans[ci].send.net) chans[ci].send.base += p.progs[ci].sends;
    if (!chans[ci].recv.net) chans[ci].recv.base += p.progs[ci].recvs;
    by_reference_slices_ += runs[ci].by_reference;
  }
  if (p.kanga) {
    ++kanga_executions_;
    for (size_t k = 0; k < p.progs.size() && k < chans.size(); ++k)
      kanga_lane_steps_[k] += p.progs[k].steps.size();
  }
  return {};
}

Status RingExecutor::build_plan(Plan& p) {
  const DType t = p.desc.dtype;
  const uint64_t es = dtype_size(t);
  const uint64_t slice = (self_.slot_bytes - kStampBytes) / es;  // the stamp comes first
  const uint64_t total = split_total(p.desc);
  const uint64_t bytes = total * es;
  // A channel carries at least two slices before the next one is used:
  // small operations stay on one ring.
  const std::vector<Channel>& chans = links_.lanes(p.kanga);
  const int used =
      static_cast<int>(std::clamp<uint64_t>(bytes / (2 * self_.slot_bytes), 1, chans.size()));
  const auto ranges = split_channels(total, used, std::max<uint64_t>(1, 64 / es));
  p.progs.assign(chans.size(), ChannelProgram{});
  for (size_t c = 0; c < chans.size(); ++c) {
    if (static_cast<int>(c) >= used) continue;
    const auto [first, last] = ranges[c];
    if (Status s =
            build_ring_program(p.desc, chans[c].ring, self_.rank, first, last, slice, &p.progs[c]);
        !s)
      return s;
  }
  for (size_t c = 0; c < chans.size(); ++c) {
    const Channel& ch = chans[c];
    const ChannelProgram& prog = p.progs[c];
    const bool tx = ch.send.net && prog.sends > 0;
    const bool rx = ch.recv.net && prog.recvs > 0;
    if (!tx && !rx) continue;
    if (prog.sends > INT_MAX || prog.recvs > INT_MAX)
      return engine_error("an operation of more than 2^31 slices");
    BlockOpSpec spec{{ch.send.hs, ch.send.cmp, ch.recv.hs, ch.recv.cmp}};
    spec.tx = tx ? static_cast<uint32_t>(prog.sends) : 0;
    spec.rx = rx ? static_cast<uint32_t>(prog.recvs) : 0;
    spec.credits = kSlots;
    spec.data_type_sz = es;
    spec.basic_block_id = 1;
    spec.func_rel_op_idx = static_cast<uint32_t>(c);
    spec.enc_channel = ch.chan;
    NetBlock b = make_block(spec);
    b.channel = static_cast<int>(c);
    uint64_t j = 0, k = 0;
    for (const Step& s : prog.steps) {
      if (tx && (s.flags & kSend))
        add_send(b, ch.send.slots + (j++ % kSlots) * self_.slot_bytes, ch.send.mhandle,
                 s.elems * es + kStampBytes, ch.next);
      if (rx && (s.flags & kRecv))
        add_recv(b, ch.recv.slots + (k++ % kSlots) * self_.slot_bytes, ch.recv.mhandle,
                 s.elems * es + kStampBytes, ch.prev);
    }
    close_fifos(b);
    p.blocks.push_back(std::move(b));
  }
  if (p.blocks.size() > NRT_EMU_MAX_STREAMS)
    return engine_error("more network blocks than proxy streams");
  return {};
}

}  // namespace nrt_emu::engine
