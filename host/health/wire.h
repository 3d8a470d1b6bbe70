// The health mesh's bytes: the card every rank adds to its peer record when a
// communicator is created (where its process's health service listens), and
// the frames processes exchange over the health links.
//
// Frame: u32 magic "NCHF", u8 type, 3 zero bytes, u32 payload length (at most
// kMaxPayload), payload. Integers little-endian. Every decoder checks length,
// magic, type and bounds before it trusts a byte.
#pragma once

#include "bootstrap/socket_address.h"
#include "health/watch.h"

#include <nccom/util/result.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nccom::health {

// ---- The card (112 bytes, appended to the 112-byte peer record) --------------
// [0,4) magic "NCHC"  [4,6) version 1  [6,8) flags (bit 0: a service runs)
// [8,12) pid  [12,16) the inode of its nccom-ras socket (0: none)
// [16,24) process key (random per process)
// [24,52) the service's peer endpoint (28-byte address)  [52,112) host name,
// NUL-padded (longer names are cut). kCardBytes is in watch.h.

struct Card {
  bool service = false;  // false: health is off in that process
  uint32_t pid = 0;
  // Its nccom-ras socket's inode, so that processes of one host can tell
  // their job's listeners from another job's (port_share.h).
  uint32_t client_inode = 0;
  uint64_t process = 0;
  bootstrap::SocketAddress endpoint;
  std::string host;

  std::array<uint8_t, kCardBytes> encode() const;
  // Rejects a wrong magic or version, a zero process key, a service flag
  // without a valid endpoint.
  static Result<Card> decode(const uint8_t* bytes, std::size_t length);
};

// ---- Frames -----------------------------------------------------------------
inline constexpr std::size_t kFrameHeaderBytes = 12;
inline constexpr uint32_t kMaxPayload = 1u << 20;

enum class FrameType : uint8_t {
  // Opens every peer connection: u64 secret (of a communicator both share),
  // u64 the sender's process key, u8 purpose (0 link, 1 query). The answer to
  // a good hello is a Hello back (secret 0, the receiver's key).
  kHello = 1,
  kKeepAlive = 2,  // empty: "I am here" (each way, every keep-alive period)
  kGoodbye = 3,    // empty: the sender stops its service (a clean exit)
  kQuery = 4,      // empty: "send me your snapshot"
  kSnapshot = 5,   // the snapshot text (snapshot.h)
  kUnlink = 6,     // empty: the sender closes this link but lives on
  // u64: the key of a process that said goodbye to the sender, passed on
  // over every link so that processes that were not its neighbours take
  // its closed port for a clean exit, not a death. Each process passes a
  // key on once (when it learns it), so the flood ends.
  kLeft = 7,
};
inline constexpr std::size_t kLeftBytes = 8;
std::vector<uint8_t> left_frame(uint64_t process);
// The key a kLeft payload names; an error for a wrong size or key 0.
Result<uint64_t> decode_left(const uint8_t* bytes, std::size_t length);

struct FrameHeader {
  FrameType type = FrameType::kKeepAlive;
  uint32_t length = 0;
};

std::array<uint8_t, kFrameHeaderBytes> encode_header(FrameType type, uint32_t length);
// Checks magic, type, the zero bytes and the length bound.
Result<FrameHeader> decode_header(const uint8_t* bytes, std::size_t length);

inline constexpr std::size_t kHelloBytes = 17;
enum class Purpose : uint8_t { kLink = 0, kQuery = 1 };
struct Hello {
  uint64_t secret = 0;
  uint64_t process = 0;
  Purpose purpose = Purpose::kLink;
  std::vector<uint8_t> frame() const;  // header + payload
  static Result<Hello> decode(const uint8_t* bytes, std::size_t length);
};

std::vector<uint8_t> frame(FrameType type, const std::string& payload = {});

}  // namespace nccom::health
