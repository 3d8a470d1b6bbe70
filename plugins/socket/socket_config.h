// Configuration of the socket net plugin. The plugin reads no environment
// variable: it declares its knobs in nccomNetConfig (nccom/net_config.h) —
// plugins.socket.nsocks_per_thread (NCCL_NSOCKS_PERTHREAD) and
// plugins.socket.nthreads (NCCL_SOCKET_NTHREADS) — and the host hands their
// effective values, with the host's bootstrap.socket_ifname as interface
// filter (in NCCL one variable filters both), to its configure() before init.
// Without that call the built-in defaults apply.
#pragma once

#include <nccom/net_common.h>

#include <string>

namespace nccom::socket {

inline constexpr int kDefaultNsocksPerThread = 1;
inline constexpr int kDefaultNthreads = 1;
inline constexpr int kMaxNsocksPerThread = 64;
inline constexpr int kMaxNthreads = 16;
inline constexpr int kMaxDataSockets = 64;  // nsocks_per_thread * nthreads
// Every interface but docker bridges; the loopback is included.
inline constexpr const char* kDefaultIfnames = "^docker";

struct SocketConfig {
  int nsocks_per_thread = kDefaultNsocksPerThread;
  int nthreads = kDefaultNthreads;
  std::string ifnames = kDefaultIfnames;
};

// A snapshot of the current configuration.
SocketConfig current_config();

// True when `name` passes an NCCL_SOCKET_IFNAME-style filter: a comma
// separated list of name prefixes; a leading '^' excludes instead of
// selecting, a following '=' asks for exact names. An empty filter passes
// every interface.
bool interface_selected(const std::string& filter, const char* name);

// The counts a comm would be built with are valid (also used on the counts a
// connecting peer announces).
bool socket_counts_valid(int nsocks_per_thread, int nthreads);

}  // namespace nccom::socket
