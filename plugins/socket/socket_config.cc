#include "socket_config.h"

#include "socket_log.h"

#include <nccom/net_config.h>
#include <nccom/util/knob_value.h>
#include <nccom/util/log.h>

#include <cstdio>
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

namespace nccom::socket {
namespace {

// Sets the counts and the filter for connections made afterwards (the filter
// applies at the next init); false, changing nothing, when the counts are out
// of range. An empty filter selects the default.
bool apply_config(int nsocks_per_thread, int nthreads, const std::string& ifnames) {
  if (!socket_counts_valid(nsocks_per_thread, nthreads)) return false;
  std::lock_guard<std::mutex> lock(g_config_mutex);
  g_config.nsocks_per_thread = nsocks_per_thread;
  g_config.nthreads = nthreads;
  g_config.ifnames = ifnames.empty() ? kDefaultIfnames : ifnames;
  return true;
}

const char* const kEnvNsocks[] = {"NCCL_NSOCKS_PERTHREAD", nullptr};
const char* const kEnvNthreads[] = {"NCCL_SOCKET_NTHREADS", nullptr};

const nccom_knob_t kKnobs[] = {
    {"nsocks_per_thread", NCCOM_KNOB_INT, 0, "1",
     "Number of TCP sockets each helper thread of the socket network drives for one "
     "connection. nsocks_per_thread x nthreads is at most 64.",
     1, kMaxNsocksPerThread, nullptr, kEnvNsocks},
    {"nthreads", NCCOM_KNOB_INT, 0, "1",
     "Number of helper threads the socket network uses for one connection. The caller's "
     "own tests move the first thread's sockets while it keeps testing, and every thread's "
     "when the process has no more CPUs than helper threads; otherwise the further threads "
     "move theirs in parallel (NCCL uses 2 threads x 8 sockets on AWS hosts; on 2 cores, 1 "
     "measured fastest).",
     1, kMaxNthreads, nullptr, kEnvNthreads},
};
const nccom_knob_table_t kKnobTable = NCCOM_KNOB_TABLE(kKnobs);

nccom_plugin_status_t configure(const nccom_host_api_t* host, char* why, size_t why_size) {
  if (host == nullptr || host->struct_size < sizeof(nccom_host_api_t)) {
    std::snprintf(why, why_size, "the host API is missing or older than this plugin's SDK");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  if (host->log != nullptr) nccom::util::set_logger(host->log);
  int nspt = 0;
  int nthr = 0;
  if (!util::knob_int(host, "nsocks_per_thread", kDefaultNsocksPerThread, nspt) ||
      !util::knob_int(host, "nthreads", kDefaultNthreads, nthr)) {
    std::snprintf(why, why_size, "nsocks_per_thread and nthreads must be decimal integers");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  const char* filter = host->config_get != nullptr
                           ? host->config_get(host->host_ctx, "bootstrap.socket_ifname")
                           : nullptr;
  if (!apply_config(nspt, nthr, filter != nullptr ? filter : "")) {
    std::snprintf(why, why_size,
                  "nsocks_per_thread %d x nthreads %d: each count must be at least 1 and "
                  "nsocks_per_thread x nthreads at most %d data sockets per connection "
                  "(nsocks_per_thread <= %d, nthreads <= %d)",
                  nspt, nthr, kMaxDataSockets, kMaxNsocksPerThread, kMaxNthreads);
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  return NCCOM_PLUGIN_OK;
}

}  // namespace
}  // namespace nccom::socket

extern "C" __attribute__((visibility("default"))) const nccom_net_config_t nccomNetConfig = {
    sizeof(nccom_net_config_t), NCCOM_NET_CONFIG_ABI_VERSION, "socket", &nccom::socket::kKnobTable,
    &nccom::socket::configure};
