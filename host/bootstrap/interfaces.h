// Choosing the network interface the bootstrap listens on.
//
// NCCL_SOCKET_IFNAME / CCOM_SOCKET_IFNAME syntax: a comma-separated list of
// interface-name prefixes; a leading '^' excludes the listed ones instead; a
// leading '=' requires exact names ("^=" combines both). Without a filter,
// interfaces named docker* and lo* are skipped unless nothing else exists.
#pragma once

#include "bootstrap/socket_address.h"

#include <nccom/util/result.h>

#include <string>
#include <string_view>
#include <vector>

namespace nccom::bootstrap {

struct Interface {
  std::string name;
  SocketAddress address;  // port 0
  SocketAddress netmask;  // same family as `address`; AF_UNSPEC when unknown
};

struct InterfaceFilter {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;

  static InterfaceFilter parse(std::string_view text);
  bool matches(std::string_view interface_name) const;
};

// `family`: AF_UNSPEC, AF_INET or AF_INET6. Interfaces that are down, and
// IPv6 link-local addresses, are skipped. Order: the system's.
std::vector<Interface> list_interfaces(int family);

// Applies the filter (or the default rule when `filter_text` is empty) to
// `candidates`, keeping their order.
std::vector<Interface> select_interfaces(const std::vector<Interface>& candidates,
                                         std::string_view filter_text);

// The interface to use: the first selected one, or, when `root` is valid,
// preferably one in the same subnet as the root address (or the loopback
// interface if the root is a loopback address). Error (NRT_INVALID) naming
// the filter when none qualifies: "NET/Socket : No usable listening interface found".
Result<Interface> choose_interface(std::string_view filter_text, int family,
                                   const SocketAddress& root);

}  // namespace nccom::bootstrap
