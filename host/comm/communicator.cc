#include "comm/communicator.h"

#include "bootstrap/join.h"
#include "comm/identity.h"
#include "core/runtime.h"
#include "log/log.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <set>

extern "C" const char nccom_build_git_hash[];  // generated: cmake/WriteBuildId.cmake

namespace nccom::comm {
namespace {

constexpr const char* kBanner = "NCCL version 2.31.24+nrt2.0";

// getNcclNrtGitHash: libnccom's hash (8 bytes) ‖ libnrt's hash (8 bytes).
std::array<uint8_t, bootstrap::kBuildTagBytes> build_tag() {
  std::array<uint8_t, bootstrap::kBuildTagBytes> tag{};
  std::strncpy(reinterpret_cast<char*>(tag.data()), nccom_build_git_hash, 8);
  nrt_version_t version{};
  if (runtime::api().nrt_get_version(&version, sizeof version) == NRT_SUCCESS) {
    std::memcpy(tag.data() + 8, version.git_hash, 8);
  }
  return tag;
}

// setFilesLimit: a global communicator may need many sockets.
void raise_files_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    NCCOM_WARN("Call to getrlimit failed : %s", std::strerror(errno));
    return;
  }
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    NCCOM_WARN("Call to setrlimit failed : %s", std::strerror(errno));
  }
}

Error invalid(const std::string& message) {
  NCCOM_WARN("%s", message.c_str());
  return make_error(NRT_INVALID, message);
}

}  // namespace

Communicator::~Communicator() {
  // First, before any connection closes: a member that completed its setup
  // tells the others it leaves cleanly.
  if (mesh_ && set_up_) mesh_->leave(std::chrono::milliseconds(200));
  transports_.reset();  // the scheduler reports to health_ until it is gone
  if (health_) health_->leave();
}

Result<std::unique_ptr<Communicator>> Communicator::create(const InitRequest& request,
                                                           const BootstrapSettings& settings) {
  static std::once_flag banner;
  std::call_once(banner, [] {
    log::message(log::Level::Version, log::kInit, __FILE__, __LINE__, "%s", kBanner);
  });
  if (request.device == nullptr) return invalid("communicator init: device info is NULL");
  if (request.rank < 0 || request.rank >= request.nranks) {
    NCCOM_WARN("Invalid rank requested : %d/%d", request.rank, request.nranks);
    return make_error(NRT_INVALID, "Invalid rank requested : " + std::to_string(request.rank) +
                                       "/" + std::to_string(request.nranks));
  }
  std::unique_ptr<Communicator> comm(new Communicator);
  Status up = comm->bring_up(request, settings);
  if (!up) {
    NCCOM_WARN("%s", up.error().message.c_str());
    health::record_error(0, request.rank, "communicator init: " + up.error().message);
    return up.take_error();
  }
  NCCOM_INFO(log::kInit, "comm %p rank %d nranks %d cudaDev %d busId %lx - Init COMPLETE",
             static_cast<void*>(comm.get()), comm->rank_, comm->nranks_, comm->device_, 0ul);
  return comm;
}

Status Communicator::bring_up(const InitRequest& request, const BootstrapSettings& settings) {
  rank_ = request.rank;
  nranks_ = request.nranks;
  device_ = request.device->nec_dev_id;
  device_info_ = *request.device;
  global_ = request.global;

  auto id = resolve_id(request, settings);
  if (!id) return id.take_error();
  const uint64_t id_hash = hash_bytes(id->encode().internal, NCCL_UNIQUE_ID_BYTES);

  // bootstrapInit's gate: bootstrap only when the runtime reports 0 vNCs.
  uint32_t vnc_count = 0;
  if (runtime::api().nrt_get_total_vnc_count(&vnc_count) != NRT_SUCCESS) {
    return make_error(NRT_FAILURE, "communicator init: nrt_get_total_vnc_count failed");
  }
  if (vnc_count != 0 && nranks_ > 1) {
    return make_error(NRT_FAILURE,
                      "communicator init: the runtime reports " + std::to_string(vnc_count) +
                          " vNCs, which disables the distributed bootstrap; a "
                          "communicator of " +
                          std::to_string(nranks_) + " ranks needs it (the runtime must report 0)");
  }
  if (global_) raise_files_limit();

  const bootstrap::PeerRecord own = own_record(settings, id_hash);
  // The health service starts before the bootstrap, and this rank is listed
  // as "init" until its communicator runs: a rank stuck in init is seen.
  health::CardBytes card{};  // all zero: no service (a single rank starts none)
  if (nranks_ > 1) {
    auto health = health_settings();
    if (!health) return health.take_error();
    card = health::own_card(*health, settings.interface.address, host_label(settings));
    health_ = health::watch(id_hash, rank_, nranks_);
  }
  if (vnc_count == 0) {
    if (Status joined = join(*id, own, settings); !joined) return joined;
  }
  reap_roots();
  std::vector<health::CardBytes> cards;
  if (Status exchanged = exchange_peer_records(own, card, cards); !exchanged) return exchanged;
  // The service links to every rank's process and queries it with this
  // communicator's secret.
  if (health_) health_->join(id->secret, cards);
  if (global_) share_rank_maps();
  return {};
}

