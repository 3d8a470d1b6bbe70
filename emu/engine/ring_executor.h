// ring_executor.h — the collectives that run over the ring channels or the
// kangaRing lanes: their per-channel slice programs and network FIFOs, and
// the executor that moves the slices over the links.
#pragma once

#include "device_loop.h"
#include "device_words.h"
#include "links.h"
#include "plan.h"
#include "program.h"
#include "rank_context.h"
#include "status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nrt_emu::engine {

struct Run;  // one channel's progress through one execution (ring_executor.cc)

// RingExecutor: builds ring plans (programs and the FIFOs of their network
// hops) and runs them over Links' channels or lanes; it counts what ran
// there for the closing line.
class RingExecutor {
 public:
  // `by_reference`: NEURON_RT_EMU_DIRECT_READ (DIRECT slices whose data is
  // final pass by reference).
  RingExecutor(const RankContext& self, Links& links, DeviceLoop& loop, bool by_reference)
      : self_(self), links_(links), loop_(loop), by_reference_(by_reference) {}

  // A ring plan's programs, one per channel (or lane) that carries a part,
  // and a basic block per channel with a network hop.
  Status build_plan(Plan& p);
  // One execution of plan p, numbered `execution`.
  Status execute(Plan& p, uint64_t execution);

  bool by_reference() const { return by_reference_; }
  uint64_t by_reference_slices() const { return by_reference_slices_; }
  uint64_t kanga_executions() const { return kanga_executions_; }
  uint64_t kanga_lane_steps(size_t lane) const { return kanga_lane_steps_[lane]; }

 private:
  // execute's parts: the proxy task of the plan's NET blocks; one channel (or
  // lane) moved as far as its slots allow; what the device waits for, for a
  // timeout's message.
  Status submit_network(const Plan& p, NetTask& task, uint64_t execution);
  Result<Progress> advance(const Plan& p, size_t ci, Run& r, const SliceStamp& stamp);
  std::string waiting_for(const Plan& p, const std::vector<Run>& runs);
  // advance's parts for one step: its slots, the received payload, the
  // step's data movement, and the hand-over to the peers.
  bool step_slots(Channel& c, const Step& s, const Run& r, const uint8_t*& rslot,
                  uint8_t*& sslot) const;
  Result<const uint8_t*> received_payload(const Plan& p, size_t ci, const Channel& c,
                                          const uint8_t* rslot, size_t bytes,
                                          const SliceStamp& stamp);
  Status run_step(const Plan& p, size_t ci, Channel& c, const Step& s, Run& r, const uint8_t* rslot,
                  uint8_t* sslot, const SliceStamp& stamp);
  void hand_over(Channel& c, const Step& s, Run& r, uint8_t* sstart, SliceStamp st);

  const RankContext& self_;
  Links& links_;
  DeviceLoop& loop_;
  const bool by_reference_;
  uint64_t by_reference_slices_ = 0;
  uint64_t kanga_executions_ = 0;
  uint64_t kanga_lane_steps_[kMaxEngineChannels] = {};  // slice steps each lane ran
};

}  // namespace nrt_emu::engine
