// Links (links.h): the ring channels read from libnccom and connected, the
// kangaRing lanes of a Trn3 Switch-V1 node, mapping a peer's engine memory
// and the send side of a DIRECT hop into it; the slice stamps.
#include "links.h"

#include "../device_memory.h"
#include "../runtime_log.h"
#include "plan.h"

#include <nccom/nccl_ptr.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nrt_emu::engine {

Links::~Links() {
  for (Channel& c : chans_) {
    if (c.recv.mhandle != nullptr)
      (void)self_.t->neuronNetDeregMr(self_.comm, ENC_PATTERN_RING, c.id, false, NET_RECV_COMM,
                                      c.recv.mhandle);
    if (c.send.mhandle != nullptr)
      (void)self_.t->neuronNetDeregMr(self_.comm, ENC_PATTERN_RING, c.id, true, NET_SEND_COMM,
                                      c.send.mhandle);
  }
  for (auto* maps : {&peer_maps_, &peer_user_maps_}) {
    for (Mapping& m : *maps) {
      if (m.base != nullptr) munmap(m.base, m.bytes);
    }
  }
  if (bell_ != nullptr) bell::unregister_local(bell_);
}

// The send side of a DIRECT hop: the receive slots and head counter of c.next,
// at the offsets its card gave, in its mapped memory (same machine only).
Status Links::map_direct_send(Channel& c, uint64_t slots, uint64_t head, const std::string& what) {
  const PeerCard& p = cards_[static_cast<size_t>(c.next)];
  const PeerCard& me = cards_[static_cast<size_t>(self_.rank)];
  if (std::strncmp(p.hostname, me.hostname, sizeof me.hostname) != 0)
    return engine_error(
        what + " " + std::to_string(c.id) + ": the hop to rank " + std::to_string(c.next) +
        " is not a network hop, but that rank runs on machine '" + p.hostname + "', not '" +
        me.hostname + "'; direct copies need one machine (give the ranks distinct host ids)");
  if (Status s = map_peer(c.next); !s) return s;
  const Mapping& m = peer_maps_[static_cast<size_t>(c.next)];
  auto* b = static_cast<uint8_t*>(m.base);
  if (slots + kSlots * self_.slot_bytes > m.bytes || head + 8 > m.bytes)
    return engine_error("rank " + std::to_string(c.next) +
                        "'s engine card has offsets outside its memory");
  c.send.slots = b + slots;
  c.send.head = reinterpret_cast<volatile uint64_t*>(b + head);
  return {};
}

// kangaRing lanes: libnccom's paths when it built some and
// every rank is on this host; lane k = engine channel k, so at most as many
// lanes as ring channels. A multi-host communicator keeps its ring channels
// for everything: the paths cover one node's ranks only.
Status Links::build_kanga_lanes(const nccl_comm_info_t& info) {
  if (info.kangaring_channel_n <= 0) return {};
  if (info.node_n != 1) {
    nrt_emu::log::message(
        nrt_emu::log::Level::Info,
        "[engine rank %d] %d kangaRing paths not used: the ranks are on %d hosts (the paths "
        "cover one node; every collective runs on the ring channels)",
        self_.rank, info.kangaring_channel_n, info.node_n);
    return {};
  }
  const int lanes = std::min<int>(info.kangaring_channel_n, static_cast<int>(chans_.size()));
  for (int k = 0; k < lanes; ++k) {
    Channel ch;
    ch.id = k;
    if (Status s = ring_from_path(info.kangaring_paths[k], 64, self_.n, self_.rank, &ch.ring); !s)
      return with_context("kangaRing path " + std::to_string(k) + ": ", s.error());
    ch.next = ch.ring.order[static_cast<size_t>((ch.ring.pos + 1) % self_.n)];
    ch.prev = ch.ring.order[static_cast<size_t>((ch.ring.pos + self_.n - 1) % self_.n)];
    std::string text;
    for (int r : ch.ring.order) {
      text += (text.empty() ? "" : " ") + std::to_string(r);
      kanga_sum_ = kanga_sum_ * 131u + static_cast<uint32_t>(r) + 1u;
    }
    nrt_emu::log::message(nrt_emu::log::Level::Info, "[engine rank %d] kangaRing lane %d: %s",
                          self_.rank, k, text.c_str());
    kanga_.push_back(std::move(ch));
  }
  return {};
}

