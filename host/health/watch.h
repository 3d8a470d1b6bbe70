// nccom::health — the health service as the rest of libnccom sees it: the
// one header a communicator (and through it the proxy scheduler) includes.
// Everything else in this folder is the service's own.
//
// A process runs one service, started by its first communicator of more than
// one rank. Each rank of each communicator is a RankWatch: listed as "init"
// from before its bootstrap, joined to the job's health mesh once every
// rank's card is known, the stall watcher of its proxy streams, and gone
// when the communicator is freed.
//
// Built without the service (-DNCCOM_HEALTH=OFF), own_card() and watch()
// say so and nothing is watched: communicators work the same, the cards they
// exchange say "no service", and nccom-ras finds no process of the job.
#pragma once

#include "bootstrap/socket_address.h"
#include "proxy/progress_sink.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nccom::health {

struct ServiceSettings {
  bool enabled = true;
  // Where nccom-ras connects ("host:port"; empty: no client port). Every
  // process of a host binds it (SO_REUSEPORT); any of them answers.
  std::string client_address = "127.0.0.1:28028";
  uint64_t keepalive_ms = 1000;
  int timeout_factor = 5;            // silent this many periods: unresponsive
  uint64_t query_timeout_ms = 1000;  // a process's answer to a query
  uint64_t stall_warn_ms = 60000;    // 0: never
  uint64_t stall_fail_ms = 1800000;  // 0: never
  int max_clients = 64;
};

// What each rank adds to its peer record in the bootstrap's first
// all-gather: where its process's service listens (all zero: no service).
inline constexpr std::size_t kCardBytes = 112;
using CardBytes = std::array<uint8_t, kCardBytes>;

// This process's card. The first call starts the service (its peer port on
// `host`'s address, an ephemeral port); later calls return the same card.
// With the service disabled, not built, or unable to start (the reason is
// logged once), the card says so and nothing runs. `host_label` names this
// process's host in every report (the host name, or NCCL_HOSTID, with the
// runtime's virtual server when it is not 0).
CardBytes own_card(const ServiceSettings& settings, const bootstrap::SocketAddress& host,
                   const std::string& host_label);

// One rank of one communicator, as the service watches it. The proxy
// scheduler reports its streams here (proxy::ProgressSink).
class RankWatch : public proxy::ProgressSink {
 public:
  // The communicator's ranks are known: every rank's card (index: rank,
  // as the all-gather delivered it; a card that does not decode leaves that
  // rank unwatched) and the bootstrap secret the health links present.
  // Called once, before any scheduler reports.
  virtual void join(uint64_t secret, const std::vector<CardBytes>& cards) = 0;
  // A member's process the service found dead or gone, which no wait of
  // this communicator that needs every member should outlast ("" while none).
  virtual std::string lost() const = 0;
  // The communicator is freed: when it was the process's last, its links
  // say goodbye first (bounded by 200 ms). After the scheduler is gone.
  virtual void leave() = 0;
};

// A rank in init, listed from now on; nullptr when the service does not
// run in this process.
std::shared_ptr<RankWatch> watch(uint64_t comm_hash, int rank, int nranks);

// An asynchronous error (a failed init) that the job's report lists.
void record_error(uint64_t comm_hash, int rank, std::string text);

}  // namespace nccom::health
