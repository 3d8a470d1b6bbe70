#include "health/service.h"

#include "health/engine.h"
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

// A forked child has none of the parent's threads: it forgets the engine
// (closing its descriptors, so the parent's ports are the parent's alone) and
// starts its own with its first communicator.
static void forget_in_child() {
  if (g_engine) {
    g_engine->abandon();
    (void)g_engine.release();  // its thread does not exist here
  }
  g_tried = false;
  g_card = Card{};
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
    pthread_atfork(nullptr, nullptr, forget_in_child);
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
  if (!settings.client_address.empty()) {
    auto address = SocketAddress::parse(settings.client_address);
    auto shared = address ? listen_shared(*address) : Result<Socket>(address.take_error());
    if (shared) {
      client = std::move(*shared);
    } else {
      NCCOM_WARN(
          "health: no nccom-ras port in this process (%s): %s; set health.client_address "
          "to a free port or empty",
          settings.client_address.c_str(), shared.error().message.c_str());
    }
  }
  g_card.service = true;
  g_card.endpoint = listener->local_address();
  NCCOM_INFO(log::kInit, "health: service on %s, nccom-ras port %s, keep-alive %llu ms x %d",
             g_card.endpoint.to_string().c_str(),
             client.valid() ? settings.client_address.c_str() : "none",
             static_cast<unsigned long long>(settings.keepalive_ms), settings.timeout_factor);
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
}

}  // namespace nccom::health
