#include "socket_config.h"

#include "socket_log.h"

#include <cstring>
#include <mutex>
#include <string_view>

namespace nccom::socket {
namespace {

std::mutex g_config_mutex;
SocketConfig g_config;  // guarded by g_config_mutex

bool name_matches(std::string_view entry, const char* name, bool exact) {
  if (entry.empty()) return false;
  // NCCL_SOCKET_IFNAME entries may carry a ":port" suffix; ports do not apply here.
  if (auto colon = entry.find(':'); colon != std::string_view::npos) entry = entry.substr(0, colon);
  std::string_view n(name);
  return exact ? n == entry : n.substr(0, entry.size()) == entry;
}

}  // namespace

SocketConfig current_config() {
  std::lock_guard<std::mutex> lock(g_config_mutex);
  return g_config;
}

bool interface_selected(const std::string& filter, const char* name) {
  std::string_view rest(filter);
  if (rest.empty()) return true;
  bool exclude = false;
  bool exact = false;
  if (rest.front() == '^') {
    exclude = true;
    rest.remove_prefix(1);
  }
  if (!rest.empty() && rest.front() == '=') {
    exact = true;
    rest.remove_prefix(1);
  }
  bool listed = false;
  while (!rest.empty() && !listed) {
    size_t comma = rest.find(',');
    listed = name_matches(rest.substr(0, comma), name, exact);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return exclude ? !listed : listed;
}

bool socket_counts_valid(int nsocks_per_thread, int nthreads) {
  return nsocks_per_thread >= 1 && nsocks_per_thread <= kMaxNsocksPerThread && nthreads >= 1 &&
         nthreads <= kMaxNthreads && nsocks_per_thread * nthreads <= kMaxDataSockets;
}

}  // namespace nccom::socket

extern "C" ncclResult_t nccomSocketConfigure(int nsocks_per_thread, int nthreads,
                                             const char* ifnames) {
  using namespace nccom::socket;
  int nspt = nsocks_per_thread == 0 ? kDefaultNsocksPerThread : nsocks_per_thread;
  int nthr = nthreads == 0 ? kDefaultNthreads : nthreads;
  if (!socket_counts_valid(nspt, nthr)) {
    SOCK_WARN(
        "nccomSocketConfigure: nsocks_per_thread %d x nthreads %d out of range "
        "(1..%d x 1..%d, at most %d sockets)",
        nsocks_per_thread, nthreads, kMaxNsocksPerThread, kMaxNthreads, kMaxDataSockets);
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(g_config_mutex);
  g_config.nsocks_per_thread = nspt;
  g_config.nthreads = nthr;
  g_config.ifnames = ifnames != nullptr ? ifnames : kDefaultIfnames;
  return ncclSuccess;
}
