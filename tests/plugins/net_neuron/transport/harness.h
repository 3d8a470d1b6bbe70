// Shared support for the NetNeuron* suites: the net plugins and the
// transport plugin loaded with dlopen, ranks in one process, their
// connections, and the runtime callbacks (semaphore adds, dynamic sizes)
// the transport receives through nccom_transport_comm_t.
#pragma once

#include <nccom/net_v6.h>
#include <nccom/nrt_abi.h>
#include <nccom/transport_plugin.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nn_test {

// ---- plugins ---------------------------------------------------------------
// The libfabric provider the "ofi" net runs over.
constexpr const char* kOfiProvider = "tcp;ofi_rxm";
// "socket" or "ofi" (FI_PROVIDER=kOfiProvider); initialised once per process.
// NULL (and *why set) when unavailable.
const ncclNet_v6_t* net_plugin(const std::string& name, std::string* why);
// For a fixture's SetUp: *net is the plugin `name`; when it cannot be loaded,
// initialised or has no device, the test skips if machine_lacks_for_net says
// this machine lacks what the net needs, and fails naming the cause if not.
void require_net(const std::string& name, const ncclNet_v6_t** net);
// The nets this executable covers, and what the machine lacks for one of
// them, "" when nothing (nets_socket.cc / nets_ofi.cc).
std::vector<std::string> net_names();
std::string machine_lacks_for_net(const std::string& name);
const nccom_transport_ops_t* transport();
void* transport_ctx();
std::string captured_logs();
void clear_logs();

// ---- runtime callbacks --------------------------------------------------------
constexpr int kMaxRanks = 8;
// The table behind enc_host_mem_t.va of a dynamic-size input: the scripted
// device writes the sizes/offsets of the slice it is about to publish; the
// transport reports received sizes through set_recv_size.
struct DynTable {
  size_t send_size[kMaxRanks] = {};
  size_t send_offset[kMaxRanks] = {};
  size_t recv_offset[kMaxRanks] = {};
  std::mutex mu;
  std::vector<std::pair<int, size_t>> recv_sizes;  // (src_rank, bytes) per call
  size_t data_type_sz_seen = 0;
};
void inc_semaphore(volatile uint32_t* sem, uint32_t val);
uint32_t load(const volatile uint32_t* word);

// ---- ranks and connections ----------------------------------------------------
struct Rank {
  nccom_transport_comm_t comm{};
  nccom_transport_net_t net{};  // comm.net: the plugin's own table as context
  std::vector<nccom_transport_peer_t> peers;
};
// A raw v6 table in the shape the host lends (context = the table), as the
// host's net_with_ctx() lends its Net; NULL slots stay NULL.
nccom_transport_net_t with_ctx(const ncclNet_v6_t* net);
std::vector<std::unique_ptr<Rank>> make_ranks(int n, const ncclNet_v6_t* net, int sidelink = 0);

// One direction of one channel between two ranks.
struct Link {
  Rank* from = nullptr;
  Rank* to = nullptr;
  int channel = 0;
  void* send_conn = nullptr;  // on `from`
  void* recv_conn = nullptr;  // on `to`
};
// setup both halves and call connect on both until done; fails the test
// after a bounded number of rounds.
Link connect_link(Rank& from, Rank& to, int channel);
void free_link(Link& link);

// A registered buffer on one connector.
struct Arena {
  std::vector<uint8_t> bytes;
  void* mhandle = nullptr;
  void* conn = nullptr;
};
void register_arena(Arena& a, void* conn, size_t size);
void deregister_arena(Arena& a);

// The runtime-owned channel objects of one rank and channel (nec.h layouts).
struct DeviceChannel {
  enc_channel_prefix_t ch{};
  enc_net_connector_t net_send{};
  enc_net_connector_t net_recv{};
  alignas(128) enc_net_host_memory_t send_words{};
  alignas(128) enc_net_host_memory_t recv_words{};
  enc_host_mem_shared_t dyn_send{};
  enc_host_mem_shared_t dyn_recv{};
  DynTable table_send;
  DynTable table_recv;
  DeviceChannel(int id, enc_pattern_t pattern, void* send_conn, void* recv_conn, int fold_n = 1);
  DeviceChannel(const DeviceChannel&) = delete;
  DeviceChannel& operator=(const DeviceChannel&) = delete;
};

// Byte k of slice `slice` sent by `rank` in execution `exec`.
uint8_t pattern(int rank, int exec, int slice, size_t k);

}  // namespace nn_test
