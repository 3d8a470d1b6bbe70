#include "socket_devices.h"

#include "socket_config.h"
#include "socket_log.h"

#include <ifaddrs.h>
#include <net/if.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <vector>

namespace nccom::socket {
namespace {

constexpr int kFallbackSpeedMbps = 10000;
constexpr int kMaxComms = 65536;

std::mutex g_devices_mutex;
bool g_initialized = false;     // guarded by g_devices_mutex
std::vector<Device> g_devices;  // guarded; elements stable until fini

bool is_link_local_v6(const sockaddr* sa) {
  auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
  return IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr);
}

int read_speed(const std::string& ifname) {
  std::ifstream in("/sys/class/net/" + ifname + "/speed");
  long speed = 0;
  // Virtual interfaces (lo) fail the read or report -1.
  if (!(in >> speed) || speed <= 0 || speed > INT_MAX) return kFallbackSpeedMbps;
  return static_cast<int>(speed);
}

std::string read_pci_path(const std::string& ifname) {
  std::string link = "/sys/class/net/" + ifname + "/device";
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return {};
  return resolved;
}

// Adds or upgrades the device of this interface: one device per name, an
// IPv4 address preferred over an IPv6 one.
void consider(std::vector<Device>& found, const ifaddrs* ifa) {
  int family = ifa->ifa_addr->sa_family;
  for (Device& d : found) {
    if (d.name != ifa->ifa_name) continue;
    if (d.addr.family() == AF_INET6 && family == AF_INET) {
      d.addr.len = sizeof(sockaddr_in);
      memcpy(&d.addr.storage, ifa->ifa_addr, d.addr.len);
    }
    return;
  }
  Device d;
  d.name = ifa->ifa_name;
  d.addr.len = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  memcpy(&d.addr.storage, ifa->ifa_addr, d.addr.len);
  found.push_back(std::move(d));
}

}  // namespace

ncclResult_t devices_init() {
  std::lock_guard<std::mutex> lock(g_devices_mutex);
  if (g_initialized) return ncclSuccess;
  SocketConfig config = current_config();
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    SOCK_WARN("getifaddrs failed: %s", strerror(errno));
    return ncclSystemError;
  }
  std::vector<Device> regular, loopback;
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    int family = ifa->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    if (family == AF_INET6 && is_link_local_v6(ifa->ifa_addr)) continue;
    if (!interface_selected(config.ifnames, ifa->ifa_name)) continue;
    consider((ifa->ifa_flags & IFF_LOOPBACK) ? loopback : regular, ifa);
  }
  freeifaddrs(list);
  // Real NICs first, so that device 0 is not the loopback on a networked host.
  for (Device& d : loopback) regular.push_back(std::move(d));
  if (regular.empty()) {
    SOCK_WARN("no usable interface (filter \"%s\")", config.ifnames.c_str());
    return ncclInternalError;
  }
  for (size_t i = 0; i < regular.size(); ++i) {
    Device& d = regular[i];
    d.pci_path = read_pci_path(d.name);
    d.speed_mbps = read_speed(d.name);
    SOCK_INFO("device %zu: %s %s, %d Mbps", i, d.name.c_str(), d.addr.str().c_str(), d.speed_mbps);
  }
  g_devices = std::move(regular);
  g_initialized = true;
  return ncclSuccess;
}

void devices_fini() {
  std::lock_guard<std::mutex> lock(g_devices_mutex);
  g_devices.clear();
  g_devices.shrink_to_fit();
  g_initialized = false;
}

bool devices_initialized() {
  std::lock_guard<std::mutex> lock(g_devices_mutex);
  return g_initialized;
}

int device_count() {
  std::lock_guard<std::mutex> lock(g_devices_mutex);
  return static_cast<int>(g_devices.size());
}

bool device_get(int dev, Device* out) {
  std::lock_guard<std::mutex> lock(g_devices_mutex);
  if (dev < 0 || dev >= static_cast<int>(g_devices.size())) return false;
  *out = g_devices[dev];
  return true;
}

ncclResult_t device_properties(int dev, ncclNetProperties_v6_t* props) {
  std::lock_guard<std::mutex> lock(g_devices_mutex);
  if (props == nullptr || dev < 0 || dev >= static_cast<int>(g_devices.size())) {
    SOCK_WARN("getProperties: bad device %d (have %zu) or NULL properties", dev, g_devices.size());
    return ncclInvalidArgument;
  }
  const Device& d = g_devices[dev];
  ncclNetProperties_v6_t p{};
  p.name = const_cast<char*>(d.name.c_str());
  p.pciPath = d.pci_path.empty() ? nullptr : const_cast<char*>(d.pci_path.c_str());
  p.guid = static_cast<uint64_t>(dev);
  p.ptrSupport = NCCL_PTR_HOST;  // host memory only: no device-memory path
  p.regIsGlobal = 0;
  p.speed = d.speed_mbps;
  p.port = 0;
  p.latency = 0.0f;
  p.maxComms = kMaxComms;
  p.maxRecvs = 1;
  p.max_write_inline_size = 0;
  p.max_mr_key_size = 0;
  p.rma_supported = 0;  // no getMrKey/iwrite/iwriteInline/iread over TCP
  *props = p;
  return ncclSuccess;
}

}  // namespace nccom::socket
