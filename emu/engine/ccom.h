// ccom.h — one rank of the reference device engine (Ccom): its bring-up and
// teardown, its communicator and device memory, the calls of its C API, and
// the parts it owns: the links, the device loop, and the ring, peer and
// recursive-doubling executors.
#pragma once

#include "device_loop.h"
#include "heap.h"
#include "links.h"
#include "peer_executor.h"
#include "plan.h"
#include "program.h"
#include "rank_context.h"
#include "rd_executor.h"
#include "ring_executor.h"
#include "status.h"

#include <nrt_emu.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace nrt_emu::engine {

// How the engine runs a call (Ccom::algorithm_of): over the ring channels,
// over the kangaRing lanes, by recursive doubling, or as direct exchanges
// with each peer (all-to-all, permute).
enum class Algorithm { Ring, KangaRing, RecursiveDoubling, Peer };
// "ring", "kangaring", "rd", "peer" (nrt_emu_ccom_algorithm's answers).
const char* algorithm_name(Algorithm a);

// Ccom: one rank. It brings the rank up (libnccom's communicator, the device
// memories, the card all-gather) and down, and owns the parts that run its
// collectives, each made with what it uses.
class Ccom {
 public:
  ~Ccom();
  // The communicator, or why it could not be made: "CAUSE (rank R of N:
  // CONTEXT)"; *why (when given) receives CAUSE and CONTEXT apart.
  static Result<Ccom*> create(const nrt_emu_ccom_config_t& cfg, Why* why = nullptr);

  NRT_STATUS run(const nrt_emu_coll_args_t& a);
  // The algorithm run(a) takes, from a's operation, type and count alone
  // (buffers are not looked at); NRT_INVALID (error()) for arguments run
  // refuses before it looks at buffers.
  NRT_STATUS algorithm(const nrt_emu_coll_args_t& a, Algorithm* out);
  NRT_STATUS barrier();
  NRT_STATUS alloc(size_t bytes, void** out);
  void free(void* p);

  int rank() const { return self_.rank; }
  int rank_n() const { return self_.n; }
  int channel_n() const { return static_cast<int>(links_->channels().size()); }
  const std::string& error() const { return error_; }
  // The innermost cause of the last failure and what the runtime was doing
  // (error() is "CAUSE (CONTEXT)", or CAUSE when context() is "").
  const std::string& cause() const { return cause_; }
  const std::string& context() const { return context_; }

 private:
  Ccom() = default;
  NRT_STATUS fail(NRT_STATUS s, std::string why);
  Status init(const nrt_emu_ccom_config_t& cfg);
  // init's steps, in order.
  Status take_config(const nrt_emu_ccom_config_t& cfg);
  Status make_parts(const nrt_emu_ccom_config_t& cfg);
  Result<int> place_on_device(const nrt_emu_ccom_config_t& cfg);  // logical cores per device
  Status init_communicator(const nrt_emu_ccom_config_t& cfg, int vcores_per_device);
  Status allocate_memory(const nrt_emu_ccom_config_t& cfg, int channels);
  Status connect_links();
  Status exchange_and_map();
  // exchange_and_map's parts: this rank's card, and a peer's checked
  // against it.
  PeerCard own_card() const;
  Status check_card(int r, const PeerCard& p, const PeerCard& me) const;
  // The call's description (operation, type, reduction, count checked),
  // then validate's checks of root, peers and buffers on top.
  Status describe(const nrt_emu_coll_args_t& a, CollDesc* d) const;
  Status validate(const nrt_emu_coll_args_t& a, CollDesc* d) const;
  Algorithm algorithm_of(const CollDesc& d) const;
  Result<Plan*> plan_for(const nrt_emu_coll_args_t& a, const CollDesc& d);
  Status execute(Plan& p);

  RankContext self_;
  Heap heap_;
  std::vector<PeerCard> cards_;
  int dev_ = 0;  // nec_dev_id this rank runs on
  // The parts, made once the configuration is read (make_parts), each given
  // what it uses.
  std::unique_ptr<Links> links_;
  std::unique_ptr<DeviceLoop> loop_;
  std::unique_ptr<PeerExecutor> peers_;
  std::unique_ptr<RdExecutor> rd_;
  std::unique_ptr<RingExecutor> ring_;
  std::list<Plan> plans_;  // most recently used first
  std::string error_;
  std::string cause_;    // error_'s innermost cause
  std::string context_;  // and the rest of it
  uint64_t executions_ = 0;
  bool broken_ = false;  // a failed init or execution: the links are in an unknown state
  std::string broken_reason_;
};

}  // namespace nrt_emu::engine