namespace {

// Maps another process's memfd region (through its /proc fd entry).
Status map_region(int r, int32_t pid, int32_t fd_number, uint64_t bytes, int prot, const char* what,
                  void** out) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd_number);
  const int fd =
      open(path.c_str(), (prot & PROT_WRITE) ? O_RDWR | O_CLOEXEC : O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return engine_error("cannot open rank " + std::to_string(r) + "'s " + what + " " + path + ": " +
                        std::strerror(errno));
  void* base = mmap(nullptr, bytes, prot, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (base == MAP_FAILED)
    return engine_error("cannot map rank " + std::to_string(r) + "'s " + what + ": " +
                        std::strerror(err));
  *out = base;
  return {};
}

}  // namespace

Status Links::map_peer(int r) {
  Mapping& m = peer_maps_[static_cast<size_t>(r)];
  if (m.base != nullptr) return {};
  const PeerCard& p = cards_[static_cast<size_t>(r)];
  if (Status s = map_region(r, p.pid, p.fd, p.region_bytes, PROT_READ | PROT_WRITE, "engine memory",
                            &m.base);
      !s)
    return s;
  m.bytes = p.region_bytes;
  if (p.bell > m.bytes || m.bytes - p.bell < sizeof(bell::Bell) ||
      p.bell % alignof(bell::Bell) != 0)
    return engine_error("rank " + std::to_string(r) +
                        "'s engine card has its doorbell outside its memory");
  peer_bells_[static_cast<size_t>(r)] =
      reinterpret_cast<bell::Bell*>(static_cast<uint8_t*>(m.base) + p.bell);
  return {};
}

Result<const uint8_t*> Links::referenced_payload(int r, const uint8_t* slot, uint64_t bytes) {
  SliceRef ref;
  std::memcpy(&ref, slot + kStampBytes, sizeof ref);
  const PeerCard& p = cards_[static_cast<size_t>(r)];
  if (ref.bytes != bytes || ref.offset > p.user_bytes || p.user_bytes - ref.offset < bytes)
    return engine_error(describe_peer(r) + " passed a slice of " + std::to_string(ref.bytes) +
                        " bytes at offset " + std::to_string(ref.offset) +
                        " of its device memory (" + std::to_string(p.user_bytes) + " bytes); " +
                        std::to_string(bytes) + " were due");
  if (peer_user_maps_.empty()) peer_user_maps_.assign(static_cast<size_t>(self_.n), Mapping{});
  Mapping& m = peer_user_maps_[static_cast<size_t>(r)];
  if (m.base == nullptr) {
    if (Status s =
            map_region(r, p.pid, p.user_fd, p.user_bytes, PROT_READ, "device memory", &m.base);
        !s)
      return s.take_error();
    m.bytes = p.user_bytes;
  }
  return static_cast<const uint8_t*>(m.base) + ref.offset;
}

// The first `channels` rings libnccom built, each checked and rotated to
// start at its lowest rank.
Status Links::read_rings(const nccl_comm_info_t& info, int channels) {
  for (int c = 0; c < channels; ++c) {
    Channel ch;
    ch.id = c;
    ch.prev = info.rings[c].prev;
    ch.next = info.rings[c].next;
    const int* ur = info.rings[c].user_ranks;
    if (ur == nullptr) return engine_error("ring " + std::to_string(c) + " has no user_ranks");
    ch.ring.order.assign(ur, ur + self_.n);
    // user_ranks starts at the calling rank; every rank must index ring
    // positions alike, so the ring is rotated to start at its lowest rank.
    std::rotate(ch.ring.order.begin(), std::min_element(ch.ring.order.begin(), ch.ring.order.end()),
                ch.ring.order.end());
    ch.ring.pos = static_cast<int>(
        std::find(ch.ring.order.begin(), ch.ring.order.end(), self_.rank) - ch.ring.order.begin());
    if (ch.ring.pos >= self_.n)
      return engine_error("ring " + std::to_string(c) + " does not contain this rank");
    if (ch.ring.order[static_cast<size_t>((ch.ring.pos + 1) % self_.n)] != ch.next ||
        ch.ring.order[static_cast<size_t>((ch.ring.pos + self_.n - 1) % self_.n)] != ch.prev)
      return engine_error("ring " + std::to_string(c) + ": user_ranks disagree with prev/next");
    chans_.push_back(std::move(ch));
  }
  return {};
}

