#include "device_model.h"

#include "knobs.h"
#include "platform.h"
#include "runtime_log.h"

#include <map>
#include <mutex>

namespace nrt_emu::devices {
namespace {

constexpr int kDefaultDevices = 2;
constexpr uint32_t kFirstBus = 0x10;

struct Recorded {
  std::mutex mutex;
  std::map<int, PortAndRidMap> maps;
};

Recorded& recorded() {
  static Recorded* instance = new Recorded;  // never destroyed
  return *instance;
}

}  // namespace

int count() {
  static_assert(knobs::declared(knobs::Var::kDevices).hi == kMaxDevices);
  // A platform that exists with one device count only (trn3-switch-v1: 16)
  // defaults to it and refuses any other: libnccom's topology would reject
  // the node later with a less direct message.
  const platform::Spec* p = platform::current();
  const long long fallback = p != nullptr && p->devices != 0 ? p->devices : kDefaultDevices;
  const auto n = knobs::integer_or_warn(knobs::Var::kDevices, fallback);
  if (!n) return -1;
  if (p != nullptr && p->devices != 0 && *n != p->devices) {
    log::message(
        log::Level::Warn,
        "NEURON_RT_EMU_PLATFORM=%s has %d devices per node: set NEURON_RT_EMU_DEVICES=%d (or "
        "unset it), not %lld",
        p->name, p->devices, p->devices, *n);
    return -1;
  }
  return static_cast<int>(*n);
}

bool valid_device(int dev) { return dev >= 0 && dev < count(); }

// One MLA per device, and every device sees the whole host's MLAs.
bool valid_mla(int dev, int mla) { return valid_device(dev) && mla >= 0 && mla < count(); }

bool pci_bdf(int dev, Bdf* out) {
  if (!valid_device(dev)) return false;
  *out = Bdf{0, kFirstBus + static_cast<uint32_t>(dev), 0, 0};
  return true;
}

int rid_of_mla(int dev, int mla) { return valid_mla(dev, mla) ? mla : -1; }

int mla_of_rid(int dev, int rid) { return valid_mla(dev, rid) ? rid : -1; }

int peer_mla(int dev, int mla, int port) {
  if (!valid_mla(dev, mla)) return -1;
  const int n = count();
  if (n < 2) return -1;
  switch (port) {
    case 0: return (mla + 1) % n;
    case 1: return (mla + n - 1) % n;
    default: return -1;
  }
}

bool pod_peer_node(int dev, int node, uint32_t port_distance, int* peer_node) {
  if (!valid_device(dev)) return false;
  const platform::Spec* p = platform::current();
  *peer_node = -1;
  if (p == nullptr || p->pod_type == NEC_POD_TYPE_NONE || p->pod_nodes <= 1 || node < 0 ||
      node >= p->pod_nodes)
    return true;
  const int peer = static_cast<int>((static_cast<uint64_t>(node) + port_distance) %
                                    static_cast<uint64_t>(p->pod_nodes));
  *peer_node = peer == node ? -1 : peer;
  return true;
}

bool pod_can_access(nec_pod_type_t pod_type, uint32_t local_rid, uint32_t local_node,
                    uint32_t remote_rid, uint32_t remote_node) {
  const platform::Spec* p = platform::current();
  if (p == nullptr || p->pod_type == NEC_POD_TYPE_NONE || pod_type != p->pod_type) return false;
  const auto nodes = static_cast<uint32_t>(p->pod_nodes);
  const int n = count();
  return n > 0 && local_node < nodes && remote_node < nodes &&
         local_rid < static_cast<uint32_t>(n) && remote_rid < static_cast<uint32_t>(n);
}

NRT_STATUS record_port_and_rid_map(int dev, const int* mla_indexes, const int* host_device_ids,
                                   int n) {
  if (!valid_device(dev) || n <= 0 || n > kMaxMapEntries || mla_indexes == nullptr ||
      host_device_ids == nullptr) {
    log::message(log::Level::Warn,
                 "nec_build_port_and_rid_map: rejected dev=%d count=%d mla_indexes=%p "
                 "host_device_ids=%p (need a valid device, 1..%d entries, two arrays)",
                 dev, n, static_cast<const void*>(mla_indexes),
                 static_cast<const void*>(host_device_ids), kMaxMapEntries);
    return NRT_INVALID;
  }
  PortAndRidMap map;
  map.mla_indexes.assign(mla_indexes, mla_indexes + n);
  map.host_device_ids.assign(host_device_ids, host_device_ids + n);
  Recorded& r = recorded();
  std::lock_guard lock(r.mutex);
  r.maps[dev] = std::move(map);
  return NRT_SUCCESS;
}

bool recorded_map(int dev, PortAndRidMap* out) {
  Recorded& r = recorded();
  std::lock_guard lock(r.mutex);
  const auto it = r.maps.find(dev);
  if (it == r.maps.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace nrt_emu::devices
