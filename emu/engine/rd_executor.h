// rd_executor.h — all-reduce and all-gather of one slice by recursive
// doubling over the peer links (the algorithm: rd_executor.cc).
#pragma once

#include "links.h"
#include "peer_executor.h"
#include "plan.h"
#include "program.h"
#include "rank_context.h"
#include "status.h"

#include <cstdint>

namespace nrt_emu::engine {

// RdExecutor: which calls run recursive doubling (its thresholds), their
// plans, and their executions, which the peer executor runs.
class RdExecutor {
 public:
  // The largest all-reduce and all-gather output in bytes that run it, as
  // NEURON_RT_EMU_ALLREDUCE_RD_BYTES and NEURON_RT_EMU_ALLGATHER_RD_BYTES
  // give them (kAuto when unset) until choose_limits.
  struct Limits {
    uint64_t allreduce;
    uint64_t allgather;
  };
  static constexpr uint64_t kAuto = UINT64_MAX;  // chosen once the hosts are known

  RdExecutor(const RankContext& self, const Links& links, PeerExecutor& peers, Limits limits)
      : self_(self), links_(links), peers_(peers), limits_(limits) {}

  // Once the hosts are known: the kAuto limits chosen, both capped to one
  // slice (a message travels in one, after its stamp), and logged.
  void choose_limits(bool across_hosts);
  const Limits& limits() const { return limits_; }
  // Whether a call runs recursive doubling, its plan, and one execution.
  bool runs(const CollDesc& d) const;
  Status build_plan(Plan& p);
  Status execute(Plan& p, uint64_t execution);
  uint64_t executions() const { return executions_; }  // logged at close

 private:
  Status build_gather_plan(Plan& p);
  Status start_plan(Plan& p, int p2);

  const RankContext& self_;
  const Links& links_;  // no recursive doubling where there are kangaRing lanes
  PeerExecutor& peers_;
  Limits limits_;
  uint64_t executions_ = 0;
};

}  // namespace nrt_emu::engine
