// One NET_NEURON connection of one channel in one direction (the original's
// ncclConnector resources): the RECV side listens and accepts, the SEND side
// connects to the listen handle the peer's RECV side published. Both halves
// complete non-blockingly; the host calls connect() until it reports done.
#pragma once

#include <nccom/transport_plugin.h>
#include <nccom/util/result.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace nccom::net_neuron {

inline constexpr uint64_t kConnectorMarker = 0x4e45544e45555231ull;  // "NETNEUR1"

// The transport channel the host sets mesh/RDH connections up on
// (neuronExpandConnectivity): above every ring channel, so a variable-peer
// descriptor of a MESH channel finds its peer's mesh connection
// (docs/decisions/net-neuron-transport.md, "Descriptor → comm"). Mirrors host/transport
// kMeshChannel.
inline constexpr int kMeshChannel = NCCOM_TRANSPORT_MESH_CHANNEL;
static_assert(NCCOM_TRANSPORT_MESH_CHANNEL == NEC_MAX_CHANNELS);

// The network the host lends, or nullptr when it lends none.
inline const nccom_transport_net_t* net_of(const nccom_transport_comm_t* comm) {
  return comm != nullptr ? comm->net : nullptr;
}

struct Connector {
  uint64_t marker = kConnectorMarker;
  const nccom_transport_comm_t* comm = nullptr;
  const nccom_transport_net_t* net = nullptr;
  nccom_transport_direction_t dir = NCCOM_TRANSPORT_SEND;
  int channel = 0;
  int peer = -1;     // the peer's rank
  int dev = 0;       // net device this side uses
  bool rma = false;  // the net device has rma_supported
  // RECV: this side's listen handle; SEND: the peer's handle, copied once and
  // passed again on every connect() call (plugins keep a cookie in it).
  uint8_t handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  bool handle_copied = false;
  void* listen_comm = nullptr;
  void* net_comm = nullptr;  // sendComm (SEND) or recvComm (RECV) once connected
  bool connected = false;
  // The op posting on this connection during an execution: two ops sharing a
  // connection at once would interleave their slices on one ordered stream.
  // Atomic: ops of different streams run under different scheduler locks.
  std::atomic<const void*> owner{nullptr};
  // Sidelink (Trn2/Trn3 receive confirmation, sidelink.cc). SEND: the
  // announcement {magic, address, key} of `sidelink_msg`, which the peer then
  // reads 4 bytes of after every receive. RECV: where the announcement lands
  // and the word each confirming iread lands in. Registered lazily on the
  // comm, deregistered by connector_free.
  bool sidelink_announced = false;   // SEND: announcement posted
  bool sidelink_listening = false;   // RECV: announcement receive posted
  bool sidelink_peer_known = false;  // RECV: announcement arrived
  uint64_t sidelink_peer_addr = 0;
  uint64_t sidelink_peer_key = 0;
  alignas(8) uint64_t sidelink_msg[3] = {};
  alignas(8) uint32_t sidelink_word = 0;
  void* sidelink_msg_mh = nullptr;
  void* sidelink_word_mh = nullptr;

  std::string describe() const;  // "channel 2 send to rank 5"
};

// Every live connector of the plugin instance, so that a pointer read from
// runtime memory (enc_net_connector.nccl_connector) is only used after it is
// known to be ours, and variable-peer descriptors find their connection.
class ConnectorRegistry {
 public:
  void add(Connector* c);
  void remove(Connector* c);
  bool contains(const void* p) const;
  Connector* find(const nccom_transport_comm_t* comm, nccom_transport_direction_t dir, int channel,
                  int peer) const;

 private:
  mutable std::mutex mu_;
  std::vector<Connector*> all_;
};

Result<Connector*> connector_setup(ConnectorRegistry& registry, const nccom_transport_comm_t* comm,
                                   nccom_transport_direction_t dir, int channel,
                                   const nccom_transport_peer_t* peer,
                                   uint8_t blob_out[NCCOM_TRANSPORT_CONNECT_BYTES]);
// One non-blocking step; *done once the net comm exists.
Status connector_connect(Connector* c, const uint8_t peer_blob[NCCOM_TRANSPORT_CONNECT_BYTES],
                         bool* done);
void connector_free(ConnectorRegistry& registry, Connector* c);
Result<void*> connector_reg_mr(Connector* c, void* data, size_t size, int type);
Status connector_dereg_mr(Connector* c, void* mhandle);

const char* net_result_name(ncclResult_t rc);
// "the net plugin TPN (Neuron ncclNet_v4) from /x/libtpn.so" when the host
// lends the plugin's origin, else "the net plugin NAME".
std::string net_plugin_text(const nccom_transport_comm_t* comm);

}  // namespace nccom::net_neuron
