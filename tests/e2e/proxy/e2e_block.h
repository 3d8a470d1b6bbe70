// One rank's side of the end-to-end proxy test: what libnrt would build for
// a ring channel (enc_channel objects, connectors with host index words,
// registered buffers, semaphores, one basic block's three FIFOs per stream)
// and the scripted device that publishes the FIFO entries slice by slice
// while the reference runtime's proxy worker ticks libnccom.
#pragma once

#include <nrt_emu.h>

#include <cstdint>
#include <string>
#include <vector>

namespace proxy_e2e {

struct Plan {
  std::vector<uint32_t> sizes;  // bytes per slice (dynamic: a multiple of kElem)
  bool dynamic = false;
  int streams = 1;                      // stream s runs channels [s*channels, (s+1)*channels)
  int channels = 1;                     // ops (one per channel) in each stream's block
  uint32_t credits = 4;                 // initial_send_credits
  uint32_t ending = 2;                  // ending_recv_credits
  uint32_t recv_window = 2;             // receive slices published ahead of arrivals
  uint32_t publish_limit = 0xFFFFFFFF;  // transfers published per direction and op at most
  bool shared_sems = false;  // ring identity: handshake and complete are one word per direction
  bool early_send = false;   // early_send_completion
  bool early_recv = false;   // early_recv_posting
  int folds = 1;  // fold_n of every connector: each entry is published on every fold word
  // Mesh: op k sends to rank+k+1 and receives from rank-k-1 (prev/next are
  // indexed by op) over the mesh connections of neuronExpandConnectivity, on
  // a MESH enc_channel of id kMeshChannelIdBase+k with variable_peer set, so
  // the proxy must route by dst_rank/src_rank.
  bool mesh = false;
};

// Above every ring channel id a 4-rank graph builds (12): a descriptor routed
// by the channel's id instead of the mesh would find no connection.
constexpr int kMeshChannelIdBase = 20;

constexpr uint32_t kElem = 4;  // data_type_sz
constexpr uint8_t kUntouched = 0xEE;

// The byte k of slice s that `sender` sends on `channel` in execution `exec`.
inline uint8_t pattern(int sender, int channel, int slice, int exec, size_t k) {
  return static_cast<uint8_t>(sender * 37 + channel * 11 + slice * 5 + exec * 3 + k * 7 + (k >> 8));
}

struct OpState {
  int channel = 0;  // enc_channel id (and the data pattern's channel)
  enc_pattern_t pattern = ENC_PATTERN_RING;
  int send_key = 0, recv_key = 0;  // the channel argument of neuronGetNetConnector / NetRegMr
  int prev = -1, next = -1;        // ring neighbours on this channel
  enc_net_connector_t* send_conn = nullptr;
  enc_net_connector_t* recv_conn = nullptr;
  enc_channel_prefix_t* chan = nullptr;
  enc_host_mem_shared_t* send_table = nullptr;
  enc_host_mem_shared_t* recv_table = nullptr;
  volatile uint32_t* sem[4] = {};  // send_hs, send_cmp, recv_hs, recv_cmp
  std::vector<uint8_t> send_buf, recv_buf;
  void* send_mh = nullptr;
  void* recv_mh = nullptr;
  std::vector<size_t> off;          // slice s at off[s] (+ dynamic offset) in both buffers
  std::vector<uint32_t> dyn_off;    // elements
  uint32_t pub_tx = 0, pub_rx = 0;  // transfers published this execution
};

struct StreamState {
  uint32_t stream = 0;
  std::vector<OpState> ops;
  std::vector<net_ops_info_t> info;
  std::vector<net_src_addr_t> src;
  std::vector<net_dest_addr_t> dst;
  size_t next_src = 0, next_dst = 0;
  volatile uint32_t* trigger = nullptr;
  nrt_emu_proxy_block_t block{};
};

class RankDevice {
 public:
  // prev[c] / next[c]: the ring neighbours of channel c.
  RankDevice(const nccom_export_table_t* t, void* comm, int rank, int nranks, std::vector<int> prev,
             std::vector<int> next, Plan plan)
      : t_(t),
        comm_(comm),
        rank_(rank),
        nranks_(nranks),
        prev_(std::move(prev)),
        next_(std::move(next)),
        plan_(std::move(plan)) {}
  ~RankDevice();

  // Builds everything; "" or what failed.
  std::string build();
  // Resets semaphores, buffers and the device cursors for execution `exec`.
  void prepare(int exec);
  // Publishes every entry the device may release now. Returns "" or a
  // failed check (dynamic receive sizes).
  std::string publish();
  // Every semaphore count and every byte received, after the task is done.
  std::string check(int exec) const;
  // Transfers published by this device in both directions, all streams.
  uint64_t published() const;
  uint64_t transfers() const;  // all transfers of one execution
  std::vector<StreamState>& streams() { return streams_; }
  nrt_emu_devmem_t* mem() { return mem_; }

 private:
  std::string build_stream(StreamState& s, int first_channel);
  std::string publish_send(StreamState& s);
  std::string publish_recv(StreamState& s);
  uint32_t sends_done(const OpState& o) const;
  uint32_t arrived(const OpState& o) const;

  const nccom_export_table_t* t_;
  void* comm_;
  int rank_, nranks_;
  std::vector<int> prev_, next_;
  Plan plan_;
  int exec_ = 0;
  nrt_emu_devmem_t* mem_ = nullptr;
  std::vector<StreamState> streams_;
};

}  // namespace proxy_e2e
