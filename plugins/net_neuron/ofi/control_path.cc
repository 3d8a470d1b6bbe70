// Plugin lifetime, devices, properties and connection setup.
#include "net_plugin.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

namespace nccom::ofi {
namespace {

std::atomic<int> g_rails{1};

uint64_t random_seed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof seed)) {
    seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
           (static_cast<uint64_t>(getpid()) << 32);
  }
  return seed;
}

}  // namespace

Plugin& Plugin::instance() {
  static Plugin plugin;
  return plugin;
}

// At dlclose or exit without fini: release silently (the host's logger may
// already be gone) — unless a plugin call is still running (exit() from a
// signal handler or another thread): then closing fids could deadlock inside
// the provider, so everything is left to the OS on purpose.
Plugin::~Plugin() {
  nccom::util::clear_logger();
  if (CallScope::active() == 0) {
    idle_.stop();
    release_everything();
    return;
  }
  idle_.stop_at_exit();
  struct Abandoned {
    decltype(comms_) comms;
    decltype(connecting_) connecting;
    Discovery discovery;
    decltype(progress_ring_) ring;
  };
  static Abandoned* abandoned = new Abandoned{std::move(comms_), std::move(connecting_),
                                              std::move(discovery_), std::move(progress_ring_)};
  (void)abandoned;
}

Status Plugin::configure_liveness(int enabled, int check_ms, int grace_ms) {
  return ::nccom::ofi::configure_liveness(enabled, check_ms, grace_ms);
}

Status Plugin::configure(int rails) {
  if (rails < 1 || rails > kMaxRails) return ncclInvalidArgument;
  g_rails.store(rails);
  return ncclSuccess;
}

Status Plugin::init(ncclDebugLogger_t logger) {
  std::unique_lock lock(mutex_);
  if (initialized_) return ncclSuccess;
  nccom::util::set_logger(logger);
  OFI_INFO(NCCL_INIT | NCCL_NET,
           "NET/OFI Initializing nccom libfabric net plugin \"AWS Libfabric\" (nccom's own "
           "implementation, not aws-ofi-nccl)");
  const uint32_t version = fi_version();
  OFI_INFO(NCCL_INIT | NCCL_NET, "NET/OFI Using Libfabric version %u.%u", FI_MAJOR(version),
           FI_MINOR(version));
  Discovery found;
  if (Status s = discover(g_rails.load(), &found); !s.ok()) return s;
  OFI_INFO(NCCL_INIT | NCCL_NET, "NET/OFI Support for global registrations: false");
  OFI_INFO(NCCL_INIT | NCCL_NET, "NET/OFI Support for DMA-BUF registrations: false");
  discovery_ = std::move(found);
  const uint64_t seed = random_seed();
  comm_id_ = static_cast<uint32_t>(seed) & kCommIdMask;
  cookie_ = seed | 1;
  initialized_ = true;
  return ncclSuccess;
}

Status Plugin::fini() {
  std::unique_lock lock(mutex_);
  if (!initialized_) return ncclSuccess;
  const size_t open = comms_.size() + connecting_.size();
  if (open != 0) OFI_INFO(NCCL_NET, "NET/OFI fini: closing %zu comms still open", open);
  idle_.stop();  // its pass only try-locks mutex_, so joining under it is safe
  release_everything();
  initialized_ = false;
  nccom::util::clear_logger();  // nothing is logged after fini
  return ncclSuccess;
}

void Plugin::release_everything() {
  progress_ring_.clear();
  requests_.clear();
  regions_.clear();
  comms_.clear();
  connecting_.clear();
  discovery_ = Discovery{};  // frees the fi_info copies
}

