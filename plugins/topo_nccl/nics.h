// RDMA NICs: the small interface between detection and libibverbs.
//
// A NicSource lists RDMA devices with the raw verbs codes (port state,
// active speed and width, link layer). The libibverbs implementation lives
// alone in ibverbs_nics.cc; tests and callers that already know their NICs
// inject a FixedNicSource. describeNics turns a listing into the neutral
// Nic values, resolving each device's PCI function under the sysfs root.
#pragma once

#include "host_description.h"
#include "notes.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nccom::topo_nccl {

// Raw verbs values (enum ibv_port_state, active_speed/active_width bit codes,
// IBV_LINK_LAYER_*), so a fake source speaks the same language as libibverbs.
struct RdmaPortInfo {
  int portNum = 1;
  int state = 0;
  int activeSpeed = 0;
  int activeWidth = 0;
  int linkLayer = 0;
};

struct RdmaDeviceInfo {
  std::string name;
  uint64_t nodeGuid = 0;  // host byte order
  int maxQp = 0;
  std::vector<RdmaPortInfo> ports;
};

struct RdmaListing {
  std::vector<RdmaDeviceInfo> devices;
  // Why there are no devices (library missing, no kernel support, none found).
  std::string emptyReason;
  // Devices or ports the source had to skip, with why.
  std::vector<std::string> notes;
};

class NicSource {
 public:
  virtual ~NicSource() = default;
  // Never fails: whatever goes wrong becomes emptyReason or a note.
  virtual RdmaListing list() const = 0;
};

// The real thing: ibv_get_device_list, ibv_open_device, ibv_query_*.
std::unique_ptr<NicSource> makeIbverbsNicSource();

// Returns the listing it was built with.
class FixedNicSource : public NicSource {
 public:
  explicit FixedNicSource(RdmaListing listing) : listing_(std::move(listing)) {}
  RdmaListing list() const override { return listing_; }

 private:
  RdmaListing listing_;
};

// verbs codes -> what NCCL reports. Speed is per-lane rate x lanes in Mbps
// (FDR10 and QDR are both 10000 per lane); 0 for a code verbs does not define.
int verbsSpeedMbps(int activeSpeed, int activeWidth);
std::string verbsPortStateName(int state);
std::string verbsLinkLayerName(int linkLayer);

// The Nic list, ordered by name. Devices with an unusable name are skipped;
// a device whose PCI function cannot be resolved under `sysfsRoot` keeps an
// empty busId. Each skip or gap becomes a note. When the result is
// empty, *reason says why ("no RDMA devices: ...").
std::vector<Nic> describeNics(const RdmaListing& listing, const std::string& sysfsRoot,
                              Notes& notes, std::string* reason);

}  // namespace nccom::topo_nccl
