// Ccom's links to same-host peers that are not set up per ring channel:
// mapping a peer's engine memory, the send side of a DIRECT hop into it, and
// the kangaRing lanes of a Trn3 Switch-V1 node.
#include "../runtime_log.h"
#include "ccom.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nrt_emu::engine {

// The send side of a DIRECT hop: the receive slots and head counter of c.next,
// at the offsets its card gave, in its mapped memory (same machine only).
Status Ccom::map_direct_send(Channel& c, uint64_t slots, uint64_t head, const std::string& what) {
  const PeerCard& p = cards_[static_cast<size_t>(c.next)];
  const PeerCard& me = cards_[static_cast<size_t>(rank_)];
  if (std::strncmp(p.hostname, me.hostname, sizeof me.hostname) != 0)
    return engine_error(
        what + " " + std::to_string(c.id) + ": the hop to rank " + std::to_string(c.next) +
        " is not a network hop, but that rank runs on machine '" + p.hostname + "', not '" +
        me.hostname + "'; direct copies need one machine (give the ranks distinct host ids)");
  if (Status s = map_peer(c.next); !s) return s;
  const Mapping& m = peer_maps_[static_cast<size_t>(c.next)];
  auto* b = static_cast<uint8_t*>(m.base);
  if (slots + kSlots * slot_bytes_ > m.bytes || head + 8 > m.bytes)
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
Status Ccom::build_kanga_lanes(const nccl_comm_info_t& info) {
  if (info.kangaring_channel_n <= 0) return {};
  if (info.node_n != 1) {
    nrt_emu::log::message(
        nrt_emu::log::Level::Info,
        "[engine rank %d] %d kangaRing paths not used: the ranks are on %d hosts (the paths "
        "cover one node; every collective runs on the ring channels)",
        rank_, info.kangaring_channel_n, info.node_n);
    return {};
  }
  const int lanes = std::min<int>(info.kangaring_channel_n, static_cast<int>(chans_.size()));
  for (int k = 0; k < lanes; ++k) {
    Channel ch;
    ch.id = k;
    if (Status s = ring_from_path(info.kangaring_paths[k], 64, n_, rank_, &ch.ring); !s)
      return with_context("kangaRing path " + std::to_string(k) + ": ", s.error());
    ch.next = ch.ring.order[static_cast<size_t>((ch.ring.pos + 1) % n_)];
    ch.prev = ch.ring.order[static_cast<size_t>((ch.ring.pos + n_ - 1) % n_)];
    std::string text;
    for (int r : ch.ring.order) {
      text += (text.empty() ? "" : " ") + std::to_string(r);
      kanga_sum_ = kanga_sum_ * 131u + static_cast<uint32_t>(r) + 1u;
    }
    nrt_emu::log::message(nrt_emu::log::Level::Info, "[engine rank %d] kangaRing lane %d: %s",
                          rank_, k, text.c_str());
    kanga_.push_back(std::move(ch));
  }
  return {};
}

// Maps another rank's engine memory (once).
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

Status Ccom::map_peer(int r) {
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

Result<const uint8_t*> Ccom::referenced_payload(int r, const uint8_t* slot, uint64_t bytes) {
  SliceRef ref;
  std::memcpy(&ref, slot + kStampBytes, sizeof ref);
  const PeerCard& p = cards_[static_cast<size_t>(r)];
  if (ref.bytes != bytes || ref.offset > p.user_bytes || p.user_bytes - ref.offset < bytes)
    return engine_error(describe_peer(r) + " passed a slice of " + std::to_string(ref.bytes) +
                        " bytes at offset " + std::to_string(ref.offset) +
                        " of its device memory (" + std::to_string(p.user_bytes) + " bytes); " +
                        std::to_string(bytes) + " were due");
  if (peer_user_maps_.empty()) peer_user_maps_.assign(static_cast<size_t>(n_), Mapping{});
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

}  // namespace nrt_emu::engine
