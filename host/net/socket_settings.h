// Handing the socket knobs to a plugin that takes them: the socket
// plugin reads no environment; it exports the optional
//   ncclResult_t nccomSocketConfigure(int nsocks_per_thread, int nthreads,
//                                     const char* ifnames)
// which the host calls, found by dlsym on the plugin's own handle, after
// binding and before init. A plugin without the symbol is left alone.
//
// Values: net.socket.nsocks_per_thread (NCCL_NSOCKS_PERTHREAD),
// net.socket.nthreads (NCCL_SOCKET_NTHREADS) and, as interface filter,
// bootstrap.socket_ifname (CCOM_SOCKET_IFNAME / NCCL_SOCKET_IFNAME: in NCCL
// the one variable filters both the bootstrap and the socket net); an empty
// filter is passed as NULL, the plugin's default.
#pragma once

#include "config/config.h"
#include "net/net.h"

#include <nccom/util/result.h>

#include <cstdint>
#include <string>

namespace nccom::net {

inline constexpr const char* kSocketConfigureSymbol = "nccomSocketConfigure";

// The effective values and where each came from (for messages).
struct SocketSettings {
  std::int64_t nsocks_per_thread = 1;
  std::string nsocks_source = "default";
  std::int64_t nthreads = 1;
  std::string nthreads_source = "default";
  std::string ifnames;  // "" = the plugin's default
  std::string ifnames_source = "default";
};

SocketSettings socket_settings(const config::Config& config);

// When `net` exports nccomSocketConfigure: calls it with `settings` and logs
// the values at INFO (NET|INIT); a refusal is an NRT_INVALID error naming
// both knobs, their values and sources, and the rule. Without the symbol:
// success, nothing called.
Status configure_socket(Net& net, const SocketSettings& settings);

}  // namespace nccom::net
