// ncclTopoPostset and ncclBuildRings.
#include "rings/postset.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace nccom::rings {
namespace {

Error invalid(std::string msg) { return make_error(NRT_INVALID, "postset: " + std::move(msg)); }
Error internal(std::string msg) { return make_error(NRT_FAILURE, std::move(msg)); }

// Fragments may not have come through decodeFragment: every entry the stitch
// indexes with must be a rank.
Status checkRanges(const TopoRanks& f, int r, int nRanks, int n) {
  for (int c = 0; c < n; ++c) {
    struct Field {
      const char* name;
      int value;
      int lo;
    };  // prev/next may be -1
    const Field fields[] = {{"ringRecv", f.ringRecv[c], 0},
                            {"ringSend", f.ringSend[c], 0},
                            {"ringPrev", f.ringPrev[c], -1},
                            {"ringNext", f.ringNext[c], -1}};
    for (const Field& x : fields) {
      if (x.value < x.lo || x.value >= nRanks)
        return invalid("rank " + std::to_string(r) + "'s fragment: " + x.name + "[" +
                       std::to_string(c) + "] = " + std::to_string(x.value) + " outside [" +
                       std::to_string(x.lo) + ", " + std::to_string(nRanks) + ")");
    }
  }
  return {};
}

Status checkInput(const PostsetInput& in) {
  if (in.nRanks < 1) return invalid("nRanks " + std::to_string(in.nRanks) + " must be >= 1");
  if (in.myRank < 0 || in.myRank >= in.nRanks)
    return invalid("myRank " + std::to_string(in.myRank) + " outside [0, " +
                   std::to_string(in.nRanks) + ")");
  if (in.nChannels < 1 || in.nChannels > kMaxChannels)
    return invalid("nChannels " + std::to_string(in.nChannels) + " outside [1, 32]");
  if (in.fragments.size() != static_cast<std::size_t>(in.nRanks))
    return invalid(std::to_string(in.fragments.size()) + " fragments for " +
                   std::to_string(in.nRanks) + " ranks");
  for (int r = 0; r < in.nRanks; ++r) {
    const int n = in.fragments[r].activeChannels();
    if (n != in.nChannels)
      return invalid("rank " + std::to_string(r) + "'s fragment has " + std::to_string(n) +
                     " channels, this rank has " + std::to_string(in.nChannels) +
                     ": every rank must preset the same channel count");
    if (Status st = checkRanges(in.fragments[r], r, in.nRanks, n); !st) return st;
  }
  const int nNodes = static_cast<int>(in.nodesFirstRank.size());
  if (nNodes < 1 || nNodes > in.nRanks)
    return invalid(std::to_string(nNodes) + " nodes for " + std::to_string(in.nRanks) + " ranks");
  std::vector<char> seen(in.nRanks, 0);
  for (int j = 0; j < nNodes; ++j) {
    const int f = in.nodesFirstRank[j];
    if (f < 0 || f >= in.nRanks)
      return invalid("nodesFirstRank[" + std::to_string(j) + "] = " + std::to_string(f) +
                     " outside [0, " + std::to_string(in.nRanks) + ")");
    if (seen[f]++)
      return invalid("nodesFirstRank[" + std::to_string(j) + "] = " + std::to_string(f) +
                     " is also the first rank of another node");
  }
  if (!in.nodeOrder.empty()) return checkNodeOrder(in.nodeOrder, nNodes);
  return {};
}

// prev[next[x]] == x for every rank of every ring channel.
Status checkPrevNext(int nrings, int nranks, std::span<const int> prev, std::span<const int> next) {
  for (int c = 0; c < nrings; ++c) {
    const std::size_t row = static_cast<std::size_t>(c) * nranks;
    for (int x = 0; x < nranks; ++x) {
      const int nx = next[row + x];  // in range: buildRings passed
      if (prev[row + nx] != x)
        return internal("Error : ring " + std::to_string(c) + " has next[" + std::to_string(x) +
                        "] = " + std::to_string(nx) + " but prev[" + std::to_string(nx) +
                        "] = " + std::to_string(prev[row + nx]) + ": the fragments disagree");
    }
  }
  return {};
}

}  // namespace

Status checkNodeOrder(std::span<const int> order, int nNodes) {
  if (order.size() != static_cast<std::size_t>(nNodes))
    return invalid("node order has " + std::to_string(order.size()) +
                   " entries, expected a permutation of " + std::to_string(nNodes) + " nodes");
  std::vector<char> seen(nNodes, 0);
  for (std::size_t p = 0; p < order.size(); ++p) {
    const int j = order[p];
    if (j < 0 || j >= nNodes)
      return invalid("node order[" + std::to_string(p) + "] = " + std::to_string(j) +
                     " outside [0, " + std::to_string(nNodes) + "): not a permutation");
    if (seen[j]++)
      return invalid("node order[" + std::to_string(p) + "] = " + std::to_string(j) +
                     " repeats a node: not a permutation");
  }
  return {};
}

