// The plugin's devices: one per selected network interface that is up and has
// an IPv4 or (non link-local) IPv6 address. Enumerated once per init; the
// strings handed out in properties stay valid until fini.
#pragma once

#include "socket_io.h"

#include <nccom/net_v6.h>

#include <string>

namespace nccom::socket {

struct Device {
  std::string name;      // interface name
  std::string pci_path;  // realpath of /sys/class/net/<if>/device; empty if none
  SockAddr addr;         // address listen binds to (port 0)
  int speed_mbps = 0;
};

// Enumerates the interfaces (getifaddrs) through the configured filter.
// Idempotent while initialized. ncclSystemError if getifaddrs fails,
// ncclInternalError if no interface is selected.
ncclResult_t devices_init();
void devices_fini();
bool devices_initialized();

int device_count();
// Copies device `dev`; false if out of range or not initialized.
bool device_get(int dev, Device* out);
// Fills the 80-byte v5/v6 properties; ncclInvalidArgument for a bad index.
ncclResult_t device_properties(int dev, ncclNetProperties_v6_t* props);

}  // namespace nccom::socket
