#include "system_source.h"

#include <nccom/util/bounded_file.h>

#include <algorithm>

namespace nccom::topo_nccl {
namespace {

std::string where(const std::string& source, const topo::XmlNode& node) {
  return source + ":" + std::to_string(node.line()) + ":" + std::to_string(node.column());
}

std::string joinRanks(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < 16; ++i)
    out += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  if (ranks.size() > 16) out += ", ...";
  return out;
}

}  // namespace

std::vector<int> missingRanks(const topo::TopoSystem& system, const LocalShare& share) {
  std::vector<int> missing;
  for (const int r : share.ranks) {
    if (system.gpuIndexOfRank(r) < 0) missing.push_back(r);
  }
  return missing;
}

Result<topo::TopoSystem> checkSystemXml(std::string_view text, const std::string& source,
                                        const LocalShare& share) {
  topo::XmlLimits limits;
  limits.maxInputBytes = kMaxTopologyFileBytes;
  auto doc = topo::parseXml(text, source, limits);
  if (!doc) return doc.take_error();
  const topo::XmlNode& root = *doc->root;
  if (root.name() != "system") {
    return make_error(NRT_INVALID, where(source, root) + ": root element is <" + root.name() +
                                       ">, a topology must be a <system> document");
  }
  auto sys = topo::buildSystem(*doc);
  if (!sys) return sys.take_error();
  const auto missing = missingRanks(*sys, share);
  if (!missing.empty()) {
    return make_error(NRT_INVALID, where(source, root) +
                                       ": <system> has no <gpu rank> for local rank" +
                                       (missing.size() > 1 ? "s " : " ") + joinRanks(missing) +
                                       "; every local rank of this node (" + share.rankList() +
                                       ") must appear as a gpu rank");
  }
  return sys;
}

// A file written for another node of a homogeneous cluster (or with the
// ranks of a one-node run) carries other ranks: when it holds exactly as
// many <gpu> as this node has local ranks and none of them is one of this
// node's, its gpus in `dev` order take this node's ranks in order — as
// upstream NCCL assigns ranks to the devices of a topology file.
Result<std::string> rebaseRanks(const std::string& text, const std::string& source,
                                const LocalShare& share) {
  topo::XmlLimits limits;
  limits.maxInputBytes = kMaxTopologyFileBytes;
  auto doc = topo::parseXml(text, source, limits);
  if (!doc) return doc.take_error();
  std::vector<topo::XmlNode*> gpus;
  std::vector<topo::XmlNode*> stack{doc->root.get()};
  while (!stack.empty()) {
    topo::XmlNode* n = stack.back();
    stack.pop_back();
    if (n->name() == "gpu") gpus.push_back(n);
    for (const auto& c : n->children()) stack.push_back(c.get());
  }
  if (gpus.size() != share.ranks.size()) return text;  // checked (and refused) by the caller
  std::vector<std::pair<int64_t, topo::XmlNode*>> byDev;
  for (topo::XmlNode* g : gpus) {
    auto rank = g->getIntOr("rank", -1);
    if (!rank) return rank.take_error();
    if (std::find(share.ranks.begin(), share.ranks.end(), *rank) != share.ranks.end()) return text;
    auto dev = g->getInt("dev");
    if (!dev) return dev.take_error();
    byDev.emplace_back(*dev, g);
  }
  std::sort(byDev.begin(), byDev.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> ranks(share.ranks.begin(), share.ranks.end());
  std::sort(ranks.begin(), ranks.end());
  for (std::size_t i = 0; i < byDev.size(); ++i) {
    if (auto st = byDev[i].second->setInt("rank", ranks[i]); !st) return st.take_error();
  }
  return topo::writeXml(*doc->root);
}

Result<std::string> loadTopologyFile(const std::string& path, const LocalShare& share) {
  auto text = read_bounded_file(path, kMaxTopologyFileBytes, "topology file '" + path + "'");
  if (!text) return text.take_error();
  auto rebased = rebaseRanks(*text, path, share);
  if (!rebased) return rebased.take_error();
  auto sys = checkSystemXml(*rebased, path, share);
  if (!sys) return sys.take_error();
  return rebased;
}

}  // namespace nccom::topo_nccl
