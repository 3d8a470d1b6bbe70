#include "bootstrap/interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cstring>

namespace nccom::bootstrap {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool is_ipv6_link_local(const sockaddr* sa) {
  if (sa->sa_family != AF_INET6) return false;
  return IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
}

// getifaddrs does not promise a family on the netmask; give it the address's.
SocketAddress netmask_of(const ifaddrs* ifa) {
  if (ifa->ifa_netmask == nullptr) return {};
  sockaddr_storage mask{};
  const std::size_t len =
      ifa->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  std::memcpy(&mask, ifa->ifa_netmask, len);
  mask.ss_family = ifa->ifa_addr->sa_family;
  return SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&mask),
                                      static_cast<socklen_t>(len));
}

// The raw address bytes (4 or 16) of an IPv4/IPv6 SocketAddress.
std::string_view address_bytes(const SocketAddress& a) {
  if (a.family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a.sa());
    return {reinterpret_cast<const char*>(&in->sin_addr), sizeof in->sin_addr};
  }
  if (a.family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a.sa());
    return {reinterpret_cast<const char*>(&in6->sin6_addr), sizeof in6->sin6_addr};
  }
  return {};
}

bool same_subnet(const Interface& itf, const SocketAddress& root) {
  if (itf.address.family() != root.family() || itf.netmask.family() != root.family()) return false;
  const auto a = address_bytes(itf.address);
  const auto b = address_bytes(root);
  const auto m = address_bytes(itf.netmask);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (((a[i] ^ b[i]) & m[i]) != 0) return false;
  }
  return true;
}

const char* family_name(int family) {
  if (family == AF_INET) return "IPv4";
  if (family == AF_INET6) return "IPv6";
  return "any";
}

}  // namespace

InterfaceFilter InterfaceFilter::parse(std::string_view text) {
  InterfaceFilter filter;
  text = trim(text);
  if (starts_with(text, "^")) {
    filter.exclude = true;
    text.remove_prefix(1);
  }
  if (starts_with(text, "=")) {
    filter.exact = true;
    text.remove_prefix(1);
  }
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto name = trim(text.substr(0, comma));
    if (!name.empty()) filter.names.emplace_back(name);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return filter;
}

bool InterfaceFilter::matches(std::string_view interface_name) const {
  // A filter without names constrains nothing (see select_interfaces).
  if (names.empty()) return true;
  bool listed = false;
  for (const auto& name : names) {
    listed = exact ? interface_name == name : starts_with(interface_name, name);
    if (listed) break;
  }
  return listed != exclude;
}

std::vector<Interface> list_interfaces(int family) {
  std::vector<Interface> result;
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return result;
  for (const ifaddrs* ifa = all; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    const int f = ifa->ifa_addr->sa_family;
    if (f != AF_INET && f != AF_INET6) continue;
    if (family != AF_UNSPEC && f != family) continue;
    if (is_ipv6_link_local(ifa->ifa_addr)) continue;
    const socklen_t len = f == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    Interface itf{ifa->ifa_name, SocketAddress::from_sockaddr(ifa->ifa_addr, len), netmask_of(ifa)};
    itf.address.set_port(0);
    result.push_back(std::move(itf));
  }
  ::freeifaddrs(all);
  return result;
}

std::vector<Interface> select_interfaces(const std::vector<Interface>& candidates,
                                         std::string_view filter_text) {
  const InterfaceFilter filter = InterfaceFilter::parse(filter_text);
  std::vector<Interface> selected;
  if (!filter.names.empty()) {
    for (const auto& itf : candidates) {
      if (filter.matches(itf.name)) selected.push_back(itf);
    }
    return selected;
  }
  // Default rule: docker bridges and loopback only when nothing else exists.
  for (const auto& itf : candidates) {
    if (!starts_with(itf.name, "docker") && !starts_with(itf.name, "lo")) selected.push_back(itf);
  }
  return selected.empty() ? candidates : selected;
}

Result<Interface> choose_interface(std::string_view filter_text, int family,
                                   const SocketAddress& root) {
  const std::vector<Interface> all = list_interfaces(family);
  const bool filtered = !InterfaceFilter::parse(filter_text).names.empty();
  const std::vector<Interface> selected = select_interfaces(all, filter_text);
  if (root.valid()) {
    // A loopback root means a single-host job: listen where it can reach us,
    // even though the default rule would skip lo. An explicit filter still wins.
    if (root.is_loopback()) {
      for (const auto& itf : filtered ? selected : all) {
        if (itf.address.family() == root.family() && itf.address.is_loopback()) return itf;
      }
    }
    for (const auto& itf : selected) {
      if (same_subnet(itf, root)) return itf;
    }
    // No shared subnet (routed network): at least stay in the root's family.
    for (const auto& itf : selected) {
      if (itf.address.family() == root.family()) return itf;
    }
  }
  if (!selected.empty()) return selected.front();
  std::vector<std::string> names;  // interfaces that are up, each once
  std::string available;
  for (const auto& itf : all) {
    if (std::find(names.begin(), names.end(), itf.name) != names.end()) continue;
    names.push_back(itf.name);
    available += (available.empty() ? "" : ", ") + itf.name;
  }
  return make_error(NRT_INVALID,
                    "NET/Socket : No usable listening interface found (filter \"" +
                        std::string(filter_text) + "\", family " + family_name(family) +
                        "; up: " + (available.empty() ? "none" : available) +
                        "); set NCCL_SOCKET_IFNAME or CCOM_SOCKET_IFNAME to an interface "
                        "that exists (see `ip addr`)");
}

}  // namespace nccom::bootstrap
