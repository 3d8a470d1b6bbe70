// Unique ids and the roots this process hosts (the original's
// bootstrapGetUniqueId and bootstrapCreateRoot).
#include "bootstrap/root.h"
#include "comm/communicator.h"
#include "comm/identity.h"
#include "log/log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <mutex>
#include <random>

namespace nccom::comm {
namespace {

using RootList = std::list<std::unique_ptr<bootstrap::Root>>;

std::mutex g_roots_mutex;
// Made by the first root (under g_roots_mutex). Never destroyed while a
// root may still run: its thread uses it. Freed at unload once empty.
RootList* g_roots = nullptr;
RootList& roots() {
  if (g_roots == nullptr) g_roots = new RootList;
  return *g_roots;
}

uint64_t random_secret() {
  std::random_device device;
  uint64_t secret = 0;
  while (secret == 0) secret = (static_cast<uint64_t>(device()) << 32) ^ device();
  return secret;
}

}  // namespace

Result<bootstrap::SocketAddress> start_root(const bootstrap::UniqueId& id,
                                            const bootstrap::SocketAddress& listen_on, int nranks,
                                            const BootstrapSettings& settings) {
  // A root of this process that failed its communicator may still hold the
  // port to answer late ranks; a new communicator on the same port (a
  // runtime that retries its init) takes precedence.
  if (listen_on.port() != 0) stop_decided_roots(listen_on.port());
  auto listener = bootstrap::Socket::listen(listen_on);
  if (!listener) {
    // Another job's root, or any program, holds the port: say what to do.
    const std::string taken = std::strerror(EADDRINUSE);
    const std::string& why = listener.error().message;
    const bool in_use = why.size() >= taken.size() &&
                        why.compare(why.size() - taken.size(), taken.size(), taken) == 0;
    return make_error(listener.error().status,
                      "bootstrap root: cannot listen on " + listen_on.to_string() + ": " + why +
                          (in_use ? " (another program or job holds the port; give the root a "
                                    "port no program uses, below the ephemeral range "
                                    "net.ipv4.ip_local_port_range, e.g. in NEURON_RT_ROOT_COMM_ID)"
                                  : ""));
  }
  bootstrap::RootOptions options;
  options.nranks = nranks;
  options.secret = id.secret;
  options.timeout = settings.handshake_timeout;
  auto root = bootstrap::Root::start(std::move(listener).value(), options);
  if (!root) return root.take_error();
  const bootstrap::SocketAddress bound = (*root)->address();
  NCCOM_INFO(log::kBootstrap, "bootstrap root for %d ranks listening on %s (%s)", nranks,
             bound.to_string().c_str(),
             id.protocol == bootstrap::Protocol::kHierarchical ? "hierarchical" : "flat");
  reap_roots();
  std::lock_guard lock(g_roots_mutex);
  roots().push_back(std::move(root).value());
  return bound;
}

void stop_decided_roots(uint16_t port) {
  RootList stopped;
  {
    std::lock_guard lock(g_roots_mutex);
    if (g_roots == nullptr) return;
    for (auto it = g_roots->begin(); it != g_roots->end();) {
      if ((port == 0 || (*it)->address().port() == port) && (*it)->decided()) {
        stopped.splice(stopped.end(), *g_roots, it++);
      } else {
        ++it;
      }
    }
  }
  for (auto& r : stopped) r->stop_if_decided();
}

int reap_roots() {
  RootList finished;
  int running = 0;
  {
    std::lock_guard lock(g_roots_mutex);
    if (g_roots == nullptr) return 0;
    for (auto it = g_roots->begin(); it != g_roots->end();) {
      if ((*it)->finished()) {
        finished.splice(finished.end(), *g_roots, it++);
      } else {
        ++running;
        ++it;
      }
    }
  }
  return running;  // `finished` joins its threads (already done) outside the lock
}

int wait_roots(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  {
    std::lock_guard lock(g_roots_mutex);
    if (g_roots == nullptr) return 0;
    for (auto& r : *g_roots) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      (void)r->wait_for(std::max(left, std::chrono::milliseconds(0)));
    }
  }
  return reap_roots();
}

// A root that finishes after the last libnccom call that reaps (a failed
// join, the last neuronFreeComm) would stay joinable until the process ends.
// When the library goes away (exit, or dlclose) the finished ones are joined,
// so no finished thread is left behind; a root still running then is left
// alone (the list is never destroyed, so nothing terminates).
__attribute__((destructor)) static void reap_roots_at_unload() {
  stop_decided_roots(0);  // their code goes away with the library
  if (reap_roots() != 0) return;
  std::lock_guard lock(g_roots_mutex);
  delete g_roots;  // empty: an unloaded libnccom leaves nothing allocated
  g_roots = nullptr;
}

void settle_root(const bootstrap::SocketAddress& address, std::chrono::milliseconds limit) {
  // Under the lock, so that reap_roots() cannot free the root meanwhile. At
  // the end of setup the root has normally finished and this returns at
  // once; only a root still answering holds other roots' bookkeeping, and
  // only up to `limit`.
  std::lock_guard lock(g_roots_mutex);
  if (g_roots == nullptr) return;
  for (auto& r : *g_roots) {
    if (!(r->address() == address) || r->wait_for(limit)) continue;
    NCCOM_WARN("bootstrap root %s is still answering after %lld ms; leaving anyway",
               address.to_string().c_str(), static_cast<long long>(limit.count()));
  }
}

Result<bootstrap::UniqueId> get_unique_id(const char* root_comm_id, int nranks, bool global,
                                          const BootstrapSettings& settings) {
  if (root_comm_id != nullptr && root_comm_id[0] != '\0') {
    return id_from_root_address(root_comm_id, nranks, global, settings);
  }
  bootstrap::UniqueId id;
  id.secret = random_secret();
  id.protocol = choose_protocol(settings, global, nranks);
  auto bound = start_root(id, settings.interface.address, nranks, settings);
  if (!bound) return bound.take_error();
  id.root = *bound;
  return id;
}

Result<bootstrap::UniqueId> id_from_root_address(const char* root_comm_id, int nranks, bool global,
                                                 const BootstrapSettings& settings) {
  auto address = bootstrap::SocketAddress::parse(root_comm_id);
  if (!address) {
    NCCOM_WARN(
        "Invalid Comm Id [%s], please use format: <ipv4>:<port> | [<ipv6>]:<port> | "
        "<hostname>:<port> (%s)",
        root_comm_id, address.error().message.c_str());
    return make_error(NRT_INVALID, "invalid root comm id \"" + std::string(root_comm_id) +
                                       "\": " + address.error().message);
  }
  NCCOM_INFO(log::kInit | log::kBootstrap, "Root comm ID %s to %s",
             root_comm_id_origin(settings, root_comm_id).c_str(), root_comm_id);
  bootstrap::UniqueId id;
  id.root = *address;
  const std::string basis =
      settings.secret.empty() ? "nccom-root:" + address->to_string() + "/" + std::to_string(nranks)
                              : settings.secret;
  id.secret = hash_bytes(basis.data(), basis.size());
  if (id.secret == 0) id.secret = 1;
  id.protocol = choose_protocol(settings, global, nranks);
  return id;
}

}  // namespace nccom::comm
