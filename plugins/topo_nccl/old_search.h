// The inherited OLD search (upstream ncclTopoCompute): a recursive depth-first
// search for rings over the system graph, tried at descending bandwidth tiers
// with the constraints relaxed one knob at a time, every attempt on a step
// budget. Our own implementation of upstream's behaviour; where its details are
// uncertain, the decisions are in docs/decisions/topo-nccl.md ("The OLD search").
//
// Pure: the system comes in (paths computed), the graph goes out, messages
// go to the SDK logger (nccom/util/log.h). Nothing else is read or written.
#pragma once

#include <nccom/topo/graph.h>
#include <nccom/topo/system.h>
#include <nccom/util/log.h>
#include <nccom/util/result.h>

#include <array>
#include <cstdint>

namespace nccom::topo_nccl {

// speedArray: the bandwidth tiers in GB/s, descending (the original's values, exactly).
inline constexpr std::array<float, 18> kSpeedTiers = {42.0F, 30.0F, 24.0F, 21.0F, 18.0F, 15.0F,
                                                      12.0F, 10.0F, 9.0F,  7.0F,  6.0F,  5.0F,
                                                      4.0F,  3.0F,  2.4F,  1.2F,  0.24F, 0.12F};
inline constexpr int64_t kGlobalBudget = 0x180000;     // steps for the whole descent
inline constexpr int64_t kAttemptBudget = 0x40000;     // steps for one attempt
inline constexpr int64_t kSameChannelsBudget = 0x400;  // ... when sameChannels is set
inline constexpr int64_t kPciOrderBudget =
    0x400;                                       // the first PCI-order try from a NET (not charged)
inline constexpr float kDuplicateFloor = 25.0F;  // channel doubling when speedIntra >= this
inline constexpr float kFallbackSpeed = 0.1F;

struct SearchBudgets {
  int64_t global = kGlobalBudget;
  int64_t attempt = kAttemptBudget;
  int64_t sameChannels = kSameChannelsBudget;
  int64_t pciOrder = kPciOrderBudget;
};

// The graph template (the original's RING template).
struct SearchRequest {
  topo::SearchPattern pattern = topo::SearchPattern::Ring;
  int crossNic = 2;  // 0, 1, 2 = auto
  int minChannels = 1;
  int maxChannels = 16;
};

struct SearchStats {
  int attempts = 0;          // calls of the recursive search (pass 1)
  int64_t steps = 0;         // recursion steps, all attempts (PCI-order tries included)
  int64_t chargedSteps = 0;  // what the global budget was charged
  bool budgetExhausted = false;
  bool optimal = false;    // an attempt reached maxChannels
  bool fellBack = false;   // no ring found: simple order
  int duplicatedFrom = 0;  // channels before doubling (0: no doubling)
};

struct SearchOutcome {
  topo::TopoGraph graph;
  SearchStats stats;
};

// The RING search over `system` (paths computed; maxWidth/totalWidth are
// computed here). Errors: a pattern other than RING ("not implemented"),
// no GPU, more than 256 GPUs, paths not computed, channel bounds outside
// 1..32. Finding no ring is not an error: the result is the fallback.
// Logs the "Pattern ..." line and one line per channel at INFO (GRAPH),
// the fallback at WARN.
Result<SearchOutcome> oldSearch(const topo::TopoSystem& system, const SearchRequest& request,
                                const SearchBudgets& budgets = {});

// Index of the first tier <= width (the last tier when none is).
int seedTier(float width);

}  // namespace nccom::topo_nccl
