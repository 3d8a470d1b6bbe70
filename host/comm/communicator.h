// Communicator — one rank's view of a communicator after init: who it is,
// every peer's 112-byte record, the bootstrap mesh to reach them, and the
// cluster_id/epoch the root chose. The runtime holds it as an opaque handle.
#pragma once

#include "bootstrap/peer_mesh.h"
#include "bootstrap/wire.h"
#include "comm/settings.h"
#include "health/watch.h"
#include "rings/summary.h"

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nccom::comm {

struct InitRequest {
  const char* root_comm_id = nullptr;  // "host:port" for the global comm, or NULL
  const ncclUniqueId* id = nullptr;    // the group's id when root_comm_id is empty
  int nranks = 0;
  int rank = -1;
  const enc_neuron_device_info_t* device = nullptr;
  bool global = false;
};

// Something a later stage attaches to a communicator and that lives and
// dies with it (the transports and proxy of neuronBuildGraphComm), without
// the communicator layer depending on it.
class CommExtension {
 public:
  virtual ~CommExtension() = default;
};

class Communicator {
 public:
  // ncclCommInitRank + initTransportsRank.
  static Result<std::unique_ptr<Communicator>> create(const InitRequest& request,
                                                      const BootstrapSettings& settings);
  ~Communicator();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  int device() const { return device_; }
  bool global() const { return global_; }
  uint64_t cluster_id() const { return cluster_id_; }
  int64_t epoch() const { return epoch_; }
  const std::vector<bootstrap::PeerRecord>& peers() const { return peers_; }
  const enc_neuron_device_info_t& device_info() const { return device_info_; }
  int local_rank_count() const;  // ranks sharing this rank's host hash
  int node_count() const;        // distinct host hashes

  // The communicator is set up (neuronBuildGraphComm connected its rings):
  // bootstrap waits are bounded by the socket timeout alone from now on, and
  // freeing it is a clean departure (the members still setting up are told,
  // so they do not take the closing connections for a failure).
  void finish_setup();
  // Its setup failed (`why`): the members still setting up are told, so a
  // member waiting for this rank names the cause instead of this rank's
  // closing connection. Nothing once set up.
  void give_up_setup(const std::string& why);

  // The bootstrap services (send/recv, all-gather). With a single rank and no
  // bootstrap network, all-gather is a local no-op and send/recv are errors.
  Status send(int peer, bootstrap::MsgType type, const void* data, std::size_t size);
  Status recv(int peer, bootstrap::MsgType type, void* data, std::size_t size);
  Status all_gather(void* data, std::size_t size_per_rank);
  // The same with a given algorithm instead of the rule's (tests, benchmarks).
  Status all_gather(void* data, std::size_t size_per_rank, bootstrap::AllGatherAlgorithm algorithm);

  // The rings, kangaRing paths and MLA cycles neuronBuildGraphComm built
  // (empty before). neuronGetCommInfo hands out pointers into it, valid
  // until the next build or neuronFreeComm.
  const std::optional<rings::GraphSummary>& graph() const { return graph_; }
  void set_graph(rings::GraphSummary summary) { graph_ = std::move(summary); }

  // The transports built over the graph (nullptr before); replaced by a
  // later build, released with the communicator (before its mesh).
  CommExtension* transports() const { return transports_.get(); }

  // This rank as the health service watches it (nullptr when no service
  // runs in this process): the proxy scheduler reports its progress there.
  const std::shared_ptr<health::RankWatch>& health() const { return health_; }
  void set_transports(std::unique_ptr<CommExtension> t) { transports_ = std::move(t); }

 private:
  Communicator() = default;
  Status bring_up(const InitRequest& request, const BootstrapSettings& settings);
  // bring_up's steps, in order.
  Result<bootstrap::UniqueId> resolve_id(const InitRequest& request,
                                         const BootstrapSettings& settings);
  bootstrap::PeerRecord own_record(const BootstrapSettings& settings, uint64_t id_hash) const;
  Status join(const bootstrap::UniqueId& id, const bootstrap::PeerRecord& own,
              const BootstrapSettings& settings);
  Status exchange_peer_records(const bootstrap::PeerRecord& own, const health::CardBytes& card,
                               std::vector<health::CardBytes>& cards);
  std::string host_label(const BootstrapSettings& settings) const;
  void share_rank_maps() const;

  int rank_ = -1;
  int nranks_ = 0;
  int device_ = -1;
  bool global_ = false;
  uint64_t cluster_id_ = 0;
  int64_t epoch_ = 0;
  std::optional<bootstrap::SocketAddress> root_;  // this communicator's bootstrap root
  enc_neuron_device_info_t device_info_{};
  std::unique_ptr<bootstrap::PeerMesh> mesh_;
  bool set_up_ = false;  // finish_setup ran: freeing is a clean departure
  std::vector<bootstrap::PeerRecord> peers_;
  std::optional<rings::GraphSummary> graph_;
  std::shared_ptr<health::RankWatch> health_;
  std::unique_ptr<CommExtension> transports_;  // declared last: destroyed first
};

// ---- Handles --------------------------------------------------------------
// The pointers handed to the runtime are registered, so a NULL, stale or
// foreign handle is refused (NRT_INVALID_HANDLE) instead of dereferenced.
void* register_handle(std::unique_ptr<Communicator> comm);
Communicator* find_handle(void* handle);
std::unique_ptr<Communicator> release_handle(void* handle);

// ---- Unique ids and roots --------------------------------------------------
// ncclGetUniqueId: with an empty root_comm_id, starts a root on this rank's
// bootstrap interface (ephemeral port, random secret) and returns its id;
// with "host:port", only parses it.
Result<bootstrap::UniqueId> get_unique_id(const char* root_comm_id, int nranks, bool global,
                                          const BootstrapSettings& settings);

// The id of a communicator whose root is "host:port": the address, the
// secret every rank derives alike (bootstrap.secret, or a hash of the address
// when unset) and the protocol every rank chooses alike.
Result<bootstrap::UniqueId> id_from_root_address(const char* root_comm_id, int nranks, bool global,
                                                 const BootstrapSettings& settings);

// Starts a root for `id` listening on `listen_on` (ephemeral port when 0)
// and keeps it until reap_roots() finds it finished. Returns the bound address.
Result<bootstrap::SocketAddress> start_root(const bootstrap::UniqueId& id,
                                            const bootstrap::SocketAddress& listen_on, int nranks,
                                            const BootstrapSettings& settings);

// Waits for the roots this process started whose handshakes are over and
// frees them; returns how many are still running (a root that failed its
// communicator runs on to tell late ranks, until its deadline).
int reap_roots();

// Ends the roots of this process that have given their verdict and still
// answer late ranks: those on `port`, or all of them with 0.
void stop_decided_roots(uint16_t port);
// Gives every root of this process up to `limit` in all to finish (a root
// finishes shortly after its last answer), then reaps; returns how many
// are still running.
int wait_roots(std::chrono::milliseconds limit);
// A rank whose join failed waits (up to `limit`) for a root of this process
// at `address` to finish answering the others, so that leaving does not cut
// the verdict short for ranks still being told.
void settle_root(const bootstrap::SocketAddress& address, std::chrono::milliseconds limit);

}  // namespace nccom::comm
