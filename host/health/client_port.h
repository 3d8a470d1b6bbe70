// The health service's nccom-ras port on this host: the listener every
// process of the job shares (SO_REUSEPORT), and the rule that keeps two jobs
// apart on it (port_share.h): once a process knows its job's cards, the
// later of two jobs that share the port moves to the next free one.
// Internal to host/health; used by the engine's thread only.
#pragma once

#include "bootstrap/socket.h"
#include "health/wire.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nccom::health::engine {

class ClientPort {
 public:
  // `configured` is health.client_address; `listener` the socket bound to
  // it or to one of the ports after it (invalid: no client port).
  ClientPort(std::string configured, bootstrap::Socket listener);

  const bootstrap::Socket& listener() const { return listener_; }
  void close() { listener_.close(); }

  // Another job on the port: the job that started later moves off it,
  // saying so. `own` is this process's card, `cards` the job's others'.
  void settle(const Card& own, const std::vector<const Card*>& cards);

 private:
  void move(const std::vector<int>& local_pids, const std::string& others);

  std::string configured_;
  bootstrap::Socket listener_;
  uint16_t port_ = 0;  // the port listener_ listens on now
};

}  // namespace nccom::health::engine
