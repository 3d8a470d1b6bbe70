#include "health/service.h"

#include "health/engine.h"
#include "health/job_registry.h"
#include "health/port_share.h"
#include "log/log.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <mutex>

namespace nccom::health {
namespace {

using engine::Engine;
using engine::host_name;
using engine::listen_shared;
using engine::random_key;
using engine::set_nonblocking;
using engine::Socket;
using engine::SocketAddress;

// The process's one engine.

std::mutex g_mu;
std::unique_ptr<Engine> g_engine;
ServiceSettings g_settings;
bool g_tried = false;
Card g_card;

}  // namespace

// fork(): the service's lock, the engine thread's state and the registry are
// held across the fork (in that order, which no other path reverses), so the
// child inherits none of them half-changed or locked by a thread it does not
// have. The child then forgets the engine (closing its descriptors, so the
// parent's ports and links are the parent's alone: a parent that dies is
// refused, not silent) and the parent's communicators, errors and warnings,
// and starts its own service with its first communicator.
static void hold_before_fork() {
  g_mu.lock();
  if (g_engine) g_engine->hold_for_fork();
  Registry::instance().hold_for_fork();
}

static void release_in_parent() {
  Registry::instance().release_after_fork();
  if (g_engine) g_engine->release_after_fork();
  g_mu.unlock();
}

static void forget_in_child() {
  Registry::instance().release_after_fork();
  Registry::instance().clear();
  if (g_engine) {
    g_engine->abandon();
    (void)g_engine.release();  // its thread does not exist here; its locks stay held
  }
  g_tried = false;
  g_card = Card{};
  g_mu.unlock();
}

// The nccom-ras port of health.client_address, shared with the job's other
// processes on this host; invalid (after a WARN that says why) when none.
static Socket client_port(const std::string& client_address) {
  auto address = SocketAddress::parse(client_address);
  auto shared = address ? listen_shared(*address) : Result<Socket>(address.take_error());
  if (shared) return std::move(*shared);
  if (!address) {
    NCCOM_WARN(
        "health: no nccom-ras port in this process (%s): %s; set health.client_address "
        "to a free port or empty",
        client_address.c_str(), shared.error().message.c_str());
    return Socket();
  }
  // Another program holds it (not another job: jobs share it and the engine
  // settles who moves once it knows this job's processes). The next port of
  // the span that this process can share is taken, as the engine's move
  // does; every process of the job on this host takes the same one.
  Socket client;
  std::string moved;
  for (int port = address->port() + 1;
       port < address->port() + engine::kClientPortSpan && port <= 65535 && !client.valid();
       ++port) {
    SocketAddress to = *address;
    to.set_port(static_cast<uint16_t>(port));
    if (auto next = listen_shared(to)) {
      client = std::move(*next);
      moved = to.to_string() + " (nccom-ras -p " + std::to_string(port) + ")";
    }
  }
  NCCOM_WARN(
      "health: nccom-ras port %s: %s%s; set health.client_address (NCCOM_RAS_ADDR) to a "
      "free port to choose it, or empty for none",
      client_address.c_str(), shared.error().message.c_str(),
      moved.empty() ? " and the next ports too: this process answers no nccom-ras"
                    : ("; this process's nccom-ras port is " + moved).c_str());
  return client;
}

// The service's line in the log, and this job in the host's registry.
static void announce(const ServiceSettings& settings, const Socket& client) {
  NCCOM_INFO(log::kInit, "health: service on %s, nccom-ras port %s, keep-alive %llu ms x %d",
             g_card.endpoint.to_string().c_str(),
             client.valid() ? client.local_address().to_string().c_str() : "none",
             static_cast<unsigned long long>(settings.keepalive_ms), settings.timeout_factor);
  if (!client.valid()) return;
  const std::string address = client.local_address().to_string();
  if (const std::string why = registry::publish(address); !why.empty()) {
    NCCOM_INFO(log::kInit,
               "health: not in the host's job registry (%s): nccom-ras finds this "
               "job only with -p",
               why.c_str());
  }
}

Card ensure_service(const ServiceSettings& settings, const bootstrap::SocketAddress& host,
                    const std::string& host_label) {
  std::lock_guard lock(g_mu);
  if (g_tried) return g_card;
  g_tried = true;
  static std::once_flag hooks;
  std::call_once(hooks, [] {
    (void)Registry::instance();  // built first, so destroyed after the engine stops
    std::atexit(stop_service);
    pthread_atfork(hold_before_fork, release_in_parent, forget_in_child);
  });
  g_settings = settings;
  g_card.process = random_key();
  g_card.pid = static_cast<uint32_t>(getpid());
  g_card.host = host_label.empty() ? host_name() : host_label;
  if (!settings.enabled) {
    NCCOM_INFO(log::kInit, "health: the health service is off (health.enable = false)");
    return g_card;
  }
  SocketAddress bind_to = host;
  bind_to.set_port(0);
  auto listener = Socket::listen(bind_to);
  if (!listener || !set_nonblocking(listener->fd())) {
    NCCOM_WARN(
        "health: cannot start the health service: %s; this process is not watched and "
        "cannot answer nccom-ras",
        listener ? "fcntl failed" : listener.error().message.c_str());
    return g_card;
  }
  Socket client;
  if (!settings.client_address.empty()) client = client_port(settings.client_address);
  g_card.service = true;
  g_card.endpoint = listener->local_address();
  if (client.valid()) g_card.client_inode = engine::socket_inode(client.fd());
  announce(settings, client);
  g_engine = std::make_unique<Engine>(settings, std::move(*listener), std::move(client), g_card);
  return g_card;
}

void add_comm(const std::shared_ptr<CommRecord>& record, uint64_t secret,
              const std::vector<Card>& cards) {
  std::lock_guard lock(g_mu);
  if (g_engine) g_engine->add_comm(record, secret, cards);
}

void remove_comm(const CommRecord* record) {
  Engine* engine = nullptr;
  {
    std::lock_guard lock(g_mu);
    engine = g_engine.get();
  }
  if (engine != nullptr) engine->remove_comm(record);
}

bool service_running() {
  std::lock_guard lock(g_mu);
  return g_engine != nullptr;
}

ServiceSettings service_settings() {
  std::lock_guard lock(g_mu);
  return g_settings;
}

void stop_service() {
  std::unique_ptr<Engine> engine;
  {
    std::lock_guard lock(g_mu);
    engine = std::move(g_engine);
    g_tried = false;
    g_card = Card{};
  }
  engine.reset();
  registry::withdraw();
}

}  // namespace nccom::health