Status buildRings(int nrings, std::span<int> rings, int rank, int nranks,
                  std::span<const int> next) {
  const std::size_t need = static_cast<std::size_t>(std::max(nrings, 0)) * std::max(nranks, 0);
  if (nrings < 0 || nranks < 1 || rank < 0 || rank >= nranks || rings.size() < need ||
      next.size() < need)
    return invalid("buildRings: " + std::to_string(nrings) + " rings of " + std::to_string(nranks) +
                   " ranks from rank " + std::to_string(rank) + " do not fit the given tables");
  std::vector<char> present(nranks);
  for (int r = 0; r < nrings; ++r) {
    const std::size_t row = static_cast<std::size_t>(r) * nranks;
    int cur = rank;
    for (int i = 0; i < nranks; ++i) {
      rings[row + i] = cur;
      cur = next[row + cur];
      if (cur < 0 || cur >= nranks) break;  // cannot be followed; reported below
    }
    if (cur != rank)
      return internal("Error : ring " + std::to_string(r) + " does not loop back to start (" +
                      std::to_string(cur) + " != " + std::to_string(rank) + ")");
    std::fill(present.begin(), present.end(), 0);
    for (int i = 0; i < nranks; ++i) present[rings[row + i]] = 1;
    for (int x = 0; x < nranks; ++x) {
      if (!present[x])
        return internal("Error : ring " + std::to_string(r) + " does not contain rank " +
                        std::to_string(x));
    }
  }
  return {};
}

Result<Rings> postset(const PostsetInput& in) {
  if (Status s = checkInput(in); !s) return s.take_error();
  const int nranks = in.nRanks, n = in.nChannels;
  const int nNodes = static_cast<int>(in.nodesFirstRank.size());
  std::vector<int> order = in.nodeOrder;
  if (order.empty()) {
    order.resize(nNodes);
    std::iota(order.begin(), order.end(), 0);
  }
  const int nOut = std::min(kMaxChannels, 2 * n);  // channel doubling, hard cap 32

  // Tables [c * nranks + rank] for the nOut ring channels.
  std::vector<int> prev(static_cast<std::size_t>(nOut) * nranks), next(prev.size());
  for (int c = 0; c < n; ++c) {
    const std::size_t row = static_cast<std::size_t>(c) * nranks;
    for (int r = 0; r < nranks; ++r) {
      prev[row + r] = in.fragments[r].ringPrev[c];
      next[row + r] = in.fragments[r].ringNext[c];
    }
    // The stitch: node order[p]'s head receives from order[p-1]'s tail.
    for (int p = 0; p < nNodes; ++p) {
      const TopoRanks& node = in.fragments[in.nodesFirstRank[order[p]]];
      const TopoRanks& before = in.fragments[in.nodesFirstRank[order[(p - 1 + nNodes) % nNodes]]];
      const TopoRanks& after = in.fragments[in.nodesFirstRank[order[(p + 1) % nNodes]]];
      prev[row + node.ringRecv[c]] = before.ringSend[c];
      next[row + node.ringSend[c]] = after.ringRecv[c];
    }
  }
  for (int c = n; c < nOut; ++c) {  // the doubled half: identical copy of channel c - n
    std::copy_n(prev.begin() + static_cast<std::ptrdiff_t>(c - n) * nranks, nranks,
                prev.begin() + static_cast<std::ptrdiff_t>(c) * nranks);
    std::copy_n(next.begin() + static_cast<std::ptrdiff_t>(c - n) * nranks, nranks,
                next.begin() + static_cast<std::ptrdiff_t>(c) * nranks);
  }

  std::vector<int> user(prev.size());
  if (Status s = buildRings(nOut, user, in.myRank, nranks, next); !s) return s.take_error();
  if (Status s = checkPrevNext(nOut, nranks, prev, next); !s) return s.take_error();

  Rings out;
  out.baseChannels = n;
  out.nChannels = nOut;
  out.channels.resize(nOut);
  for (int c = 0; c < nOut; ++c) {
    const std::size_t row = static_cast<std::size_t>(c) * nranks;
    RingChannel& ch = out.channels[c];
    ch.prev = prev[row + in.myRank];
    ch.next = next[row + in.myRank];
    ch.userRanks.assign(user.begin() + static_cast<std::ptrdiff_t>(row),
                        user.begin() + static_cast<std::ptrdiff_t>(row + nranks));
    ch.duplicate = c >= n;
  }
  return out;
}

}  // namespace nccom::rings