Status Links::build_channels() {
  devmem::Region* region = devmem::region_of(self_.engine_mem);
  pair_area_ = static_cast<uint8_t*>(region->allocate(
      static_cast<size_t>(self_.local_n) * pair_stride(), 4096, "engine peer rings"));
  if (pair_area_ == nullptr) return engine_error("engine memory is full (peer rings)");
  void* bell = region->allocate(64, 64, "engine doorbell");
  if (bell == nullptr) return engine_error("engine memory is full (doorbell)");
  bell_ = new (bell) bell::Bell;
  bell::register_local(bell_);
  for (Channel& c : kanga_) {  // DIRECT only: all ranks are on this host
    c.recv.slots = static_cast<uint8_t*>(
        region->allocate(kSlots * self_.slot_bytes, 4096, "kangaRing receive slots"));
    c.recv.head = static_cast<volatile uint64_t*>(region->allocate(64, 64, "kangaRing head"));
    if (c.recv.slots == nullptr || c.recv.head == nullptr)
      return engine_error("kangaRing lane " + std::to_string(c.id) + ": engine memory is full");
  }
  for (Channel& c : chans_) {
    const std::string at = "channel " + std::to_string(c.id) + ": ";
    c.recv.slots = static_cast<uint8_t*>(
        region->allocate(kSlots * self_.slot_bytes, 4096, "engine receive slots"));
    c.recv.head = static_cast<volatile uint64_t*>(region->allocate(64, 64, "engine head"));
    if (c.recv.slots == nullptr || c.recv.head == nullptr)
      return engine_error(at + "engine memory is full");
    if (self_.n == 1) continue;  // no hops: a one-rank ring only copies
    void* rc = nullptr;
    void* sc = nullptr;
    if (NRT_STATUS s =
            self_.t->neuronGetNetConnector(self_.comm, ENC_PATTERN_RING, c.id, false, &rc);
        s != NRT_SUCCESS)
      return engine_error(at + st("neuronGetNetConnector(receive)", s));
    if (NRT_STATUS s =
            self_.t->neuronGetNetConnector(self_.comm, ENC_PATTERN_RING, c.id, true, &sc);
        s != NRT_SUCCESS)
      return engine_error(at + st("neuronGetNetConnector(send)", s));
    c.recv.net = rc != nullptr;
    c.send.net = sc != nullptr;
    if (!c.recv.net && !c.send.net) continue;
    if (Status s = net_channel(c); !s) return with_context(at, s.error());
    if (c.recv.net) {
      if (NRT_STATUS s = nrt_emu_devmem_connector(self_.engine_mem, 1, nullptr, rc, &c.recv.conn);
          s != NRT_SUCCESS)
        return engine_error(at + st("receive connector", s));
      if (NRT_STATUS s = self_.t->neuronNetRegMr(
              self_.comm, ENC_PATTERN_RING, c.id, false, NET_RECV_COMM, c.recv.slots,
              kSlots * self_.slot_bytes, NCCL_PTR_HOST, &c.recv.mhandle);
          s != NRT_SUCCESS)
        return engine_error(at + st("neuronNetRegMr(receive slots)", s));
    }
    if (c.send.net) {
      c.send.slots = static_cast<uint8_t*>(
          region->allocate(kSlots * self_.slot_bytes, 4096, "engine send slots"));
      if (c.send.slots == nullptr) return engine_error(at + "engine memory is full");
      if (NRT_STATUS s = nrt_emu_devmem_connector(self_.engine_mem, 1, nullptr, sc, &c.send.conn);
          s != NRT_SUCCESS)
        return engine_error(at + st("send connector", s));
      if (NRT_STATUS s = self_.t->neuronNetRegMr(
              self_.comm, ENC_PATTERN_RING, c.id, true, NET_SEND_COMM, c.send.slots,
              kSlots * self_.slot_bytes, NCCL_PTR_HOST, &c.send.mhandle);
          s != NRT_SUCCESS)
        return engine_error(at + st("neuronNetRegMr(send slots)", s));
    }
    if (NRT_STATUS s = nrt_emu_devmem_channel(self_.engine_mem, c.id, ENC_PATTERN_RING, c.recv.conn,
                                              c.send.conn, &c.chan);
        s != NRT_SUCCESS)
      return engine_error(at + st("enc_channel", s));
  }
  return {};
}

