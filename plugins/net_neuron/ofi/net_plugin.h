// The plugin: its devices and every object it handed out. The ABI tables
// (plugin.cc) call one Plugin method per slot.
//
// Every pointer the host passes back (comm, request, mhandle) is looked up
// in the tables below before use: an unknown, closed or wrong-kind pointer is
// ncclInvalidArgument, never a dereference.
//
// Locking: mutex_ is taken exclusively by whatever adds or removes objects
// (init, fini, listen, connect, accept, close*, regMr, deregMr) and shared by
// the data path, which then locks the one endpoint it uses. So a data-path
// call never sees an object vanish, and calls on different comms run
// concurrently.
#pragma once

#include "comm.h"
#include "idle_progress.h"
#include "provider.h"

#include <nccom/net_v6.h>

#include <atomic>
#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace nccom::ofi {

class Plugin {
 public:
  static Plugin& instance();
  ~Plugin();

  // Rails per device for the next init (net_config.cc).
  static Status configure(int rails);
  // Peer liveness for comms created afterwards (net_config.cc).
  static Status configure_liveness(int enabled, int check_ms, int grace_ms);

  Status init(ncclDebugLogger_t logger);
  Status fini();
  Status devices(int* ndev);
  Status get_properties(int dev, ncclNetProperties_v6_t* props);
  Status listen(int dev, void* handle, size_t handle_size, void** listen_comm);
  Status connect(int dev, void* handle, size_t handle_size, void** send_comm);
  Status accept(void* listen_comm, void** recv_comm);
  Status close(void* comm, CommKind kind);

  Status reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
  Status reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                        void** mhandle);
  Status dereg_mr(void* comm, void* mhandle);
  Status get_mr_key(void* mhandle, uint64_t* mr_key);

  Status isend(void* send_comm, void* data, int size, int tag, void* mhandle, void** request);
  Status irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
               void** request);
  Status iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request);
  Status test(void* request, int* done, int* sizes);
  Status iwrite(void* send_comm, void* src, size_t size, void* src_mhandle, uint64_t dest,
                uint64_t mr_key, void** request);
  Status iwrite_inline(void* send_comm, void* src, size_t size, uint64_t dest, uint64_t mr_key,
                       void** request);
  Status iread(void* recv_comm, void* dest, size_t size, void* dest_mhandle, uint64_t src,
               uint64_t mr_key, void** request);

 private:
  Plugin() = default;
  Status check_device(int dev) const;  // needs mutex_ held
  Comm* find_comm(const void* comm, CommKind kind) const;
  Comm* find_data_comm(const void* comm) const;  // a send or a recv comm
  void adopt(std::unique_ptr<Comm> comm);
  // Puts `comm` into progress_ring_ while it can be an RMA target (a region
  // with a remote key, manual-progress provider), takes it out otherwise;
  // starts the idle-progress thread with the first one. mutex_ exclusive.
  void update_progress_ring(Comm* comm);
  void forget(Comm* comm);
  void release_everything();
  uint32_t next_comm_id();
  // Data path helpers (data_path.cc); the comm's endpoint mutex is held.
  Status local_descriptor(Comm& comm, void* mhandle, const void* buf, size_t len, void** desc);
  Status rma(Op op, Comm& comm, void* local, size_t size, void* mhandle, uint64_t remote,
             uint64_t mr_key, void** request);
  // Progress across comms (docs/internals/net-ofi.md), try-lock only:
  // every other comm (while a local RMA is pending), or the next
  // kRoundRobinPerTest of the RMA-target comms in turn (every test).
  void progress_others(const Comm* except);
  void progress_next_others(const Comm* except);
  // The idle-progress thread's pass: every RMA-target comm, try-lock only
  // (nothing when the plugin's lock is taken exclusively right now).
  void progress_idle();
  // ncclRemoteError (logged) once the comm's peer is known to be gone.
  Status check_peer(Comm& comm, const char* call);

  mutable std::shared_mutex mutex_;
  bool initialized_ = false;
  Discovery discovery_;
  std::unordered_map<const void*, std::unique_ptr<Comm>> comms_;
  std::unordered_map<const void*, Comm*> requests_;  // every pool slot of every comm
  std::unordered_map<const void*, Comm*> regions_;
  std::unordered_map<uint64_t, std::unique_ptr<Comm>> connecting_;  // by cookie
  // The comms a peer's RMA may target (see update_progress_ring), in the
  // order test() progresses them round-robin; changed with mutex_
  // exclusive, read shared.
  std::vector<Comm*> progress_ring_;
  std::atomic<size_t> progress_cursor_{0};
  IdleProgress idle_;  // started with the first RMA-target comm, stopped by fini
  uint32_t comm_id_ = 0;
  uint64_t cookie_ = 0;
};

}  // namespace nccom::ofi
