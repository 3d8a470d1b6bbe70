// The P2P exchange unit (p2pSendSetup / p2pRecvSetup): the original's 80-byte
// p2pConnectInfo {rank, read, directPtr, devIpc[64]} at the start of the
// 128-byte ncclConnect blob. On Neuron the 64-byte IPC handle is "packed and
// exchanged, ignored"; nccom fills it with what a runtime needs to reach the
// peer and what the other side checks before it trusts the blob
// (docs/decisions/p2p.md, "Connect checks the blob"): a magic, a version, the sender's host
// and process identity, device, channel and direction.
#pragma once

#include <nccom/transport_plugin.h>
#include <nccom/util/result.h>

#include <cstddef>
#include <cstdint>

namespace nccom::p2p {

struct ConnectInfo {    // p2pConnectInfo, 80 bytes
  int32_t rank;         // the rank whose memory the peer reaches (the sender of the blob)
  int32_t read;         // useRead: 0 (NCCL_P2P_READ_ENABLE is the constant "unset")
  void* direct_ptr;     // raw device pointer; NULL: the runtime owns device memory
  uint8_t dev_ipc[64];  // IpcHandle below
};
static_assert(sizeof(ConnectInfo) == 80, "p2pConnectInfo is 80 bytes, as the original's");
static_assert(offsetof(ConnectInfo, direct_ptr) == 8);
static_assert(offsetof(ConnectInfo, dev_ipc) == 16);
static_assert(sizeof(ConnectInfo) <= NCCOM_TRANSPORT_CONNECT_BYTES);

inline constexpr uint64_t kIpcMagic = 0x3150325050434e4eull;  // "NNCPP2P1"
inline constexpr uint32_t kIpcVersion = 1;

struct IpcHandle {     // the 64 bytes of dev_ipc, as nccom packs them
  uint64_t magic;      // kIpcMagic
  uint32_t version;    // kIpcVersion
  int32_t device;      // the sender's runtime device
  uint64_t host_hash;  // the sender's host identity
  uint64_t pid_hash;   // the sender's process identity: equal = direct pointer mode
  int32_t channel;     // the channel the blob belongs to
  int32_t direction;   // the sender's side (nccom_transport_direction_t)
  uint8_t reserved[24];
};
static_assert(sizeof(IpcHandle) == 64, "the IPC handle fills devIpc exactly");

// How the two ends reach each other (the original's P2P modes). Indirect (relay)
// never arises: the topology gives Neuron devices of one server a direct path.
enum class Mode { DirectPointer, Ipc };
const char* mode_name(Mode m);  // "direct pointer", "IPC"

// Fills the 128-byte blob for `me` (zeroes beyond the 80 bytes).
void write_blob(const nccom_transport_peer_t& me, int channel, nccom_transport_direction_t dir,
                uint8_t blob[NCCOM_TRANSPORT_CONNECT_BYTES]);

// Reads and checks the peer's blob for a connector of `me` on `channel` in
// `dir` towards `peer`: magic and version, the sender is `peer` (rank, host,
// process, device), same channel, the opposite direction, the trailing bytes
// zero. Every refusal names the field, what it held and what was expected.
Result<ConnectInfo> read_blob(const uint8_t blob[NCCOM_TRANSPORT_CONNECT_BYTES],
                              const nccom_transport_peer_t& peer, int channel,
                              nccom_transport_direction_t dir);

IpcHandle handle_of(const ConnectInfo& info);

}  // namespace nccom::p2p
