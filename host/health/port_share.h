// Jobs that share a host and a nccom-ras port. Every process of a job binds
// the client port with SO_REUSEPORT, so that whichever of them is alive
// answers; but the kernel spreads connections over every socket of the group
// and cannot tell one job's from another's. Two jobs on one host with the
// same port would answer nccom-ras at random, each for itself. So once a
// process knows its job (its first communicator's cards, which carry every
// rank's client-socket inode), it reads which listeners hold the port; when
// another job's do, the job whose oldest process started first keeps the
// port and the other moves to the next port no other job holds.
//
// Only what /proc shows of this network namespace and pid namespace is read:
// listeners of other namespaces never share a port with ours.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::health::engine {

// How many ports from the configured one a job may move through.
inline constexpr int kClientPortSpan = 16;

// The socket inodes of the TCP listeners on `port` in the text of
// /proc/net/tcp or /proc/net/tcp6 (rows that do not parse are skipped).
std::vector<uint32_t> listener_inodes(std::string_view proc_net_tcp, uint16_t port);

// The same, read from this network namespace's /proc/net/tcp and tcp6.
std::vector<uint32_t> listeners_on(uint16_t port);

// The inode of socket `fd` (0 if it cannot be read).
uint32_t socket_inode(int fd);

// Which of `pids` holds each of `inodes` open (from /proc/<pid>/fd); with
// `pids` empty, every process /proc lists is looked at. Inodes nobody
// readable holds are absent from the result.
std::map<uint32_t, int> inode_holders(const std::vector<uint32_t>& inodes,
                                      const std::vector<int>& pids);

// When process `pid` started, in clock ticks since boot (/proc/<pid>/stat);
// 0 when unknown.
uint64_t start_ticks(int pid);

// Who came first: the earliest start among `pids` with the smallest pid as
// the tie-break, so that two jobs reading the same /proc agree.
struct Seniority {
  uint64_t ticks = 0;  // 0: unknown (taken as the oldest)
  int pid = 0;
  bool operator<(const Seniority& other) const;
};
Seniority seniority(const std::vector<int>& pids);

}  // namespace nccom::health::engine