// This process's host in the health reports: NCCL_HOSTID or the host name,
// with the runtime's virtual server when it is not 0.
std::string Communicator::host_label(const BootstrapSettings& settings) const {
  std::string label = settings.host_id;
  if (label.empty()) {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    label = name;
  }
  if (device_info_.virtual_server_id != 0)
    label += "/vs" + std::to_string(device_info_.virtual_server_id);
  return label;
}

// The unique id: given, or derived from the root address, as
// bootstrapGetUniqueId and ncclCommInitRank do (rank 0 then starts the root).
Result<bootstrap::UniqueId> Communicator::resolve_id(const InitRequest& request,
                                                     const BootstrapSettings& settings) {
  const bool from_address = request.root_comm_id != nullptr && request.root_comm_id[0] != '\0';
  if (!from_address) {
    if (request.id == nullptr)
      return invalid("communicator init: neither a unique id nor a root address");
    auto decoded = bootstrap::UniqueId::decode(
        reinterpret_cast<const uint8_t*>(request.id->internal), sizeof request.id->internal);
    if (!decoded) return invalid("communicator init: " + decoded.error().message);
    return *decoded;
  }
  auto derived = id_from_root_address(request.root_comm_id, nranks_, global_, settings);
  if (!derived) return derived.take_error();
  if (rank_ == 0) {
    auto bound = start_root(*derived, derived->root, nranks_, settings);
    if (!bound) return bound.take_error();
  }
  return *derived;
}

bootstrap::PeerRecord Communicator::own_record(const BootstrapSettings& settings,
                                               uint64_t id_hash) const {
  bootstrap::PeerRecord own;
  own.rank = rank_;
  own.device = device_;
  own.host_hash = host_hash(settings.host_id) + id_hash + device_info_.virtual_server_id;
  own.pid_hash = pid_hash() + id_hash;
  own.shm_dev = shm_device();
  own.pod_node_id = static_cast<int32_t>(device_info_.pod_node_id);
  own.virtual_server_id = static_cast<int32_t>(device_info_.virtual_server_id);
  own.comm = reinterpret_cast<uintptr_t>(this);
  own.host_device_id = device_info_.host_device_id;
  own.mla_idx = device_info_.mla_idx;
  return own;
}

// The bootstrap handshake with the root and the peer mesh it leaves.
Status Communicator::join(const bootstrap::UniqueId& id, const bootstrap::PeerRecord& own,
                          const BootstrapSettings& settings) {
  bootstrap::JoinOptions options;
  options.id = id;
  options.rank = rank_;
  options.nranks = nranks_;
  if (global_) options.build_tag = build_tag();
  options.host_hash = own.host_hash;
  options.listen_on = settings.interface.address;
  options.socket_timeout = settings.socket_timeout;
  options.handshake_timeout = settings.handshake_timeout;
  auto joined = bootstrap::join(options);
  if (!joined) {
    settle_root(id.root, std::chrono::milliseconds(2000));
    reap_roots();  // joins it once finished: a process that now exits leaves no thread behind
    return joined.take_error();
  }
  mesh_ = std::move(joined->mesh);
  root_ = id.root;
  // Until neuronBuildGraphComm has connected the rings, every bootstrap
  // wait is a setup wait: bounded by the handshake timeout as well, and
  // given up as soon as a member's connection breaks.
  mesh_->set_setup(true, settings.handshake_timeout);
  cluster_id_ = joined->cluster_id;
  epoch_ = joined->epoch;
  return {};
}

