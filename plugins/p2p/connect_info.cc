#include "connect_info.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace nccom::p2p {

const char* mode_name(Mode m) { return m == Mode::DirectPointer ? "direct pointer" : "IPC"; }

IpcHandle handle_of(const ConnectInfo& info) {
  IpcHandle h{};
  std::memcpy(&h, info.dev_ipc, sizeof h);
  return h;
}

void write_blob(const nccom_transport_peer_t& me, int channel, nccom_transport_direction_t dir,
                uint8_t blob[NCCOM_TRANSPORT_CONNECT_BYTES]) {
  ConnectInfo info{};
  info.rank = me.rank;
  info.read = 0;
  info.direct_ptr = nullptr;
  IpcHandle h{};
  h.magic = kIpcMagic;
  h.version = kIpcVersion;
  h.device = me.device;
  h.host_hash = me.host_hash;
  h.pid_hash = me.pid_hash;
  h.channel = channel;
  h.direction = static_cast<int32_t>(dir);
  std::memcpy(info.dev_ipc, &h, sizeof h);
  std::memset(blob, 0, NCCOM_TRANSPORT_CONNECT_BYTES);
  std::memcpy(blob, &info, sizeof info);
}

namespace {

Error refuse(const nccom_transport_peer_t& peer, int channel, const std::string& what) {
  return make_error(NRT_INVALID, "P2P channel " + std::to_string(channel) + ", blob from rank " +
                                     std::to_string(peer.rank) + ": " + what);
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

Result<ConnectInfo> read_blob(const uint8_t blob[NCCOM_TRANSPORT_CONNECT_BYTES],
                              const nccom_transport_peer_t& peer, int channel,
                              nccom_transport_direction_t dir) {
  if (blob == nullptr) return refuse(peer, channel, "no blob (NULL)");
  ConnectInfo info{};
  std::memcpy(&info, blob, sizeof info);
  const IpcHandle h = handle_of(info);
  if (h.magic != kIpcMagic) {
    return refuse(peer, channel,
                  "not a P2P connect info (magic " + hex(h.magic) + ", expected " + hex(kIpcMagic) +
                      "); do both ranks use the p2p transport?");
  }
  if (h.version != kIpcVersion) {
    return refuse(peer, channel,
                  "connect info version " + std::to_string(h.version) + ", this plugin reads " +
                      std::to_string(kIpcVersion));
  }
  for (size_t i = sizeof info; i < NCCOM_TRANSPORT_CONNECT_BYTES; ++i) {
    if (blob[i] != 0)
      return refuse(peer, channel,
                    "byte " + std::to_string(i) + " beyond the 80-byte connect info is not zero");
  }
  const int32_t want_dir =
      dir == NCCOM_TRANSPORT_SEND ? NCCOM_TRANSPORT_RECV : NCCOM_TRANSPORT_SEND;
  if (info.rank != peer.rank) {
    return refuse(
        peer, channel,
        "rank field " + std::to_string(info.rank) + ", expected " + std::to_string(peer.rank));
  }
  if (h.host_hash != peer.host_hash || h.pid_hash != peer.pid_hash || h.device != peer.device) {
    return refuse(peer, channel,
                  "identity (host " + hex(h.host_hash) + ", process " + hex(h.pid_hash) +
                      ", device " + std::to_string(h.device) +
                      ") differs from the peer's record (host " + hex(peer.host_hash) +
                      ", process " + hex(peer.pid_hash) + ", device " +
                      std::to_string(peer.device) + ")");
  }
  if (h.channel != channel) {
    return refuse(peer, channel, "written for channel " + std::to_string(h.channel));
  }
  if (h.direction != want_dir) {
    return refuse(peer, channel,
                  "direction " + std::to_string(h.direction) + ", expected " +
                      std::to_string(want_dir) + " (the opposite side)");
  }
  if (info.read != 0 && info.read != 1) {
    return refuse(peer, channel, "read flag " + std::to_string(info.read) + " is neither 0 nor 1");
  }
  return info;
}

}  // namespace nccom::p2p
