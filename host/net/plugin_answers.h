// What the host accepts from a net plugin's answers: the device count of
// devices(), the strings and counts of getProperties(). A plugin is foreign
// code; a count it reports decides loops and allocations in the host, and a
// string it hands over may not be terminated. Everything the host takes from
// those two calls goes through here.
#pragma once

#include "net/net.h"

#include <nccom/net_common.h>
#include <nccom/util/result.h>

#include <cstddef>
#include <string>

namespace nccom::net {

// The most network devices one process accepts from a plugin. The host
// makes per-device state for each (NIC table entries, properties) and the
// transports spread channels over them. Real nodes have a few dozen NICs at
// most, and NCCL's topology keeps at most 256 nodes of each kind, NICs
// included; a larger count is a broken plugin, not a machine (2^30 "devices"
// would cost gigabytes before any of them is used).
inline constexpr int kMaxNetDevices = 256;

// Bounds of the strings of ncclNetProperties_v6_t, which the ABI passes as
// bare char*: a device name (an interface or provider name, short in
// practice) and a sysfs path (at most PATH_MAX on Linux). The host reads at
// most this many bytes and copies what it read; a longer or unterminated
// string is cut there.
inline constexpr std::size_t kMaxNetNameBytes = 256;
inline constexpr std::size_t kMaxNetPathBytes = 4096;

// The range of maxRecvs a transport is handed: at least one receive per
// irecv, at most as many as a comm may have requests in flight.
inline constexpr int kMaxNetRecvs = NCCL_NET_MAX_REQUESTS;

// The text at `text` up to its NUL or `max_bytes`, whichever comes first;
// "" for NULL. The pointer is not trusted: each page is checked through the
// kernel first (readable_text below), so a wild pointer (a plugin that filled its
// properties with 0xff) gives "" instead of a SIGSEGV.
std::string bounded_text(const char* text, std::size_t max_bytes);

// What the process can read at `text`, up to its NUL or `max_bytes`:
// `terminated` says whether a NUL came first, `readable` whether any byte at
// `text` could be read at all (false for an unmapped or protected address).
// Each page is first offered to the kernel (one byte written to a pipe), so
// memory the process cannot read ends the copy with EFAULT instead of a
// fault; nothing past the NUL is read.
struct ReadText {
  std::string text;
  bool readable = false;
  bool terminated = false;
};
ReadText readable_text(const char* text, std::size_t max_bytes);

// net.devices(), checked: the count when the call succeeds with 1 ..
// kMaxNetDevices devices. Otherwise NRT_FAILURE with a message naming the
// plugin, its origin, the call and what it answered, e.g. "AWS Libfabric
// (Neuron ncclNet_v6) from /x.so: devices() reported 1073741824 devices,
// more than the 256 nccom accepts (kMaxNetDevices); the plugin is broken:
// fix it or choose another with net.plugin".
Result<int> device_count(Net& net);

// Clamps props.maxRecvs into 1 .. kMaxNetRecvs. Returns "" when it was in
// range, else what was changed ("maxRecvs 0 is outside 1..128; 1 is used"),
// for the caller's one warning.
std::string clamp_properties(ncclNetProperties_v6_t& props);

// The checks of selection, for each device of a plugin that passed
// device_count: getProperties that succeed with an out-of-range maxRecvs or
// a name or pciPath not terminated within its bound are reported (one WARN
// per device and problem, naming the plugin, the device, the field and the
// value); the plugin stays usable, with the value clamped or the string cut
// as above. A failing getProperties is left to the caller that needs it.
void warn_about_properties(Net& net, int devices);

}  // namespace nccom::net
