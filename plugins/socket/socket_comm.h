// Established connections. A comm is one control socket plus
// nsocks_per_thread x nthreads data sockets, each group of nsocks_per_thread
// progressed by one DataWorker thread.
//
// Protocol (rendezvous, so that receives may match in any tag order without
// buffering payloads): isend writes a header {tag, size, id} on the control
// socket. The receiver matches headers to posted receives — a receive with
// tag T takes the oldest unmatched header with tag T, a header takes the
// oldest posted receive with its tag — and answers each match with a
// clear-to-send. Both sides then queue the payload on the data sockets in
// clear-to-send order: one chunk for messages up to kStripeThreshold, else
// chunks of max(kStripeThreshold, size / nsockets) dealt round-robin, the
// socket counter carried over from message to message identically on both
// ends. The control socket is progressed by the caller's thread inside
// isend/irecv/test and by the first helper thread (so a send completes even
// while the caller only tests the send side); the payload by the helper
// threads.
#pragma once

#include <nccom/net_common.h>

#include <array>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "socket_io.h"
#include "socket_wire.h"
#include "socket_worker.h"

namespace nccom::socket {

inline constexpr uint32_t kSendCommMarker = 0x444e4553;   // "SEND"
inline constexpr uint32_t kRecvCommMarker = 0x56434552;   // "RECV"
inline constexpr uint32_t kRequestMarker = 0x51455253;    // "SREQ"
inline constexpr uint32_t kMemRegionMarker = 0x524d5253;  // "SRMR"

class Comm;

// What the caller holds as sendComm/recvComm: a plain (non-polymorphic) head
// whose marker can be checked before anything else is trusted.
struct CommHead {
  uint32_t marker;
  Comm *owner;
};

// What regMr hands out: host memory only, nothing to pin over TCP.
struct MemRegion {
  uint32_t marker = kMemRegionMarker;
  void *data = nullptr;
  size_t size = 0;
};

struct Request {
  enum class State { kFree, kPosted, kActive, kFlush };
  uint32_t marker = kRequestMarker;
  Comm *comm = nullptr;
  State state = State::kFree;
  char *data = nullptr;
  int size = 0;  // send: message size; receive: buffer capacity
  int tag = 0;
  uint64_t id = 0;  // message id (sender's sequence number)
  int bytes = 0;    // what test reports
  Completion completion;
};

class Comm : private ControlHook {
 public:
  virtual ~Comm();
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;

  // The comm behind a handle the caller passed in, if its marker says it is
  // a live comm of that kind; nullptr otherwise.
  static Comm *from_handle(void *handle, uint32_t marker);
  // What to hand the caller.
  void *handle() { return &head_; }
  static Request *request_from_handle(void *handle);

  ncclResult_t test(Request *req, int *done, int *size);

 protected:
  Comm(uint32_t marker, bool sending, Fd ctrl, std::vector<Fd> data, int nsocks_per_thread,
       std::string peer);
  ncclResult_t start_workers();
  // Joins the helper threads. Derived destructors call it first: worker 0
  // calls back into on_message().
  void stop_workers();

  Request *alloc_request();  // nullptr when NCCL_NET_MAX_REQUESTS are in flight
  void release(Request *req);
  // Queues the payload of a matched message on the data sockets.
  void schedule(Request *req, size_t size);
  void queue_ctrl(const CtrlMsg &msg);
  // Moves control bytes both ways and dispatches complete records. A failure
  // is recorded in ctrl_error_ and fails the requests waiting on control.
  void progress_ctrl();

  virtual ncclResult_t on_message(const CtrlMsg &msg) = 0;
  // Fails requests that can no longer complete; returns how many.
  virtual int on_ctrl_failure(ncclResult_t code) = 0;

  CommHead head_;
  std::mutex mutex_;  // everything below
  const std::string peer_;
  ncclResult_t ctrl_error_ = ncclSuccess;
  std::array<Request, NCCL_NET_MAX_REQUESTS> requests_;

 private:
  short control_events(int *fd) override;
  bool progress_control() override;
  bool flush_ctrl();
  void ctrl_failed(ncclResult_t code, const char *what, int err);

  const bool sending_;
  Fd ctrl_;
  std::vector<Fd> data_;
  const int nsocks_per_thread_;
  std::vector<std::unique_ptr<DataWorker>> workers_;
  uint64_t next_socket_ = 0;
  std::string ctrl_out_;
  size_t ctrl_out_done_ = 0;
  CtrlMsg ctrl_in_{};
  size_t ctrl_in_done_ = 0;
  bool ctrl_moved_ = false;  // progress_ctrl() moved bytes
  size_t next_free_ = 0;
};

class SendComm : public Comm {
 public:
  // data.size() / nsocks_per_thread helper threads.
  static ncclResult_t create(Fd ctrl, std::vector<Fd> data, int nsocks_per_thread, std::string peer,
                             SendComm **out);
  ~SendComm() override { stop_workers(); }
  ncclResult_t isend(void *data, int size, int tag, void **request);

 private:
  using Comm::Comm;
  ncclResult_t on_message(const CtrlMsg &msg) override;
  int on_ctrl_failure(ncclResult_t code) override;

  uint64_t next_id_ = 0;
};

class RecvComm : public Comm {
 public:
  static ncclResult_t create(Fd ctrl, std::vector<Fd> data, int nsocks_per_thread, std::string peer,
                             RecvComm **out);
  ncclResult_t irecv(void *data, int size, int tag, void **request);
  ncclResult_t iflush(void **request);
  ~RecvComm() override { stop_workers(); }

 private:
  using Comm::Comm;
  ncclResult_t on_message(const CtrlMsg &msg) override;
  int on_ctrl_failure(ncclResult_t code) override;
  void match(Request *req, const CtrlMsg &header);

  uint64_t expected_id_ = 0;
  std::deque<Request *> posted_;    // receives waiting for a header, oldest first
  std::deque<CtrlMsg> unexpected_;  // headers waiting for a receive, oldest first
  Request flush_request_;           // iflush: always complete (host memory)
};

}  // namespace nccom::socket
