// The only file that calls libibverbs: lists RDMA devices with their ports.
//
// A host without RDMA hardware (or without the kernel modules, or without
// any provider library) is normal: ibv_get_device_list then returns NULL or
// an empty list, and the listing says "no RDMA devices" instead of failing.
#include "nics.h"

#include <endian.h>

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace nccom::topo_nccl {

// nics.cc decodes these codes without including verbs.h.
static_assert(IBV_PORT_NOP == 0 && IBV_PORT_DOWN == 1 && IBV_PORT_INIT == 2 &&
              IBV_PORT_ARMED == 3 && IBV_PORT_ACTIVE == 4 && IBV_PORT_ACTIVE_DEFER == 5);
static_assert(IBV_LINK_LAYER_UNSPECIFIED == 0 && IBV_LINK_LAYER_INFINIBAND == 1 &&
              IBV_LINK_LAYER_ETHERNET == 2);

namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
struct ContextDeleter {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};

class IbverbsNicSource : public NicSource {
 public:
  RdmaListing list() const override {
    RdmaListing listing;
    int count = 0;
    errno = 0;
    std::unique_ptr<ibv_device*, DeviceListDeleter> devices(ibv_get_device_list(&count));
    if (!devices) {
      const int err = errno;
      listing.emptyReason = "ibv_get_device_list failed (" +
                            std::string(err ? std::strerror(err) : "no error code") + ")";
      return listing;
    }
    if (count <= 0) {
      listing.emptyReason = "libibverbs found no devices";
      return listing;
    }
    for (int i = 0; i < count && devices.get()[i] != nullptr; ++i)
      describe(devices.get()[i], listing);
    return listing;
  }

 private:
  static void describe(ibv_device* device, RdmaListing& listing) {
    RdmaDeviceInfo info;
    const char* name = ibv_get_device_name(device);
    info.name = name ? name : "";
    info.nodeGuid = be64toh(ibv_get_device_guid(device));
    std::unique_ptr<ibv_context, ContextDeleter> context(ibv_open_device(device));
    if (!context) {
      listing.notes.push_back("skipped RDMA device " + info.name + ": ibv_open_device failed (" +
                              std::strerror(errno) + ")");
      return;
    }
    ibv_device_attr attr{};
    if (const int rc = ibv_query_device(context.get(), &attr); rc != 0) {
      listing.notes.push_back("skipped RDMA device " + info.name + ": ibv_query_device failed (" +
                              std::strerror(rc) + ")");
      return;
    }
    info.maxQp = attr.max_qp;
    for (int port = 1; port <= attr.phys_port_cnt; ++port) {
      ibv_port_attr portAttr{};
      if (const int rc = ibv_query_port(context.get(), static_cast<uint8_t>(port), &portAttr);
          rc != 0) {
        listing.notes.push_back("RDMA device " + info.name + " port " + std::to_string(port) +
                                ": ibv_query_port failed (" + std::strerror(rc) + "); skipped");
        continue;
      }
      info.ports.push_back(RdmaPortInfo{port, static_cast<int>(portAttr.state),
                                        portAttr.active_speed, portAttr.active_width,
                                        portAttr.link_layer});
    }
    listing.devices.push_back(std::move(info));
  }
};

}  // namespace

std::unique_ptr<NicSource> makeIbverbsNicSource() { return std::make_unique<IbverbsNicSource>(); }

}  // namespace nccom::topo_nccl
