// Ring programs of the collectives (program.h). The orders follow the usual
// ring algorithms: a reduce-scatter pass (N-1 steps, each rank adding its
// input to a travelling partial sum) followed, for all-reduce, by an
// all-gather pass (N-1 steps forwarding finished pieces); chains for
// broadcast (from the root) and reduce (towards the root).
#include "program.h"

#include <algorithm>

namespace nrt_emu::engine {
namespace {

int wrap(int x, int n) { return ((x % n) + n) % n; }

void add(ChannelProgram* p, uint32_t flags, int64_t src, int64_t dst, uint64_t elems) {
  p->steps.push_back(Step{flags, src, dst, elems});
  if (flags & kSend) ++p->sends;
  if (flags & kRecv) ++p->recvs;
}

// One round of a reduce-style pass over [off, end): n pieces of `ps`
// elements, the last ones shorter or empty.
struct Round {
  uint64_t off, ps, end;
  uint64_t at(int q) const { return std::min(end, off + static_cast<uint64_t>(q) * ps); }
  uint64_t len(int q) const { return std::min(end, at(q) + ps) - at(q); }
};

template <class Fn>
void for_each_round(uint64_t first, uint64_t last, int n, uint64_t slice, Fn fn) {
  const uint64_t full = slice * static_cast<uint64_t>(n);
  for (uint64_t off = first; off < last;) {
    const uint64_t rest = last - off;
    const uint64_t ps = rest >= full ? slice : (rest + n - 1) / n;
    const uint64_t end = off + std::min(rest, full);
    fn(Round{off, ps, end});
    off = end;
  }
}

template <class Fn>
void for_each_slice(uint64_t first, uint64_t last, uint64_t slice, Fn fn) {
  for (uint64_t off = first; off < last; off += slice) fn(off, std::min(slice, last - off));
}

uint32_t avg_flag(const CollDesc& d) { return d.op == RedOp::Avg ? kAvg : 0u; }

void all_reduce(const CollDesc& d, const Ring& r, uint64_t first, uint64_t last, uint64_t slice,
                ChannelProgram* out) {
  const int n = static_cast<int>(r.order.size());
  const int p = r.pos;
  if (n == 1) {
    for_each_slice(first, last, slice, [&](uint64_t off, uint64_t len) {
      add(out, avg_flag(d), static_cast<int64_t>(off), static_cast<int64_t>(off), len);
    });
    return;
  }
  for_each_round(first, last, n, slice, [&](const Round& rd) {
    auto at = [&](int q) { return static_cast<int64_t>(rd.at(wrap(q, n))); };
    auto len = [&](int q) { return rd.len(wrap(q, n)); };
    add(out, kSend, at(p - 1), -1, len(p - 1));
    for (int k = 1; k <= n - 2; ++k)
      add(out, kRecv | kReduce | kSend, at(p - 1 - k), -1, len(p - 1 - k));
    add(out, kRecv | kReduce | kSend | avg_flag(d), at(p), at(p), len(p));
    for (int k = 1; k <= n - 2; ++k) add(out, kRecv | kSend, -1, at(p - k), len(p - k));
    add(out, kRecv, -1, at(p + 1), len(p + 1));
  });
}

void all_gather(const CollDesc& d, const Ring& r, int rank, uint64_t first, uint64_t last,
                uint64_t slice, ChannelProgram* out) {
  const int n = static_cast<int>(r.order.size());
  const int p = r.pos;
  const auto block = [&](int q) {
    return static_cast<int64_t>(r.order[wrap(q, n)]) * static_cast<int64_t>(d.count);
  };
  for_each_slice(first, last, slice, [&](uint64_t off, uint64_t len) {
    const auto o = static_cast<int64_t>(off);
    add(out, n > 1 ? kSend : 0u, o, static_cast<int64_t>(rank) * static_cast<int64_t>(d.count) + o,
        len);
    if (n == 1) return;
    for (int k = 1; k <= n - 2; ++k) add(out, kRecv | kSend, -1, block(p - k) + o, len);
    add(out, kRecv, -1, block(p + 1) + o, len);
  });
}

void reduce_scatter(const CollDesc& d, const Ring& r, int rank, uint64_t first, uint64_t last,
                    uint64_t slice, ChannelProgram* out) {
  const int n = static_cast<int>(r.order.size());
  const int p = r.pos;
  const auto block = [&](int q) {
    return static_cast<int64_t>(r.order[wrap(q, n)]) * static_cast<int64_t>(d.count);
  };
  for_each_slice(first, last, slice, [&](uint64_t off, uint64_t len) {
    const auto o = static_cast<int64_t>(off);
    const int64_t mine = static_cast<int64_t>(rank) * static_cast<int64_t>(d.count) + o;
    if (n == 1) {
      add(out, avg_flag(d), mine, o, len);
      return;
    }
    add(out, kSend, block(p - 1) + o, -1, len);
    for (int k = 1; k <= n - 2; ++k)
      add(out, kRecv | kReduce | kSend, block(p - 1 - k) + o, -1, len);
    add(out, kRecv | kReduce | avg_flag(d), mine, o, len);
  });
}

void broadcast(const Ring& r, int root_pos, uint64_t first, uint64_t last, uint64_t slice,
               ChannelProgram* out) {
  const int n = static_cast<int>(r.order.size());
  const int dist = wrap(r.pos - root_pos, n);
  for_each_slice(first, last, slice, [&](uint64_t off, uint64_t len) {
    const auto o = static_cast<int64_t>(off);
    if (dist == 0) {
      add(out, n > 1 ? kSend : 0u, o, o, len);
    } else {
      add(out, dist < n - 1 ? kRecv | kSend : kRecv, -1, o, len);
    }
  });
}

void reduce(const CollDesc& d, const Ring& r, int root_pos, uint64_t first, uint64_t last,
            uint64_t slice, ChannelProgram* out) {
  const int n = static_cast<int>(r.order.size());
  const int dist = wrap(r.pos - root_pos - 1, n);  // the root is last in the chain
  for_each_slice(first, last, slice, [&](uint64_t off, uint64_t len) {
    const auto o = static_cast<int64_t>(off);
    if (n == 1) {
      add(out, avg_flag(d), o, o, len);
    } else if (dist == 0) {
      add(out, kSend, o, -1, len);
    } else if (dist < n - 1) {
      add(out, kRecv | kReduce | kSend, o, -1, len);
    } else {
      add(out, kRecv | kReduce | avg_flag(d), o, o, len);
    }
  });
}

}  // namespace

const char* coll_name(Coll c) {
  switch (c) {
    case Coll::AllReduce: return "all-reduce";
    case Coll::AllGather: return "all-gather";
    case Coll::ReduceScatter: return "reduce-scatter";
    case Coll::Broadcast: return "broadcast";
    case Coll::Reduce: return "reduce";
    case Coll::AllToAll: return "all-to-all";
    case Coll::Permute: return "permute";
  }
  return "an unknown collective";
}

uint64_t split_total(const CollDesc& desc) { return desc.count; }

std::vector<std::pair<uint64_t, uint64_t>> split_channels(uint64_t total, int channels,
                                                          uint64_t align) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (channels < 1) channels = 1;
  if (align == 0) align = 1;
  uint64_t per = (total + static_cast<uint64_t>(channels) - 1) / static_cast<uint64_t>(channels);
  per = (per + align - 1) / align * align;
  for (int c = 0; c < channels; ++c) {
    const uint64_t a = std::min(total, per * static_cast<uint64_t>(c));
    out.emplace_back(a, std::min(total, a + per));
  }
  return out;
}

