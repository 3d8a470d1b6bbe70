// Configuration of the socket net plugin. The plugin reads no environment
// variable: the host passes the effective values of its knobs
// (net.socket.nsocks_per_thread / NCCL_NSOCKS_PERTHREAD,
// net.socket.nthreads / NCCL_SOCKET_NTHREADS, an interface list in
// NCCL_SOCKET_IFNAME syntax) through the exported nccomSocketConfigure()
// before it calls init. Without that call the built-in defaults apply.
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

extern "C" {
// Optional entry point (not part of the ncclNet ABI): sets the number of data
// sockets per helper thread and of helper threads per connection, and the
// interface filter. 0 selects the default count; NULL selects the default
// filter. Returns ncclInvalidArgument and changes nothing when a value is out
// of range. Counts apply to connections made afterwards; the filter applies at
// the next init.
__attribute__((visibility("default"))) ncclResult_t nccomSocketConfigure(int nsocks_per_thread,
                                                                         int nthreads,
                                                                         const char* ifnames);
}