// The first all-gather: the 112-byte peer records (initTransportsRank's).
Status Communicator::exchange_peer_records(const bootstrap::PeerRecord& own,
                                           const health::CardBytes& card,
                                           std::vector<health::CardBytes>& cards) {
  // Each slot: the 112-byte peer record, then the rank's health card (where
  // its process's health service listens; zero-filled for a single rank).
  constexpr std::size_t kSlot = bootstrap::kPeerRecordBytes + health::kCardBytes;
  std::vector<uint8_t> table(kSlot * nranks_);
  const auto mine = own.encode();
  uint8_t* slot = table.data() + kSlot * rank_;
  std::memcpy(slot, mine.data(), mine.size());
  std::memcpy(slot + bootstrap::kPeerRecordBytes, card.data(), card.size());
  if (Status gathered = all_gather(table.data(), kSlot); !gathered) {
    return in_context(gathered.take_error(), "initTransportRank AllGather1");
  }
  for (int r = 0; r < nranks_; ++r) {
    const uint8_t* at = table.data() + kSlot * r;
    auto record = bootstrap::PeerRecord::decode(at, bootstrap::kPeerRecordBytes, nranks_);
    if (!record) return in_context(record.take_error(), "peer record of rank " + std::to_string(r));
    if (record->rank != r) {
      return make_error(NRT_INVALID, "peer record in slot " + std::to_string(r) + " claims rank " +
                                         std::to_string(record->rank));
    }
    peers_.push_back(*record);
    health::CardBytes& peer_card = cards.emplace_back();
    std::memcpy(peer_card.data(), at + bootstrap::kPeerRecordBytes, peer_card.size());
  }
  return {};
}

// As in initTransportsRank, the runtime learns every rank's MLA index and
// host device id.
void Communicator::share_rank_maps() const {
  std::vector<int> mla(nranks_), host_device(nranks_);
  for (int r = 0; r < nranks_; ++r) {
    mla[r] = peers_[r].mla_idx;
    host_device[r] = peers_[r].host_device_id;
  }
  if (runtime::api().nec_build_port_and_rid_map(device_, mla.data(), host_device.data(), nranks_) !=
      NRT_SUCCESS) {
    NCCOM_WARN("nec_build_port_and_rid_map failed for device %d", device_);
  }
}

int Communicator::local_rank_count() const {
  int count = 0;
  for (const auto& p : peers_) count += p.host_hash == peers_[rank_].host_hash ? 1 : 0;
  return count;
}

int Communicator::node_count() const {
  std::set<uint64_t> hosts;
  for (const auto& p : peers_) hosts.insert(p.host_hash);
  return static_cast<int>(hosts.size());
}

void Communicator::give_up_setup(const std::string& why) {
  if (mesh_ && !set_up_) mesh_->give_up(why, std::chrono::milliseconds(200));
}

void Communicator::finish_setup() {
  set_up_ = true;
  if (mesh_) mesh_->set_setup(false);
  // Every rank is past bootstrap now, so a root this process hosts for this
  // communicator has answered them all: join it while the process is alive
  // (a rank that later fails and exits leaves no finished thread behind).
  if (root_) {
    settle_root(*root_, std::chrono::milliseconds(1000));
    reap_roots();
  }
}

Status Communicator::send(int peer, bootstrap::MsgType type, const void* data, std::size_t size) {
  if (!mesh_)
    return make_error(NRT_INVALID,
                      "bootstrap send: this communicator has no bootstrap network (single rank)");
  return mesh_->send(peer, type, data, size);
}

Status Communicator::recv(int peer, bootstrap::MsgType type, void* data, std::size_t size) {
  if (!mesh_)
    return make_error(NRT_INVALID,
                      "bootstrap recv: this communicator has no bootstrap network (single rank)");
  return mesh_->recv(peer, type, data, size);
}

Status Communicator::all_gather(void* data, std::size_t size_per_rank) {
  if (nranks_ == 1) return {};
  if (!mesh_) return make_error(NRT_INVALID, "bootstrap all-gather: no bootstrap network");
  return mesh_->all_gather(data, size_per_rank);
}

Status Communicator::all_gather(void* data, std::size_t size_per_rank,
                                bootstrap::AllGatherAlgorithm algorithm) {
  if (nranks_ == 1) return {};
  if (!mesh_) return make_error(NRT_INVALID, "bootstrap all-gather: no bootstrap network");
  return bootstrap::all_gather(*mesh_, rank_, nranks_, data, size_per_rank, algorithm);
}

// ---- Handles ----------------------------------------------------------------

namespace {
std::mutex g_handles_mutex;
std::set<Communicator*>& handles() {
  static auto* set = new std::set<Communicator*>;  // never destroyed
  return *set;
}
}  // namespace

void* register_handle(std::unique_ptr<Communicator> comm) {
  std::lock_guard lock(g_handles_mutex);
  Communicator* raw = comm.release();
  handles().insert(raw);
  return raw;
}

Communicator* find_handle(void* handle) {
  std::lock_guard lock(g_handles_mutex);
  auto it = handles().find(static_cast<Communicator*>(handle));
  return it == handles().end() ? nullptr : *it;
}

std::unique_ptr<Communicator> release_handle(void* handle) {
  std::lock_guard lock(g_handles_mutex);
  auto it = handles().find(static_cast<Communicator*>(handle));
  if (it == handles().end()) return nullptr;
  std::unique_ptr<Communicator> comm(*it);
  handles().erase(it);
  return comm;
}

}  // namespace nccom::comm
