// regMr / regMrDmaBuf / deregMr / getMrKey, and the remote-key encoding
// described in comm.h.
#include "net_plugin.h"

#include <mutex>

namespace nccom::ofi {
namespace {

constexpr unsigned kKeyIdBits = 16;
constexpr uint64_t kMaxEncodableBase = 1ull << (64 - kKeyIdBits);  // 2^48

}  // namespace

bool encode_remote_key(const NicCaps& caps, uint64_t base, uint64_t provider_key, uint16_t key_id,
                       uint64_t* out) {
  if (caps.virt_addr) {
    if (provider_key == FI_KEY_NOTAVAIL) return false;
    *out = provider_key;
    return true;
  }
  if (caps.prov_key || base >= kMaxEncodableBase) return false;
  *out = (base << kKeyIdBits) | key_id;
  return true;
}

bool decode_remote_key(const NicCaps& caps, uint64_t remote, uint64_t reported_key,
                       RemoteTarget* out) {
  if (caps.virt_addr) {
    *out = RemoteTarget{remote, reported_key};
    return true;
  }
  const uint64_t base = reported_key >> kKeyIdBits;
  if (remote < base) return false;
  *out = RemoteTarget{remote - base, reported_key & ((1ull << kKeyIdBits) - 1)};
  return true;
}

Status Plugin::reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (mhandle == nullptr) return ncclInvalidArgument;
  if (type == NCCL_PTR_NEURON) {
    OFI_WARN("NET/OFI regMr: no Neuron device memory on this host (type NCCL_PTR_NEURON, %p)",
             data);
    return ncclInvalidArgument;
  }
  if (type != NCCL_PTR_HOST) {
    OFI_WARN("NET/OFI regMr: unknown memory type %d", type);
    return ncclInvalidArgument;
  }
  if (data == nullptr || size == 0) {
    OFI_WARN("NET/OFI regMr: nothing to register (%p, %zu bytes)", data, size);
    return ncclInvalidArgument;
  }
  std::unique_lock lock(mutex_);
  Comm* owner = find_data_comm(comm);
  if (owner == nullptr) {
    OFI_WARN("NET/OFI regMr: %p is not an open send or recv comm", comm);
    return ncclInvalidArgument;
  }
  Endpoint& ep = *owner->endpoint;
  const NicCaps& caps = ep.caps();
  const uint16_t key_id = caps.prov_key ? 0 : owner->keys.take();
  if (!caps.prov_key && key_id == 0) {
    OFI_WARN("NET/OFI regMr: all 65535 memory keys of this comm are in use");
    return ncclInternalError;
  }
  const uint64_t access =
      FI_SEND | FI_RECV | (caps.rma ? FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE : 0);
  fid_mr* raw = nullptr;
  if (Status s = ep.register_memory(data, size, access, key_id, &raw); !s.ok()) {
    OFI_WARN("NET/OFI Unable to register memory (type = %d) %p, %zu bytes", type, data, size);
    owner->keys.give_back(key_id);
    return s;
  }
  auto region = std::make_unique<MemoryRegion>();
  region->owner = owner;
  region->mr.reset(raw);
  region->base = reinterpret_cast<uint64_t>(data);
  region->size = size;
  region->key_id = key_id;
  region->desc = ep.descriptor(raw);
  if (caps.rma) {
    region->remote_key_valid =
        encode_remote_key(caps, region->base, fi_mr_key(raw), key_id, &region->remote_key);
    if (!region->remote_key_valid) {
      OFI_WARN(
          "NET/OFI regMr: no remote key for %p (provider key unavailable or address "
          "above 2^48); iread/iwrite cannot target it",
          data);
    }
  }
  *mhandle = region.get();
  regions_[region.get()] = owner;
  owner->regions.push_back(std::move(region));
  update_progress_ring(owner);  // a peer may now read or write here
  return ncclSuccess;
}

Status Plugin::reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset,
                              int fd, void** mhandle) {
  if (fd != -1 && type != NCCL_PTR_NEURON) {
    OFI_WARN(
        "NET/OFI regMrDmaBuf: dma-buf registration is not supported (ptrSupport has no "
        "NCCL_PTR_NEURON)");
    return ncclInvalidUsage;
  }
  return reg_mr(comm, data, size, type, mhandle);
}

Status Plugin::dereg_mr(void* comm, void* mhandle) {
  std::unique_lock lock(mutex_);
  Comm* owner = find_data_comm(comm);
  MemoryRegion* region = owner != nullptr ? owner->find_region(mhandle) : nullptr;
  if (region == nullptr) {
    OFI_WARN("NET/OFI deregMr: %p is not a registration of comm %p", mhandle, comm);
    return ncclInvalidArgument;
  }
  regions_.erase(region);
  owner->keys.give_back(region->key_id);
  std::erase_if(owner->regions, [region](const auto& r) { return r.get() == region; });
  update_progress_ring(owner);
  return ncclSuccess;
}

Status Plugin::get_mr_key(void* mhandle, uint64_t* mr_key) {
  if (mr_key == nullptr) return ncclInvalidArgument;
  std::shared_lock lock(mutex_);
  auto it = regions_.find(mhandle);
  if (it == regions_.end()) {
    OFI_WARN("NET/OFI getMrKey: %p is not a registration of an open comm", mhandle);
    return ncclInvalidArgument;
  }
  auto* region = static_cast<const MemoryRegion*>(mhandle);
  if (!it->second->endpoint->caps().rma) {
    OFI_WARN("NET/OFI getMrKey: provider %s has no RMA (rma_supported = 0)",
             discovery_.provider.c_str());
    return ncclInvalidUsage;
  }
  if (!region->remote_key_valid) return ncclInternalError;  // logged at regMr
  *mr_key = region->remote_key;
  return ncclSuccess;
}

}  // namespace nccom::ofi
