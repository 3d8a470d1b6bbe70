// Log lines and the plain-text report of the ring stage.
#include "rings/summary.h"

#include "log/log.h"

#include <cstdio>

namespace nccom::rings {
namespace {

std::string joined(const std::vector<int>& v) {
  std::string s;
  for (int x : v) {
    if (!s.empty()) s += ' ';
    s += std::to_string(x);
  }
  return s;
}

}  // namespace

std::vector<std::string> channelLines(const Rings& rings) {
  std::vector<std::string> lines;
  for (int c = 0; c < rings.nChannels; ++c) {
    char prefix[64];
    std::snprintf(prefix, sizeof prefix, "Channel %02d/%02d : ", c, rings.nChannels);
    lines.push_back(prefix + joined(rings.channels[c].userRanks));
  }
  return lines;
}

std::string describe(const GraphSummary& s) {
  std::string out = "rank " + std::to_string(s.rank) + "/" + std::to_string(s.nRanks) + ": " +
                    std::to_string(s.rings.nChannels) + " ring channels (" +
                    std::to_string(s.rings.baseChannels) + " searched, doubled), " +
                    std::to_string(s.kangaRing.size()) + " kangaring paths, " +
                    std::to_string(s.mla.cycles.size()) + " mla cycles of " +
                    std::to_string(s.mla.nMlaInCycle) + " MLAs\n";
  if (s.p2p)
    out += "p2p: " + std::to_string(s.p2p->p2pnChannels) + " channels, " +
           std::to_string(s.p2p->p2pnChannelsPerPeer) + " per peer, order " +
           joined(s.p2p->p2pChannels) + "\n";
  for (int c = 0; c < s.rings.nChannels; ++c) {
    const RingChannel& ch = s.rings.channels[c];
    out += "ring " + std::to_string(c) + ": prev " + std::to_string(ch.prev) + " next " +
           std::to_string(ch.next) +
           (ch.duplicate ? " (duplicate of " + std::to_string(c - s.rings.baseChannels) + ")"
                         : std::string()) +
           " order " + joined(ch.userRanks) + "\n";
  }
  if (!s.kangaRing.empty()) {
    for (const std::string& line : kangaRingLogLines(s.kangaRing)) out += line + "\n";
  }
  for (std::size_t c = 0; c < s.mla.cycles.size(); ++c)
    out += "mla cycle " + std::to_string(c) + ": " + joined(s.mla.cycles[c]) + "\n";
  for (const MlaViolation& v : s.mla.violations) out += "mla violation: " + v.message() + "\n";
  return out;
}

void logGraphSummary(const GraphSummary& s) {
  constexpr unsigned long kSubsys = log::kInit | log::kGraph;
  if (s.rank == 0) {
    for (const std::string& line : channelLines(s.rings)) NCCOM_INFO(kSubsys, "%s", line.c_str());
  }
  if (!s.kangaRing.empty()) {
    for (const std::string& line : kangaRingLogLines(s.kangaRing))
      NCCOM_INFO(kSubsys, "%s", line.c_str());
  }
  NCCOM_INFO(kSubsys, "%s", mlaCyclesLogLine(s.mla).c_str());
}

}  // namespace nccom::rings
