// PeerExecutor (peer_executor.h): the peer collectives (all-to-all, permute)
// and the executions of recursive doubling over the peer links.
//
// Order. Every rank walks its transfers in the same global order — round r
// (a slice of each block), then step s = 1..n-1: send to rank + s, receive
// from rank - s — with a send cursor and a receive cursor that never wait on
// each other. The earliest unfinished transfer of that order can always
// move (everything before it is done, so its ring has room and its receiver
// is at it), hence no deadlock, with DIRECT rings per pair and one shared
// ring for the NET pairs alike.
#include "peer_executor.h"

#include "../device_memory.h"
#include "device_words.h"

#include <nccom/nccl_ptr.h>

#include <algorithm>
#include <cstring>

namespace nrt_emu::engine {

PeerExecutor::~PeerExecutor() {
  for (size_t q = 0; q < peer_links_.peers.size(); ++q) {
    const PeerLink& l = peer_links_.peers[q];
    if (l.tx_mhandle != nullptr)
      (void)self_.t->neuronNetDeregMr(self_.comm, ENC_PATTERN_MESH, static_cast<int>(q), true,
                                      NET_SEND_COMM, l.tx_mhandle);
    if (l.rx_mhandle != nullptr)
      (void)self_.t->neuronNetDeregMr(self_.comm, ENC_PATTERN_MESH, static_cast<int>(q), false,
                                      NET_RECV_COMM, l.rx_mhandle);
  }
}

Status PeerExecutor::link_peers(uint32_t connectivity, const std::vector<int>& peers) {
  const bool mesh = connectivity == ENC_CONNECTIVITY_MESH;
  if (mesh ? peer_links_.mesh : peer_links_.rdh) return {};
  if (self_.n > 1) {
    if (NRT_STATUS s = self_.t->neuronExpandConnectivity(self_.comm, connectivity);
        s != NRT_SUCCESS)
      return engine_error(
          st(mesh ? "neuronExpandConnectivity(MESH)" : "neuronExpandConnectivity(RDH)", s));
  }
  if (peer_links_.peers.empty()) peer_links_.peers.assign(static_cast<size_t>(self_.n), PeerLink{});
  for (int q : peers) {
    if (q == self_.rank || peer_links_.peers[static_cast<size_t>(q)].linked) continue;
    if (Status s = link_peer(q); !s) return s;
  }
  (mesh ? peer_links_.mesh : peer_links_.rdh) = true;
  return {};
}

Status PeerExecutor::link_peer(int q) {
  PeerLink& l = peer_links_.peers[static_cast<size_t>(q)];
  void* sc = nullptr;
  void* rc = nullptr;
  if (NRT_STATUS s = self_.t->neuronGetNetConnector(self_.comm, ENC_PATTERN_MESH, q, true, &sc);
      s != NRT_SUCCESS)
    return engine_error("peer rank " + std::to_string(q) + ": " +
                        st("neuronGetNetConnector(MESH, send)", s));
  if (NRT_STATUS s = self_.t->neuronGetNetConnector(self_.comm, ENC_PATTERN_MESH, q, false, &rc);
      s != NRT_SUCCESS)
    return engine_error("peer rank " + std::to_string(q) + ": " +
                        st("neuronGetNetConnector(MESH, receive)", s));
  if ((sc == nullptr) != (rc == nullptr))
    return engine_error("peer rank " + std::to_string(q) +
                        ": libnccom connected only one direction over the network");
  l.net = sc != nullptr;
  const PeerCard& p = links_.card(q);
  if (!l.net) {
    if (p.host != self_.host)
      return engine_error("peer rank " + std::to_string(q) + " is on host " +
                          std::to_string(p.host) +
                          " but libnccom gave no network connection to it");
    if (Status s = links_.map_peer(q); !s) return s;
    auto* b = static_cast<uint8_t*>(links_.peer_memory(q));
    // Each ring: kSlots slots, then the head counter on a line of its own.
    uint8_t* ring = b + p.pair_area + static_cast<uint64_t>(self_.local) * p.pair_stride;
    l.tx_slots = ring;
    l.tx_head = reinterpret_cast<volatile uint64_t*>(ring + kSlots * self_.slot_bytes);
    uint8_t* mine = links_.pair_area() + static_cast<uint64_t>(p.local) * links_.pair_stride();
    l.rx_slots = mine;
    l.rx_head = reinterpret_cast<volatile uint64_t*>(mine + kSlots * self_.slot_bytes);
    l.linked = true;
    return {};
  }
  if (Status s = setup_net_ring(); !s) return s;
  // The shared slots, registered with this peer's send and receive comms.
  for (const bool send : {true, false}) {
    if (NRT_STATUS s = self_.t->neuronNetRegMr(
            self_.comm, ENC_PATTERN_MESH, q, send, send ? NET_SEND_COMM : NET_RECV_COMM,
            send ? peer_links_.tx_slots : peer_links_.rx_slots, kPeerSlots * self_.slot_bytes,
            NCCL_PTR_HOST, send ? &l.tx_mhandle : &l.rx_mhandle);
        s != NRT_SUCCESS)
      return engine_error(
          "peer rank " + std::to_string(q) + ": " +
          st(send ? "neuronNetRegMr(MESH send slots)" : "neuronNetRegMr(MESH receive slots)", s));
  }
  l.linked = true;
  return {};
}

// The one ring of slots, semaphores and index words every NET peer shares
// (made with the first NET peer), and the proxy worker that runs it.
Status PeerExecutor::setup_net_ring() {
  if (peer_links_.tx_slots != nullptr) return {};
  devmem::Region* region = devmem::region_of(self_.engine_mem);
  peer_links_.tx_slots = static_cast<uint8_t*>(
      region->allocate(kPeerSlots * self_.slot_bytes, 4096, "engine mesh send slots"));
  peer_links_.rx_slots = static_cast<uint8_t*>(
      region->allocate(kPeerSlots * self_.slot_bytes, 4096, "engine mesh receive slots"));
  if (peer_links_.tx_slots == nullptr || peer_links_.rx_slots == nullptr) {
    peer_links_.tx_slots = nullptr;
    return engine_error("engine memory is full (mesh slots)");
  }
  for (volatile uint32_t*& w : peer_links_.sem) {
    if (NRT_STATUS s = nrt_emu_devmem_semaphore(self_.engine_mem, &w); s != NRT_SUCCESS)
      return engine_error(st("semaphore", s));
  }
  if (NRT_STATUS s = nrt_emu_devmem_trigger_word(self_.engine_mem, &peer_links_.trigger);
      s != NRT_SUCCESS)
    return engine_error(st("trigger word", s));
  // The op's index words; the connection per descriptor is found by peer.
  if (NRT_STATUS s =
          nrt_emu_devmem_connector(self_.engine_mem, 1, nullptr, nullptr, &peer_links_.send_conn);
      s != NRT_SUCCESS)
    return engine_error(st("mesh send connector", s));
  if (NRT_STATUS s =
          nrt_emu_devmem_connector(self_.engine_mem, 1, nullptr, nullptr, &peer_links_.recv_conn);
      s != NRT_SUCCESS)
    return engine_error(st("mesh receive connector", s));
  if (NRT_STATUS s = nrt_emu_devmem_channel(
          self_.engine_mem, NEC_MAX_CHANNELS /* the mesh connections' channel */, ENC_PATTERN_MESH,
          peer_links_.recv_conn, peer_links_.send_conn, &peer_links_.chan);
      s != NRT_SUCCESS)
    return engine_error(st("mesh enc_channel", s));
  if (self_.proxy == nullptr) {
    if (NRT_STATUS s = nrt_emu_proxy_acquire(self_.comm, self_.local, self_.local, &self_.proxy);
        s != NRT_SUCCESS)
      return engine_error(st("nrt_emu_proxy_acquire", s));
  }
  return {};
}

Status PeerExecutor::build_plan(Plan& p) {
  std::vector<int> everyone(static_cast<size_t>(self_.n));
  for (int q = 0; q < self_.n; ++q) everyone[static_cast<size_t>(q)] = q;
  if (Status s = link_peers(ENC_CONNECTIVITY_MESH, everyone); !s) return s;
  p.peer = true;
  const uint64_t es = dtype_size(p.desc.dtype);
  const uint64_t slice =
      (self_.slot_bytes - kStampBytes) / es;  // every slice starts with the stamp (ccom.h)
  const uint64_t elems = p.desc.count;
  const int n = self_.n;
  if (p.desc.coll == Coll::AllToAll) {
    p.copy_src = p.copy_dst = static_cast<uint64_t>(self_.rank) * elems;
    p.copy_elems = elems;
    for (uint64_t off = 0; off < elems; off += slice) {
      const uint64_t len = std::min(slice, elems - off);
      for (int s = 1; s < n; ++s) {
        const int to = (self_.rank + s) % n, from = (self_.rank - s + n) % n;
        p.sends.push_back({to, static_cast<uint64_t>(to) * elems + off, len});
        p.recvs.push_back({from, static_cast<uint64_t>(from) * elems + off, len});
      }
    }
  } else {  // permute
    if ((p.send_to == self_.rank) != (p.recv_from == self_.rank))
      return engine_error(
          "permute: a rank that sends to itself must also receive from itself (send_to " +
          std::to_string(p.send_to) + ", recv_from " + std::to_string(p.recv_from) + ")");
    if (p.send_to == self_.rank) {
      p.copy_elems = elems;
    } else {
      for (uint64_t off = 0; off < elems; off += slice) {
        const uint64_t len = std::min(slice, elems - off);
        if (p.send_to >= 0) p.sends.push_back({p.send_to, off, len});
        if (p.recv_from >= 0) p.recvs.push_back({p.recv_from, off, len});
      }
    }
  }
  return build_block(p);
}

Status PeerExecutor::build_block(Plan& p) {
  const uint64_t es = dtype_size(p.desc.dtype);
  uint64_t tx = 0, rx = 0;
  for (const PeerItem& i : p.sends)
    tx += peer_links_.peers[static_cast<size_t>(i.peer)].net ? 1 : 0;
  for (const PeerItem& i : p.recvs)
    rx += peer_links_.peers[static_cast<size_t>(i.peer)].net ? 1 : 0;
  if (tx == 0 && rx == 0) return {};
  if (tx > INT32_MAX || rx > INT32_MAX)
    return engine_error("an operation of more than 2^31 slices");
  BlockOpSpec spec{
      {peer_links_.sem[0], peer_links_.sem[1], peer_links_.sem[2], peer_links_.sem[3]}};
  spec.tx = static_cast<uint32_t>(tx);
  spec.rx = static_cast<uint32_t>(rx);
  spec.credits = kPeerSlots;
  spec.data_type_sz = es;
  spec.variable_peer = true;
  spec.basic_block_id = 2;
  spec.func_rel_op_idx = 1000;
  spec.enc_channel = peer_links_.chan;
  NetBlock b = make_block(spec);
  b.channel = -1;
  uint64_t e = 0;
  for (const PeerItem& i : p.sends) {
    const PeerLink& l = peer_links_.peers[static_cast<size_t>(i.peer)];
    if (l.net)
      add_send(b, peer_links_.tx_slots + (e++ % kPeerSlots) * self_.slot_bytes, l.tx_mhandle,
               i.elems * es + kStampBytes, i.peer);
  }
  e = 0;
  for (const PeerItem& i : p.recvs) {
    const PeerLink& l = peer_links_.peers[static_cast<size_t>(i.peer)];
    if (l.net)
      add_recv(b, peer_links_.rx_slots + (e++ % kPeerSlots) * self_.slot_bytes, l.rx_mhandle,
               i.elems * es + kStampBytes, i.peer);
  }
  close_fifos(b);
  p.peer_block.push_back(std::move(b));
  return {};
}

// The peer links' progress through one execution.
// (The DIRECT links' counts are the links' own, cumulative: PeerLink.)
struct PeerRun {
  size_t si = 0, ri = 0;      // the plan's sends / receives done
  uint64_t ntx = 0, nrx = 0;  // NET entries sent / consumed
  uint64_t pub_rx = 0;        // NET receive descriptors released
};

namespace {

// Every slice starts with the collective's stamp, as on the rings; the
// permute's partners are not in it (each rank names its own). A network
// slice is published after this; a DIRECT one (number g on its link) is
// sealed by its stamp, written after the payload.
void put_slice(uint8_t* slot, const SliceStamp& stamp, const uint8_t* from, size_t bytes) {
  std::memcpy(slot, &stamp, sizeof stamp);
  std::memcpy(slot + kStampBytes, from, bytes);
}
void put_slice(uint8_t* slot, const SliceStamp& stamp, const uint8_t* from, size_t bytes,
               uint64_t g) {
  std::memcpy(slot + kStampBytes, from, bytes);
  seal_slice(slot, stamp, g);
}

// A received slice's payload into the output: copied, or combined with
// what is there (and the average finished after the last combination).
void take_slice(const Plan& p, const PeerItem& it, int ranks, uint8_t* to, const uint8_t* payload) {
  if (it.reduce) {
    reduce(p.desc.dtype, p.desc.op, to, to, payload, it.elems);
  } else {
    std::memcpy(to, payload, it.elems * dtype_size(p.desc.dtype));
  }
  if (it.avg) avg_finish(p.desc.dtype, to, it.elems, ranks);
}

}  // namespace

bool PeerExecutor::send_slices(const Plan& p, PeerRun& r, const SliceStamp& stamp) {
  const uint64_t es = dtype_size(p.desc.dtype);
  bool moved = false;
  while (r.si < p.sends.size()) {
    const PeerItem& it = p.sends[r.si];
    if (r.ri < it.after) break;  // it sends what those receives combine
    PeerLink& l = peer_links_.peers[static_cast<size_t>(it.peer)];
    const size_t bytes = it.elems * es;
    const auto* in = static_cast<const uint8_t*>(it.from_out ? p.recv : p.send);
    if (l.net) {
      if (r.ntx >= static_cast<uint64_t>(load32(peer_links_.sem[0])) + load32(peer_links_.sem[1]))
        break;
      put_slice(peer_links_.tx_slots + (r.ntx % kPeerSlots) * self_.slot_bytes, stamp,
                in + it.off * es, bytes);
      publish(post_word(peer_links_.send_conn, true));
      ++r.ntx;
    } else {
      const uint64_t g = l.tx_count;
      if (!slot_free(g, l.tx_head_seen, l.tx_head)) break;
      put_slice(l.tx_slots + (g % kSlots) * self_.slot_bytes, stamp, in + it.off * es, bytes, g);
      bell::ring(links_.peer_bell(it.peer));
      ++l.tx_count;
    }
    ++r.si;
    moved = true;
  }
  return moved;
}

Result<bool> PeerExecutor::receive_slices(const Plan& p, PeerRun& r, const SliceStamp& stamp) {
  const uint64_t es = dtype_size(p.desc.dtype);
  auto* out = static_cast<uint8_t*>(p.recv);
  bool moved = false;
  while (r.ri < p.recvs.size()) {
    const PeerItem& it = p.recvs[r.ri];
    if (r.si < it.after) break;  // a send still reads what it would change
    PeerLink& l = peer_links_.peers[static_cast<size_t>(it.peer)];
    if (l.net) {
      if (load32(peer_links_.sem[3]) <= r.nrx) break;
      const uint8_t* slot = peer_links_.rx_slots + (r.nrx % kPeerSlots) * self_.slot_bytes;
      if (Status s = links_.check_stamp(slot, stamp, "the network peer links", -1, it.peer); !s)
        return s.take_error();
      take_slice(p, it, self_.n, out + it.off * es, slot + kStampBytes);
      ++r.nrx;
    } else {
      const uint64_t g = l.rx_count;
      const uint8_t* slot = l.rx_slots + (g % kSlots) * self_.slot_bytes;
      if (!slice_arrived(slot, g)) break;
      if (Status s = links_.check_stamp(slot, stamp, "the direct peer link", -1, it.peer); !s)
        return s.take_error();
      take_slice(p, it, self_.n, out + it.off * es, slot + kStampBytes);
      store64(l.rx_head, g + 1);
      bell::ring(links_.peer_bell(it.peer));
      ++l.rx_count;
    }
    ++r.ri;
    moved = true;
  }
  return moved;
}

Status PeerExecutor::execute(Plan& p, uint64_t execution) {
  const uint64_t es = dtype_size(p.desc.dtype);
  const auto* in = static_cast<const uint8_t*>(p.send);
  auto* out = static_cast<uint8_t*>(p.recv);
  if (p.copy_elems > 0 && in + p.copy_src * es != out + p.copy_dst * es)
    std::memmove(out + p.copy_dst * es, in + p.copy_src * es, p.copy_elems * es);
  const NetBlock* nb = p.peer_block.empty() ? nullptr : &p.peer_block[0];
  NetTask task;
  if (nb != nullptr) {
    if (Status s = task.submit(
            self_.proxy, {nb}, {peer_links_.trigger},
            {peer_links_.sem[0], peer_links_.sem[1], peer_links_.sem[2], peer_links_.sem[3]},
            execution);
        !s)
      return s;
  }
  const uint64_t net_tx = nb ? nb->op.tx_entry_cnt : 0, net_rx = nb ? nb->op.rx_entry_cnt : 0;
  PeerRun r;
  bool tx_closed = net_tx == 0, rx_closed = net_rx == 0;
  auto waiting_for = [&] {
    std::string where = r.ri < p.recvs.size() ? "slice " + std::to_string(r.ri) + " of " +
                                                    std::to_string(p.recvs.size()) + " from " +
                                                    links_.describe_peer(p.recvs[r.ri].peer)
                                              : "the network proxy to finish the task";
    if (r.si < p.sends.size()) where += ", room at " + links_.describe_peer(p.sends[r.si].peer);
    return where;
  };
  const SliceStamp stamp = stamp_of(p, execution);
  const auto pass = [&]() -> Result<Progress> {
    bool moved = false;
    while (nb != nullptr && r.pub_rx < net_rx && r.pub_rx < r.nrx + kPeerSlots) {
      publish(post_word(peer_links_.recv_conn, false));
      ++r.pub_rx;
      moved = true;
    }
    moved = send_slices(p, r, stamp) || moved;
    auto received = receive_slices(p, r, stamp);
    if (!received) return received.take_error();
    moved = *received || moved;
    // The end of the execution on the NET words, as on the rings.
    if (!tx_closed && r.ntx == net_tx) {
      publish(post_word(peer_links_.send_conn, true));
      publish(post_word(peer_links_.send_conn, true));
      tx_closed = moved = true;
    }
    if (!rx_closed && r.nrx == net_rx) {
      publish(post_word(peer_links_.recv_conn, false));
      publish(post_word(peer_links_.recv_conn, false));
      rx_closed = moved = true;
    }
    const bool done = r.si == p.sends.size() && r.ri == p.recvs.size() && tx_closed && rx_closed;
    return Progress{moved, done};
  };
  return loop_.run(task, pass, waiting_for);
}

}  // namespace nrt_emu::engine
