// The bootstrap's wire formats: every byte that arrives from the network is
// decoded here, by functions that take (bytes, length), check everything, and
// return an Error (NRT_INVALID, naming what was wrong) instead of trusting
// the input. They are the fuzz targets' entry points. All integers are
// little-endian on the wire; encoders and decoders are exact inverses.
#pragma once

#include "bootstrap/socket_address.h"

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nccom::bootstrap {

// ---- Message types ----------------------------------------------------------
// Ring = 1, recursive doubling = 7, Bruck = 8 are the original's (its
// bootstrapAllGather); the others are ours, see docs/decisions.md.
enum class MsgType : uint32_t {
  kRing = 1,
  kInfoToRoot = 2,     // rank -> root (or local leader): ExtInfo
  kInfoFromRoot = 3,   // root -> rank: RootReply
  kUser = 4,           // neuronBootstrapSend/Recv (untyped exports)
  kTransportInit = 5,  // transport connect blobs ("p2pconnect")
  kBarrier = 6,
  kRecursiveDoubling = 7,
  kBruck = 8,
  kLeaderToRoot = 9,   // hierarchical: a local leader's aggregated check-in
  kRootToLeader = 10,  // hierarchical: the root's reply to a leader
  kRefused = 11,       // root -> a connection it refuses: why, as text (<= 4096 bytes)
  kGoodbye = 12,       // peer mesh, empty: the sender completed setup and frees its communicator
  kGaveUp = 13,        // peer mesh: the sender's setup failed; payload: why, as text
  kMaxType = 13
};
bool valid_msg_type(uint32_t type);
inline constexpr std::size_t kMaxRefusalBytes = 4096;  // a REFUSED message's text
const char* msg_type_name(uint32_t type);

// ---- The unique id (128 bytes, opaque to the runtime) ------------------------
// [0, 28)   root listen address (socketAddress wire form, at offset 0)
// [28, 32)  magic "NCID"
// [32, 40)  secret: random 64-bit value every bootstrap connection must present
// [40]      protocol: 0 = flat, 1 = hierarchical (chosen by the root)
// [41, 128) zero
inline constexpr uint32_t kUniqueIdMagic = 0x4449434eu;  // "NCID"
enum class Protocol : uint8_t { kFlat = 0, kHierarchical = 1 };

struct UniqueId {
  SocketAddress root;
  uint64_t secret = 0;
  Protocol protocol = Protocol::kFlat;

  ncclUniqueId encode() const;
  // Rejects a wrong magic, an invalid address, a zero secret, an unknown
  // protocol and non-zero padding.
  static Result<UniqueId> decode(const uint8_t* bytes, std::size_t length);
};

// ---- Connection hello: the first 24 bytes on every bootstrap connection ------
inline constexpr uint32_t kHelloMagic = 0x4243434eu;  // "NCCB"
inline constexpr uint16_t kWireVersion = 1;
inline constexpr std::size_t kHelloBytes = 24;

struct Hello {
  uint64_t secret = 0;
  int32_t rank = -1;  // sender's rank in the communicator (-1: the root)
  int32_t nranks = 0;

  std::array<uint8_t, kHelloBytes> encode() const;
  // Checks magic and version only; the caller compares secret/rank/nranks
  // with what it expects (and names the peer in its error).
  static Result<Hello> decode(const uint8_t* bytes, std::size_t length);
};

// ---- Message header: before every payload on a connection --------------------
inline constexpr std::size_t kHeaderBytes = 16;
inline constexpr uint64_t kMaxMessageBytes = uint64_t{1} << 32;  // 4 GiB

struct MessageHeader {
  uint32_t type = 0;
  uint64_t size = 0;

  std::array<uint8_t, kHeaderBytes> encode() const;
  // Rejects unknown types and sizes above kMaxMessageBytes.
  static Result<MessageHeader> decode(const uint8_t* bytes, std::size_t length);
};

// ---- extInfo: rank -> root check-in (INFO_TO_ROOT), 56 bytes -----------------
inline constexpr uint32_t kExtInfoSanity = 0x61796c69u;  // "ilya"
inline constexpr std::size_t kExtInfoBytes = 56;
inline constexpr std::size_t kBuildTagBytes = 16;

struct ExtInfo {
  int32_t rank = -1;
  int32_t nranks = 0;
  SocketAddress listen_address;
  std::array<uint8_t, kBuildTagBytes> build_tag{};  // zero unless global init

  std::array<uint8_t, kExtInfoBytes> encode() const;
  // Rejects a wrong sanity word, nranks < 1, rank outside [0, nranks), an
  // invalid address.
  static Result<ExtInfo> decode(const uint8_t* bytes, std::size_t length);
};

// ---- Root reply (INFO_FROM_ROOT) ------------------------------------------------
// status 0: cluster_id, epoch and the ring successor's address follow.
// status != 0: the root refused the communicator; `error` says why (every
// rank then fails with the same message). Variable length: 64 + error bytes.
struct RootReply {
  uint32_t status = 0;
  uint64_t cluster_id = 0;
  int64_t epoch = 0;
  SocketAddress successor;
  std::string error;  // at most 4096 bytes

  std::vector<uint8_t> encode() const;
  static Result<RootReply> decode(const uint8_t* bytes, std::size_t length);
};

// ---- The 112-byte peer record (the original's ncclPeerInfo) ------------------
inline constexpr std::size_t kPeerRecordBytes = 112;

struct PeerRecord {
  int32_t rank = -1;
  int32_t device = -1;     // cudaDev: the runtime device (nec_dev_id)
  uint64_t host_hash = 0;  // host identity + id hash + virtual_server_id
  uint64_t pid_hash = 0;
  uint64_t shm_dev = 0;  // st_dev of /dev/shm
  int64_t bus_id = 0;
  int32_t pod_node_id = 0;
  int32_t virtual_server_id = 0;
  uint64_t comm = 0;           // owning comm pointer, as an integer (@88)
  int32_t comp_cap = 0;        // @96
  int32_t host_device_id = 0;  // @100
  int32_t mla_idx = 0;         // @104

  std::array<uint8_t, kPeerRecordBytes> encode() const;
  // Rejects a rank outside [0, nranks) (pass the communicator size).
  static Result<PeerRecord> decode(const uint8_t* bytes, std::size_t length, int nranks);
};

// ---- Hierarchical: a leader's check-in and the root's answer --------------------
// LeaderCheckIn: u32 count, then count ExtInfo records (the leader's host).
// LeaderReply: a RootReply-style status/error, cluster_id, epoch, then the
// full address table: u32 nranks, nranks x 28-byte addresses.
struct LeaderCheckIn {
  std::vector<ExtInfo> members;
  std::vector<uint8_t> encode() const;
  // Rejects count 0, count above `max_members`, a length that does not match.
  static Result<LeaderCheckIn> decode(const uint8_t* bytes, std::size_t length, int max_members);
};

struct LeaderReply {
  uint32_t status = 0;
  std::string error;
  uint64_t cluster_id = 0;
  int64_t epoch = 0;
  std::vector<SocketAddress> addresses;  // indexed by rank
  std::vector<uint8_t> encode() const;
  static Result<LeaderReply> decode(const uint8_t* bytes, std::size_t length, int nranks);
};

}  // namespace nccom::bootstrap