// Semaphores and the trigger word of a channel with a network hop.
Status Links::net_channel(Channel& c) {
  volatile uint32_t** words[] = {&c.recv.hs, &c.recv.cmp, &c.send.hs, &c.send.cmp};
  for (volatile uint32_t** w : words) {
    if (NRT_STATUS s = nrt_emu_devmem_semaphore(self_.engine_mem, w); s != NRT_SUCCESS)
      return engine_error(st("semaphore", s));
  }
  if (NRT_STATUS s = nrt_emu_devmem_trigger_word(self_.engine_mem, &c.trigger); s != NRT_SUCCESS)
    return engine_error(st("trigger word", s));
  return {};
}

// The peers' regions this rank's DIRECT links write to, and their bells.
Status Links::map_direct_links() {
  peer_maps_.assign(static_cast<size_t>(self_.n), Mapping{});
  peer_bells_.assign(static_cast<size_t>(self_.n), nullptr);
  for (Channel& c : chans_) {
    if (c.send.net) continue;
    const PeerCard& p = cards_[static_cast<size_t>(c.next)];
    if (Status s = map_direct_send(c, p.recv_slots[c.id], p.head[c.id], "channel"); !s) return s;
  }
  for (Channel& c : kanga_) {
    const PeerCard& p = cards_[static_cast<size_t>(c.next)];
    if (Status s =
            map_direct_send(c, p.kanga_recv_slots[c.id], p.kanga_head[c.id], "kangaRing lane");
        !s)
      return s;
  }
  // A DIRECT receiver rings its sender's bell when it frees a slot.
  for (std::vector<Channel>* lanes : {&chans_, &kanga_}) {
    for (const Channel& c : *lanes) {
      if (self_.n == 1 || c.recv.net) continue;
      if (Status s = map_peer(c.prev); !s) return s;
    }
  }
  return {};
}

namespace {

bool reduces(Coll c) {
  return c == Coll::AllReduce || c == Coll::ReduceScatter || c == Coll::Reduce;
}
bool rooted(Coll c) { return c == Coll::Broadcast || c == Coll::Reduce; }

}  // namespace

// A call's fields that the collective ignores (the reduction of an
// all-gather, the root of an all-reduce) are left out: ranks may pass
// anything there, as NCCL lets them.
SliceStamp stamp_of(const Plan& p, uint64_t execution) {
  SliceStamp st{};
  st.magic = kStampMagic;
  st.coll = static_cast<uint8_t>(p.desc.coll);
  st.dtype = static_cast<uint8_t>(p.desc.dtype);
  st.op = reduces(p.desc.coll) ? static_cast<uint8_t>(p.desc.op) : 0;
  st.kanga = p.kanga ? 1 : 0;
  st.root = rooted(p.desc.coll) ? p.desc.root : -1;
  st.count = p.desc.count;
  st.execution = execution;
  return st;
}

std::string describe_stamp(const SliceStamp& st) {
  const auto c = static_cast<Coll>(st.coll);
  std::string out = std::string("collective #") + std::to_string(st.execution) + ": " +
                    coll_name(c) + " of " + std::to_string(st.count) + " x " +
                    dtype_name(static_cast<DType>(st.dtype));
  if (reduces(c)) out += std::string(", ") + redop_name(static_cast<RedOp>(st.op));
  if (rooted(c)) out += ", root " + std::to_string(st.root);
  return st.kanga ? out + ", kangaRing" : out;
}

Status Links::check_stamp(const uint8_t* slot, const SliceStamp& mine, const char* link, int index,
                          int peer) const {
  SliceStamp got;
  std::memcpy(&got, slot, sizeof got);
  const uint32_t how = got.by_reference;
  got.by_reference = mine.by_reference;
  got.mark = mine.mark;  // the arrival, not the collective
  if (std::memcmp(&got, &mine, sizeof got) == 0 && how <= 1) return {};
  return engine_error(
      "collective mismatch on " + std::string(link) +
      (index >= 0 ? " " + std::to_string(index) : "") + ": " + describe_peer(peer) + " sent " +
      (got.magic == kStampMagic ? "a slice of " + describe_stamp(got)
                                : std::string("a slice without a collective stamp")) +
      " (every rank must make the same collective calls in the same order)");
}

std::string Links::describe_peer(int r) const {
  if (r < 0 || static_cast<size_t>(r) >= cards_.size()) return "rank " + std::to_string(r);
  const PeerCard& p = cards_[static_cast<size_t>(r)];
  return "rank " + std::to_string(r) + " (host " + std::to_string(p.host) + ", pid " +
         std::to_string(p.pid) + " on " + p.hostname + ")";
}

}  // namespace nrt_emu::engine