Status ring_from_path(const int* path, int max_len, int rank_n, int rank, Ring* out) {
  *out = Ring{};
  if (path == nullptr) return engine_error("no path");
  std::vector<int> order;
  std::vector<bool> seen(static_cast<size_t>(std::max(rank_n, 0)), false);
  for (int i = 0; i < max_len; ++i) {
    const int r = path[i];
    if (r == -1) {
      for (int j = i + 1; j < max_len; ++j) {
        if (path[j] != -1)
          return engine_error("entry " + std::to_string(j) + " (rank " + std::to_string(path[j]) +
                              ") follows the padding at entry " + std::to_string(i));
      }
      break;
    }
    if (r < 0 || r >= rank_n)
      return engine_error("entry " + std::to_string(i) + " is rank " + std::to_string(r) +
                          ", outside 0.." + std::to_string(rank_n - 1));
    if (seen[static_cast<size_t>(r)])
      return engine_error("entry " + std::to_string(i) + " lists rank " + std::to_string(r) +
                          " twice");
    seen[static_cast<size_t>(r)] = true;
    order.push_back(r);
  }
  if (static_cast<int>(order.size()) != rank_n)
    return engine_error("the path holds " + std::to_string(order.size()) +
                        " ranks, the communicator " + std::to_string(rank_n));
  const auto at = std::find(order.begin(), order.end(), rank);
  if (at == order.end()) return engine_error("the path does not hold rank " + std::to_string(rank));
  out->pos = static_cast<int>(at - order.begin());
  out->order = std::move(order);
  return {};
}

Status build_ring_program(const CollDesc& desc, const Ring& ring, int rank, uint64_t first,
                          uint64_t last, uint64_t slice_elems, ChannelProgram* out) {
  *out = ChannelProgram{};
  const int n = static_cast<int>(ring.order.size());
  if (n < 1 || ring.pos < 0 || ring.pos >= n || ring.order[static_cast<size_t>(ring.pos)] != rank)
    return engine_error("the ring does not hold rank " + std::to_string(rank) + " at its position");
  if (slice_elems == 0) return engine_error("slice of 0 elements");
  if (first > last) return engine_error("empty channel range");
  int root_pos = -1;
  if (desc.coll == Coll::Broadcast || desc.coll == Coll::Reduce) {
    for (int q = 0; q < n; ++q)
      root_pos = ring.order[static_cast<size_t>(q)] == desc.root ? q : root_pos;
    if (root_pos < 0)
      return engine_error("root " + std::to_string(desc.root) + " is not a rank of the ring (0.." +
                          std::to_string(n - 1) + ")");
  }
  switch (desc.coll) {
    case Coll::AllReduce: all_reduce(desc, ring, first, last, slice_elems, out); break;
    case Coll::AllGather: all_gather(desc, ring, rank, first, last, slice_elems, out); break;
    case Coll::ReduceScatter:
      reduce_scatter(desc, ring, rank, first, last, slice_elems, out);
      break;
    case Coll::Broadcast: broadcast(ring, root_pos, first, last, slice_elems, out); break;
    case Coll::Reduce: reduce(desc, ring, root_pos, first, last, slice_elems, out); break;
    case Coll::AllToAll:
    case Coll::Permute:
      return engine_error(std::string(coll_name(desc.coll)) +
                          " does not run on rings (it uses the peer links)");
  }
  return {};
}

}  // namespace nrt_emu::engine