Status Plugin::check_device(int dev) const {
  if (!initialized_) {
    OFI_WARN("NET/OFI Error accessing plugin. Plugin has not been initialized yet.");
    return ncclInternalError;
  }
  if (dev < 0 || dev >= static_cast<int>(discovery_.devices.size())) {
    OFI_WARN("NET/OFI Error accessing device %i.", dev);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

Status Plugin::devices(int* ndev) {
  if (ndev == nullptr) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  if (!initialized_) {
    OFI_WARN("NET/OFI Error accessing plugin. Plugin has not been initialized yet.");
    return ncclInternalError;
  }
  *ndev = static_cast<int>(discovery_.devices.size());
  return ncclSuccess;
}

Status Plugin::get_properties(int dev, ncclNetProperties_v6_t* props) {
  if (props == nullptr) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  if (Status s = check_device(dev); !s.ok()) return s;
  const Device& device = discovery_.devices[dev];
  ncclNetProperties_v6_t p{};
  p.name = const_cast<char*>(device.name.c_str());
  p.pciPath = device.pci_path.empty() ? nullptr : const_cast<char*>(device.pci_path.c_str());
  p.guid = device.guid;
  p.ptrSupport = NCCL_PTR_HOST;  // no device memory: FI_HMEM is not requested
  p.regIsGlobal = 0;
  p.speed = device.speed_mbps;
  p.port = 1;
  p.latency = 0.0f;
  p.maxComms = 1 << 16;
  p.maxRecvs = 1;
  p.max_write_inline_size = device.caps.inject_size;
  p.max_mr_key_size = device.caps.rma ? sizeof(uint64_t) : 0;
  p.rma_supported = device.caps.rma ? 1 : 0;
  *props = p;
  return ncclSuccess;
}

Comm* Plugin::find_comm(const void* comm, CommKind kind) const {
  auto it = comms_.find(comm);
  if (it == comms_.end() || it->second->kind != kind) return nullptr;
  return it->second.get();
}

Comm* Plugin::find_data_comm(const void* comm) const {
  auto it = comms_.find(comm);
  if (it == comms_.end() || it->second->kind == CommKind::kListen) return nullptr;
  return it->second.get();
}

void Plugin::adopt(std::unique_ptr<Comm> comm) {
  for (const Request& r : comm->requests) requests_[&r] = comm.get();
  const void* key = comm.get();
  comms_[key] = std::move(comm);
}

void Plugin::update_progress_ring(Comm* comm) {
  const auto found = std::find(progress_ring_.begin(), progress_ring_.end(), comm);
  const bool in_ring = found != progress_ring_.end();
  const bool target = comm->endpoint && comm->endpoint->caps().manual_progress &&
                      std::any_of(comm->regions.begin(), comm->regions.end(),
                                  [](const auto& region) { return region->remote_key_valid; });
  if (target && !in_ring) {
    progress_ring_.push_back(comm);
    if (!idle_.running()) idle_.start([this] { progress_idle(); });
  } else if (!target && in_ring) {
    progress_ring_.erase(found);
  }
}

void Plugin::forget(Comm* comm) {
  for (const Request& r : comm->requests) requests_.erase(&r);
  for (const auto& region : comm->regions) regions_.erase(region.get());
  progress_ring_.erase(std::remove(progress_ring_.begin(), progress_ring_.end(), comm),
                       progress_ring_.end());
  comms_.erase(comm);  // closes its MRs, then its endpoint
}

uint32_t Plugin::next_comm_id() {
  comm_id_ = (comm_id_ + 1) & kCommIdMask;
  if (comm_id_ == 0) comm_id_ = 1;
  return comm_id_;
}

Status Plugin::listen(int dev, void* handle, size_t handle_size, void** listen_comm) {
  if (handle == nullptr || listen_comm == nullptr) return ncclInvalidArgument;
  std::unique_lock lock(mutex_);
  if (Status s = check_device(dev); !s.ok()) return s;
  std::unique_ptr<Comm> comm;
  if (Status s = open_listen_comm(discovery_.devices[dev], dev, next_comm_id(), &comm); !s.ok()) {
    return s;
  }
  const LivenessAddress liveness =
      comm->liveness_listener ? comm->liveness_listener->address() : LivenessAddress{};
  if (!write_handle(handle, handle_size, comm->id, comm->endpoint->address(), liveness)) {
    OFI_WARN(
        "NET/OFI listen: an endpoint address of %zu bytes (+%zu bytes of liveness address) "
        "does not fit a %zu-byte handle",
        comm->endpoint->address().size(), sizeof(LivenessAddress), handle_size);
    return ncclInternalError;
  }
  *listen_comm = comm.get();
  adopt(std::move(comm));
  return ncclSuccess;
}

Status Plugin::connect(int dev, void* handle, size_t handle_size, void** send_comm) {
  if (handle == nullptr || send_comm == nullptr) return ncclInvalidArgument;
  std::unique_lock lock(mutex_);
  if (Status s = check_device(dev); !s.ok()) return s;
  PeerAddress listener;
  if (!read_handle(handle, handle_size, &listener)) {
    OFI_WARN(
        "NET/OFI connect: not a listen handle of this plugin (bad magic, version, length "
        "or checksum)");
    return ncclInvalidArgument;
  }
  uint64_t cookie = read_cookie(handle);
  auto pending = connecting_.find(cookie);
  if (cookie == 0 || pending == connecting_.end() || pending->second->dev != dev ||
      pending->second->id != listener.listen_id) {
    std::unique_ptr<Comm> comm;
    if (Status s = open_send_comm(discovery_.devices[dev], dev, listener, &comm); !s.ok()) return s;
    cookie = (cookie_ += 2);  // odd, so never 0
    pending = connecting_.emplace(cookie, std::move(comm)).first;
    write_cookie(handle, cookie);
  }
  bool connected = false;
  if (Status s = poll_connect(*pending->second, &connected); !s.ok()) {
    connecting_.erase(pending);
    write_cookie(handle, 0);
    return s;
  }
  if (!connected) {
    *send_comm = nullptr;
    return ncclSuccess;
  }
  std::unique_ptr<Comm> comm = std::move(pending->second);
  connecting_.erase(pending);
  write_cookie(handle, 0);
  *send_comm = comm.get();
  adopt(std::move(comm));
  return ncclSuccess;
}

Status Plugin::accept(void* listen_comm, void** recv_comm) {
  if (recv_comm == nullptr) return ncclInvalidArgument;
  std::unique_lock lock(mutex_);
  Comm* listen = find_comm(listen_comm, CommKind::kListen);
  if (listen == nullptr) {
    OFI_WARN("NET/OFI accept: %p is not an open listen comm", listen_comm);
    return ncclInvalidArgument;
  }
  std::unique_ptr<Comm> comm;
  if (Status s = poll_accept(*listen, &comm); !s.ok()) return s;
  *recv_comm = comm.get();
  if (comm) adopt(std::move(comm));
  return ncclSuccess;
}

Status Plugin::close(void* comm, CommKind kind) {
  std::unique_lock lock(mutex_);
  Comm* found = find_comm(comm, kind);
  if (found == nullptr) {
    OFI_WARN("NET/OFI close: %p is not an open %s comm", comm,
             kind == CommKind::kListen ? "listen"
             : kind == CommKind::kSend ? "send"
                                       : "recv");
    return ncclInvalidArgument;
  }
  forget(found);
  return ncclSuccess;
}

}  // namespace nccom::ofi
