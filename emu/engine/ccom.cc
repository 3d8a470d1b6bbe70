// Ccom: bring-up and teardown of one engine rank (ccom.h).
#include "ccom.h"

#include "../knobs.h"
#include "../platform.h"
#include "../runtime_log.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>

namespace nrt_emu::engine {
namespace {

constexpr uint32_t kCardMagic = 0x4343454eu;  // "NECC"
constexpr size_t kDefaultDeviceBytes = 256u << 20;
constexpr uint64_t kDefaultSlotBytes = 512u << 10;

// A knob of the engine (its range in the runtime's table, knobs.h): unset =
// def; bad = an error naming it.
Result<uint64_t> engine_knob(knobs::Var v, uint64_t def) {
  static_assert(knobs::declared(knobs::Var::kEngineChannels).hi == kMaxEngineChannels);
  std::string why;
  const auto n = knobs::integer(v, -1, why);  // every engine knob's range starts at 0 or more
  if (!n) return engine_error(why);
  return *n < 0 ? def : static_cast<uint64_t>(*n);
}

}  // namespace

NRT_STATUS Ccom::fail(NRT_STATUS s, std::string why) {
  const Why split = split_cause(why);
  error_ = cause_first(split);
  cause_ = split.cause;
  context_ = split.context;
  // A cause libnccom forwarded is in libnccom's own log already: the
  // runtime's line says what the runtime was doing, as libnrt's lines do.
  nrt_emu::log::message(nrt_emu::log::Level::Error, "[engine rank %d] %s", self_.rank,
                        split.context.empty() ? error_.c_str() : split.context.c_str());
  return s;
}

Result<Ccom*> Ccom::create(const nrt_emu_ccom_config_t& cfg, Why* why_out) {
  std::unique_ptr<Ccom> c(new Ccom());
  if (Status s = c->init(cfg); !s) {
    // No closing fence: the peers may be waiting in one of libnccom's own
    // all-gathers (its graph build), which would take this rank's fence for
    // its contribution; they are to see this rank leave instead.
    c->broken_ = true;
    c->broken_reason_ = s.error().message;
    // nrt_emu_ccom_init fails with NRT_FAILURE whatever the cause; the
    // message says which, cause first: "CAUSE (rank R of N: CONTEXT)".
    Why why = split_cause(s.error().message);
    const bool from_nccom = !why.context.empty();  // in libnccom's own log already
    const std::string rank =
        "rank " + std::to_string(cfg.rank) + " of " + std::to_string(cfg.rank_n);
    why.context = why.context.empty() ? rank : rank + ": " + why.context;
    if (from_nccom) {
      nrt_emu::log::message(nrt_emu::log::Level::Error, "nrt_emu_ccom_init failed (%s)",
                            why.context.c_str());
    } else {
      nrt_emu::log::message(nrt_emu::log::Level::Error, "%s (nrt_emu_ccom_init, %s)",
                            why.cause.c_str(), why.context.c_str());
    }
    if (why_out != nullptr) *why_out = why;
    return engine_error(cause_first(why));
  }
  return c.release();
}

Status Ccom::init(const nrt_emu_ccom_config_t& cfg) {
  if (Status s = take_config(cfg); !s) return s;
  if (Status s = make_parts(cfg); !s) return s;
  const auto max_ch = engine_knob(knobs::Var::kEngineChannels, kMaxEngineChannels);
  if (!max_ch) return max_ch.error();
  auto vcores_per_device = place_on_device(cfg);
  if (!vcores_per_device) return vcores_per_device.take_error();
  if (Status s = init_communicator(cfg, *vcores_per_device); !s) return s;
  nccl_comm_info_t info{};
  if (NRT_STATUS s = self_.t->neuronGetCommInfo(self_.comm, &info); s != NRT_SUCCESS)
    return engine_error(st("neuronGetCommInfo", s));
  if (info.rank != self_.rank || info.rank_n != self_.n)
    return engine_error("libnccom reports rank " + std::to_string(info.rank) + " of " +
                        std::to_string(info.rank_n));
  const int channels = std::min<int>(info.channel_n, static_cast<int>(*max_ch));
  if (channels < 1) return engine_error("the communicator has no ring channel");
  if (Status s = links_->read_rings(info, channels); !s) return s;
  if (Status s = links_->build_kanga_lanes(info); !s) return s;
  if (Status s = allocate_memory(cfg, channels); !s) return s;
  return connect_links();
}

// The configuration checked and kept (rank, host, slice size).
Status Ccom::take_config(const nrt_emu_ccom_config_t& cfg) {
  if (cfg.struct_size != sizeof(nrt_emu_ccom_config_t))
    return engine_error(
        "config struct_size " + std::to_string(cfg.struct_size) +
        " is not sizeof(nrt_emu_ccom_config_t) = " + std::to_string(sizeof(nrt_emu_ccom_config_t)));
  if (cfg.rank_n < 1 || cfg.rank < 0 || cfg.rank >= cfg.rank_n)
    return engine_error("rank " + std::to_string(cfg.rank) + " is outside 0.." +
                        std::to_string(cfg.rank_n - 1));
  if (cfg.local_n < 1 || cfg.local_n > 16 || cfg.local_rank < 0 || cfg.local_rank >= cfg.local_n)
    return engine_error("local rank " + std::to_string(cfg.local_rank) + " of " +
                        std::to_string(cfg.local_n) + " ranks per host (1..16 per host)");
  if (cfg.host < 0) return engine_error("host id " + std::to_string(cfg.host) + " is negative");
  if (Status s = log::check_level(); !s) return s;
  self_.rank = cfg.rank;
  self_.n = cfg.rank_n;
  self_.host = cfg.host;
  self_.local = cfg.local_rank;
  self_.local_n = cfg.local_n;
  const auto slot = engine_knob(knobs::Var::kSliceBytes, kDefaultSlotBytes);
  if (!slot) return slot.error();
  self_.slot_bytes = *slot / 64 * 64;
  return {};
}

// The knobs each part runs by, and the parts made with them (Links first:
// the others use it).
Status Ccom::make_parts(const nrt_emu_ccom_config_t& cfg) {
  DeviceLoop::Settings loop;
  loop.timeout_ms = cfg.timeout_ms != 0 ? cfg.timeout_ms : 60000;
  const auto rd = engine_knob(knobs::Var::kAllreduceRdBytes, RdExecutor::kAuto);
  if (!rd) return rd.error();
  const auto rd_gather = engine_knob(knobs::Var::kAllgatherRdBytes, RdExecutor::kAuto);
  if (!rd_gather) return rd_gather.error();
  const auto by_reference = engine_knob(knobs::Var::kDirectRead, 1);
  if (!by_reference) return by_reference.error();
  const auto spin = engine_knob(knobs::Var::kSpinUs, bell::kDefaultSpinUs);
  if (!spin) return spin.error();
  loop.spin_us = static_cast<uint32_t>(*spin);
  const auto poll = engine_knob(knobs::Var::kPollNs, bell::kDefaultPollNs);
  if (!poll) return poll.error();
  loop.poll_ns = static_cast<uint32_t>(*poll);
  const auto help = engine_knob(knobs::Var::kProxyHelp, 1);
  if (!help) return help.error();
  loop.proxy_help = *help != 0;
  links_ = std::make_unique<Links>(self_, cards_);
  loop_ = std::make_unique<DeviceLoop>(*links_, loop);
  peers_ = std::make_unique<PeerExecutor>(self_, *links_, *loop_);
  rd_ = std::make_unique<RdExecutor>(self_, *links_, *peers_, RdExecutor::Limits{*rd, *rd_gather});
  ring_ = std::make_unique<RingExecutor>(self_, *links_, *loop_, *by_reference != 0);
  return {};
}

// This rank's device on the emulated platform. Trn3 Switch-V1: ranks are
// logical cores, vcores_per_device of them per device (LNC 2: 4), filling
// devices in local-rank order — what libnccom's graph build counts (device =
// nec_dev_id, core = order among the ranks of that device). Every other
// platform: one device per rank.
Result<int> Ccom::place_on_device(const nrt_emu_ccom_config_t& cfg) {
  if (Status s = platform::check_configuration(); !s) return s.take_error();
  const platform::Spec* spec = platform::current();
  const bool switch_v1 = spec->pod_type == NEC_POD_TYPE_SWITCH;
  const int vcores_per_device = switch_v1 ? spec->cores_per_device / spec->lnc : 1;
  dev_ = self_.local / vcores_per_device;
  if (switch_v1 && dev_ >= spec->devices)
    return engine_error("local rank " + std::to_string(self_.local) + " does not fit on " +
                        std::to_string(spec->devices) + " devices of " +
                        std::to_string(vcores_per_device) + " logical cores (" + spec->name + ")");
  // The emulated host has as many devices as ranks on it, unless told (a
  // platform with a fixed device count has its own default): this process's
  // own default, not its environment.
  if (!knobs::is_set(knobs::Var::kDevices) && spec->devices == 0)
    knobs::set_process_default(knobs::Var::kDevices, cfg.local_n);
  return vcores_per_device;
}

// libnccom loaded as libnrt loads it, and this rank's communicator built
// through its two init calls.
Status Ccom::init_communicator(const nrt_emu_ccom_config_t& cfg, int vcores_per_device) {
  if (nrt_emu_load_nccom() != NRT_SUCCESS) {
    const char* e = nrt_emu_last_error();
    return engine_error(std::string("libnccom did not load: ") + (e ? e : "unknown reason"));
  }
  self_.t = nrt_emu_nccom_table();
  const auto from_env = knobs::text(knobs::Var::kRootCommId);  // NUL-terminated: getenv's
  const char* root = cfg.root_comm_id != nullptr ? cfg.root_comm_id
                     : from_env                  ? from_env->data()
                                                 : nullptr;
  if (self_.n > 1 && (root == nullptr || *root == '\0'))
    return engine_error(
        "no root address: set NEURON_RT_ROOT_COMM_ID=host:port (where rank 0 listens) or pass "
        "root_comm_id");

  enc_neuron_device_info_t dev{};
  dev.nec_dev_id = dev_;
  dev.mla_idx = dev_;
  dev.host_device_id = dev_;
  dev.routing_id = dev_;
  dev.tpb_idx = self_.local % vcores_per_device;
  dev.virtual_server_id = static_cast<uint32_t>(self_.host);
  if (const nec_pod_type_t pod = platform::current()->pod_type; pod != NEC_POD_TYPE_NONE) {
    // SWITCH with family Trn3: libnccom builds kangaRing paths; P2P
    // (trn2-ultraserver): libnccom orders the pod's nodes in its ring.
    dev.pod_type = pod;
    // One pod; host h is its node h (libnccom orders the nodes of a pod by
    // these ids and refuses two nodes at one position).
    dev.pod_id = 0;
    dev.pod_node_id = static_cast<uint32_t>(self_.host);
  }
  if (NRT_STATUS s = self_.t->neuronInitGlobalComm(self_.rank, self_.n, &dev, root, &self_.comm,
                                                   "nrt_emu_ccom");
      s != NRT_SUCCESS)
    return engine_error(st("neuronInitGlobalComm", s));
  // Test seam (docs/internals/emu.md, "Environment"): this rank's process
  // dies between libnccom's two init calls, while its peers are already
  // connecting their rings.
  if (const auto k = knobs::integer_or_warn(knobs::Var::kDebugKillAfterInit, -1);
      k && *k == self_.rank) {
    raise(SIGKILL);
  }
  if (NRT_STATUS s = self_.t->neuronBuildGraphComm(self_.comm); s != NRT_SUCCESS)
    return engine_error(st("neuronBuildGraphComm", s));
  return {};
}

// The user's device memory and the engine's own: slot rings per channel and
// lane, peer rings per local rank, the peer-exchange slots.
Status Ccom::allocate_memory(const nrt_emu_ccom_config_t& cfg, int channels) {
  const size_t dev_bytes = cfg.device_bytes != 0 ? cfg.device_bytes : kDefaultDeviceBytes;
  if (NRT_STATUS s = nrt_emu_devmem_create(dev_bytes, &self_.user_mem); s != NRT_SUCCESS)
    return engine_error("device memory of " + std::to_string(dev_bytes) +
                        " bytes: " + st("nrt_emu_devmem_create", s));
  heap_.reset(static_cast<uint8_t*>(nrt_emu_devmem_base(self_.user_mem)),
              nrt_emu_devmem_size(self_.user_mem));
  const size_t engine_bytes =
      static_cast<size_t>(channels) * (2 * kSlots * self_.slot_bytes + 64 * 1024) +
      links_->kanga_lanes().size() * (kSlots * self_.slot_bytes + 64 * 1024) +
      static_cast<size_t>(self_.local_n) * links_->pair_stride() +
      2 * kPeerSlots * self_.slot_bytes + (1u << 20);
  if (NRT_STATUS s = nrt_emu_devmem_create(engine_bytes, &self_.engine_mem); s != NRT_SUCCESS)
    return engine_error(st("engine memory: nrt_emu_devmem_create", s));
  return {};
}

// Every channel connected (direct or over the network), and the shared
// proxy worker acquired when any link crosses the network.
Status Ccom::connect_links() {
  if (Status s = links_->build_channels(); !s) return s;
  if (Status s = exchange_and_map(); !s) return s;
  bool any_net = false;
  for (const Channel& c : links_->channels()) {
    any_net = any_net || c.send.net || c.recv.net;
    nrt_emu::log::message(nrt_emu::log::Level::Info,
                          "[engine rank %d] channel %d: from rank %d %s, to rank %d %s", self_.rank,
                          c.id, c.prev, c.recv.net ? "over the network" : "direct", c.next,
                          c.send.net ? "over the network" : "direct");
  }
  bool across_hosts = false;
  for (const PeerCard& p : cards_) across_hosts = across_hosts || p.host != self_.host;
  rd_->choose_limits(across_hosts);
  if (any_net) {
    if (NRT_STATUS s = nrt_emu_proxy_acquire(self_.comm, self_.local, dev_, &self_.proxy);
        s != NRT_SUCCESS)
      return engine_error(st("nrt_emu_proxy_acquire", s));
  }
  return {};
}

// This rank's engine card: where its regions are, what it runs.
PeerCard Ccom::own_card() const {
  PeerCard me{};
  me.magic = kCardMagic;
  me.rank = self_.rank;
  me.host = self_.host;
  me.pid = static_cast<int32_t>(getpid());
  me.fd = nrt_emu_devmem_fd(self_.engine_mem);
  me.channels = static_cast<int32_t>(links_->channels().size());
  me.region_bytes = nrt_emu_devmem_size(self_.engine_mem);
  me.user_fd = nrt_emu_devmem_fd(self_.user_mem);
  me.user_bytes = nrt_emu_devmem_size(self_.user_mem);
  me.slot_bytes = self_.slot_bytes;
  me.local = self_.local;
  me.local_n = self_.local_n;
  me.pair_area = nrt_emu_devmem_offset(self_.engine_mem, links_->pair_area());
  me.pair_stride = links_->pair_stride();
  me.bell = nrt_emu_devmem_offset(self_.engine_mem, links_->bell());
  gethostname(me.hostname, sizeof me.hostname - 1);
  for (const Channel& c : links_->channels()) {
    me.recv_slots[c.id] = nrt_emu_devmem_offset(self_.engine_mem, c.recv.slots);
    me.head[c.id] = nrt_emu_devmem_offset(self_.engine_mem, c.recv.head);
  }
  me.agreed[0] = rd_->limits().allreduce;
  me.agreed[1] = rd_->limits().allgather;
  me.agreed[2] = ring_->by_reference() ? 1 : 0;
  me.kanga_lanes = static_cast<int32_t>(links_->kanga_lanes().size());
  me.kanga_sum = links_->kanga_sum();
  for (const Channel& c : links_->kanga_lanes()) {
    me.kanga_recv_slots[c.id] = nrt_emu_devmem_offset(self_.engine_mem, c.recv.slots);
    me.kanga_head[c.id] = nrt_emu_devmem_offset(self_.engine_mem, c.recv.head);
  }
  return me;
}

// Rank `r`'s card agrees with this rank's on everything that decides how a
// collective runs.
Status Ccom::check_card(int r, const PeerCard& p, const PeerCard& me) const {
  if (p.magic != kCardMagic || p.rank != r)
    return engine_error("rank " + std::to_string(r) + " sent a malformed engine card");
  if (p.channels != me.channels || p.slot_bytes != me.slot_bytes)
    return engine_error("rank " + std::to_string(r) + " runs " + std::to_string(p.channels) +
                        " engine channels of " + std::to_string(p.slot_bytes) +
                        "-byte slices, this rank " + std::to_string(me.channels) + " of " +
                        std::to_string(me.slot_bytes) +
                        " (NEURON_RT_EMU_ENGINE_CHANNELS / NEURON_RT_EMU_SLICE_BYTES must agree)");
  for (size_t k = 0; k < std::size(kAgreedSettings); ++k) {
    if (p.agreed[k] != me.agreed[k])
      return engine_error("rank " + std::to_string(r) + " runs " + kAgreedSettings[k] + "=" +
                          std::to_string(p.agreed[k]) + ", this rank (" +
                          std::to_string(self_.rank) + ") " + std::to_string(me.agreed[k]) +
                          ": the setting decides how a collective runs and must be the same "
                          "on every rank");
  }
  if (p.kanga_lanes != me.kanga_lanes || p.kanga_sum != me.kanga_sum)
    return engine_error("rank " + std::to_string(r) + " runs " + std::to_string(p.kanga_lanes) +
                        " kangaRing lanes (path checksum " + std::to_string(p.kanga_sum) +
                        "), this rank " + std::to_string(me.kanga_lanes) + " (" +
                        std::to_string(me.kanga_sum) +
                        "): libnccom gave the ranks different kangaRing paths");
  return {};
}

// Every rank learns every other's process, memory file and slot offsets;
// the receiver of each DIRECT hop is mapped.
Status Ccom::exchange_and_map() {
  const PeerCard me = own_card();
  cards_.assign(static_cast<size_t>(self_.n), PeerCard{});
  cards_[static_cast<size_t>(self_.rank)] = me;
  if (NRT_STATUS s = self_.t->neuronBootstrapAllGather(self_.comm, cards_.data(), sizeof(PeerCard),
                                                       "nrt_emu engine cards");
      s != NRT_SUCCESS)
    return engine_error(st("neuronBootstrapAllGather(engine cards)", s));
  for (int r = 0; r < self_.n; ++r) {
    if (Status s = check_card(r, cards_[static_cast<size_t>(r)], me); !s) return s;
  }
  loop_->watch_peers(cards_, self_.rank);
  return links_->map_direct_links();
}

Ccom::~Ccom() {
  if (self_.comm != nullptr && self_.t != nullptr && !broken_) {
    // Peers may still read or write this rank's memory until everyone is
    // here. (After a failure some peer may be gone: no fence.)
    std::vector<int> fence(static_cast<size_t>(self_.n), 0);
    (void)self_.t->neuronBootstrapAllGather(self_.comm, fence.data(), sizeof(int),
                                            "nrt_emu engine close");
  }
  if (self_.comm != nullptr) {
    std::string steps;
    for (size_t k = 0; k < links_->kanga_lanes().size(); ++k)
      steps += " " + std::to_string(ring_->kanga_lane_steps(k));
    nrt_emu::log::message(nrt_emu::log::Level::Info,
                          "[engine rank %d] closing: %llu executions, %llu on kangaRing lanes "
                          "(slice steps per lane:%s), %llu by recursive doubling, %llu direct "
                          "slices passed by reference",
                          self_.rank, static_cast<unsigned long long>(executions_),
                          static_cast<unsigned long long>(ring_->kanga_executions()),
                          steps.empty() ? " none" : steps.c_str(),
                          static_cast<unsigned long long>(rd_->executions()),
                          static_cast<unsigned long long>(ring_->by_reference_slices()));
  }
  if (self_.proxy != nullptr) nrt_emu_proxy_release(self_.proxy);
  // The collaborators, each releasing what it holds: the peer links'
  // registrations; the peer watches; the ring links' registrations, the
  // peers' mappings and the doorbell.
  ring_.reset();
  rd_.reset();
  peers_.reset();
  loop_.reset();
  links_.reset();
  if (self_.comm != nullptr && self_.t != nullptr) (void)self_.t->neuronFreeComm(self_.comm);
  if (self_.engine_mem != nullptr) nrt_emu_devmem_destroy(self_.engine_mem);
  if (self_.user_mem != nullptr) nrt_emu_devmem_destroy(self_.user_mem);
}

NRT_STATUS Ccom::alloc(size_t bytes, void** out) {
  if (out == nullptr) return fail(NRT_INVALID, "nrt_emu_ccom_alloc: out is NULL");
  *out = heap_.allocate(bytes);
  if (*out == nullptr)
    return fail(NRT_RESOURCE, "device memory: " + std::to_string(bytes) +
                                  " bytes do not fit (largest free range " +
                                  std::to_string(heap_.largest_free()) + " of " +
                                  std::to_string(heap_.free_bytes()) +
                                  " free; raise nrt_emu_ccom_config_t.device_bytes)");
  return NRT_SUCCESS;
}

void Ccom::free(void* p) {
  if (p != nullptr && !heap_.release(p))
    (void)fail(NRT_INVALID, "nrt_emu_ccom_free: not a live allocation");
}

NRT_STATUS Ccom::barrier() {
  std::vector<int> fence(static_cast<size_t>(self_.n), 0);
  if (NRT_STATUS s = self_.t->neuronBootstrapAllGather(self_.comm, fence.data(), sizeof(int),
                                                       "nrt_emu barrier");
      s != NRT_SUCCESS)
    return fail(s, st("barrier: neuronBootstrapAllGather", s));
  return NRT_SUCCESS;
}

}  // namespace nrt_emu::engine
