// Established connections. A comm is one control socket plus
// nsocks_per_thread x nthreads data sockets, each group of nsocks_per_thread
// progressed by one DataWorker thread.
//
// Protocol (socket_wire.h has the records). Two paths, chosen per message by
// the sender; the receiver matches both the same way — a receive with tag T
// takes the oldest unmatched message with tag T, a message takes the oldest
// posted receive with its tag — in the order the sender numbered them (ids
// on the one control stream), so receives may be posted in any tag order.
//
// Eager (size <= the eager_max agreed at connect, and a credit left): isend
// writes the record and the payload on the control socket from the caller's
// thread and the send completes once the kernel took the last byte. The
// receiver reads the payload straight into a matching posted receive, or
// holds it (bounded: one credit per held message) until a receive takes it;
// each consumed message gives its credit back (kMsgCredit, in batches). With
// no credit left the sender uses rendezvous, which needs none, so running out
// never blocks or deadlocks. The connecting side offers eager in its hello;
// the accepting side grants it in its first control record; until the grant
// arrives (or if it never does: a peer without the eager path) every message
// goes rendezvous.
//
// Rendezvous (everything else): isend writes a header {tag, size, id}; the
// receiver answers each match with a clear-to-send. Both sides then queue the
// payload on the data sockets in clear-to-send order: one chunk for messages
// up to kStripeThreshold, else chunks of max(kStripeThreshold, size /
// nsockets) dealt round-robin, the socket counter carried over from message
// to message identically on both ends.
//
// The control socket is progressed by the caller's thread inside test (of a
// request not complete yet; one complete costs no system call) and inside
// isend when only the control stream can say whether a credit is left; irecv
// only posts (a message still in the socket is read by a test, straight into
// the receive's buffer). Reads take all the socket holds at once into a
// read-ahead buffer, a record and its eager payload in one system call. Also
// progressed by the first helper thread (so a send completes and
// credits come back even while the caller only tests the one side) — by the
// helper only when the caller has not called in for kCallerGrace, bytes wait
// to go out, or a rendezvous send waits for its clear-to-send; the
// data-socket payload by the helper threads, helper 0's share by the caller's
// test while it keeps testing (DataWorker::assist).
#pragma once

#include "socket_io.h"
#include "socket_wire.h"
#include "socket_worker.h"

#include <nccom/net_common.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nccom::socket {

inline constexpr uint32_t kSendCommMarker = 0x444e4553;   // "SEND"
inline constexpr uint32_t kRecvCommMarker = 0x56434552;   // "RECV"
inline constexpr uint32_t kRequestMarker = 0x51455253;    // "SREQ"
inline constexpr uint32_t kMemRegionMarker = 0x524d5253;  // "SRMR"

// How long after the caller's last isend/irecv/test on a comm helper thread 0
// leaves that comm's control socket to the caller. Also the longest a record
// waits once the caller stops calling in (then helper 0 reads it).
inline constexpr std::chrono::nanoseconds kCallerGrace = std::chrono::milliseconds(5);

// The control stream's read-ahead. A payload longer than what is buffered is
// read straight into its destination, so this only bounds how many small
// records and payloads one read takes.
inline constexpr size_t kCtrlReadAhead = 16 * 1024;

class Comm;

// What the caller holds as sendComm/recvComm: a plain (non-polymorphic) head
// whose marker can be checked before anything else is trusted.
struct CommHead {
  uint32_t marker;
  Comm* owner;
};

// What regMr hands out: host memory only, nothing to pin over TCP.
struct MemRegion {
  uint32_t marker = kMemRegionMarker;
  void* data = nullptr;
  size_t size = 0;
};

struct Request {
  // kPosted: waiting for a match (receive) or a clear-to-send (send).
  // kActive: payload moving; done when completion.chunks_left reaches 0.
  // kEager: an eager send written to the control stream; done once the
  // kernel took its last byte (Comm::ctrl_sent() >= ctrl_end).
  enum class State { kFree, kPosted, kActive, kEager, kFlush };
  uint32_t marker = kRequestMarker;
  Comm* comm = nullptr;
  State state = State::kFree;
  char* data = nullptr;
  int size = 0;  // send: message size; receive: buffer capacity
  int tag = 0;
  uint64_t id = 0;        // message id (sender's sequence number)
  int bytes = 0;          // what test reports
  uint64_t ctrl_end = 0;  // kEager: control-stream offset just past its payload
  Completion completion;
};

class Comm : private ControlHook {
 public:
  virtual ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // The comm behind a handle the caller passed in, if its marker says it is
  // a live comm of that kind; nullptr otherwise.
  static Comm* from_handle(void* handle, uint32_t marker);
  // What to hand the caller.
  void* handle() { return &head_; }
  static Request* request_from_handle(void* handle);

  ncclResult_t test(Request* req, int* done, int* size);

 protected:
  Comm(uint32_t marker, bool sending, Fd ctrl, std::vector<Fd> data, int nsocks_per_thread,
       std::string peer);
  ncclResult_t start_workers();
  // Joins the helper threads. Derived destructors call it first: worker 0
  // calls back into on_message().
  void stop_workers();

  Request* alloc_request();  // nullptr when NCCL_NET_MAX_REQUESTS are in flight
  void release(Request* req);
  // Queues the payload of a matched message on the data sockets.
  void schedule(Request* req, size_t size);
  void queue_ctrl(const CtrlMsg& msg);
  void queue_ctrl_bytes(const void* data, size_t len);
  // Bytes of the control stream queued / handed to the kernel so far.
  uint64_t ctrl_queued() const { return ctrl_queued_total_; }
  uint64_t ctrl_sent() const { return ctrl_sent_total_; }
  // Called by on_message: the next `len` bytes of the control stream are a
  // payload for `dst`; on_payload() runs once they are all in.
  void begin_payload(char* dst, size_t len);
  // Moves control bytes both ways and dispatches complete records. A failure
  // is recorded in ctrl_error_ and fails the requests waiting on control.
  void progress_ctrl();
  // progress_ctrl() from the caller's isend/irecv/test: while the caller
  // keeps calling in, helper thread 0 leaves the control socket to it
  // instead of waking up for every record (kCallerGrace).
  void caller_progress_ctrl();
  // Only the caller_progress_ctrl() timestamp, for a call that need not read.
  void caller_active();
  // Sends what the control stream holds; what the socket does not take now,
  // worker 0 sends when it becomes writable.
  void push_ctrl();

  // True while a record from the peer is awaited that the caller may not be
  // quick to read (a send's clear-to-send): helper 0 then keeps reading the
  // control socket even while the caller calls in. Under mutex_.
  virtual bool helper_reads_control() const { return false; }

  virtual ncclResult_t on_message(const CtrlMsg& msg) = 0;
  virtual void on_payload() {}
  // Fails requests that can no longer complete; returns how many.
  virtual int on_ctrl_failure(ncclResult_t code) = 0;

  CommHead head_;
  std::mutex mutex_;  // everything below
  const std::string peer_;
  ncclResult_t ctrl_error_ = ncclSuccess;
  std::array<Request, NCCL_NET_MAX_REQUESTS> requests_;

 private:
  short control_events(int* fd, int* recheck_ms) override;
  bool progress_control() override;
  bool flush_ctrl();
  // Parses the records and payload bytes held in in_buf_; false once the
  // peer broke the protocol (the control connection has failed then).
  bool parse_ctrl();
  // One read from the control socket; false when it found nothing (or failed).
  bool fill_ctrl(bool* drained);
  void ctrl_failed(ncclResult_t code, const char* what, int err);

  const bool sending_;
  // steady_clock nanoseconds of the caller's last caller_progress_ctrl().
  std::atomic<int64_t> caller_ns_{0};
  Fd ctrl_;
  std::vector<Fd> data_;
  const int nsocks_per_thread_;
  std::vector<std::unique_ptr<DataWorker>> workers_;
  size_t assisted_ = 0;  // workers_[0, assisted_) are moved by the caller's tests
  uint64_t next_socket_ = 0;
  std::string ctrl_out_;
  size_t ctrl_out_done_ = 0;
  uint64_t ctrl_queued_total_ = 0;
  uint64_t ctrl_sent_total_ = 0;
  // Control bytes read ahead and not parsed yet: in_buf_[in_begin_, in_end_).
  // One read takes a record and its eager payload (and whatever follows)
  // instead of a read per record, per payload and a last one that finds the
  // socket empty.
  std::unique_ptr<char[]> in_buf_;
  size_t in_begin_ = 0;
  size_t in_end_ = 0;
  bool in_payload_ = false;  // the stream's next bytes are a payload, not a record
  char* in_dst_ = nullptr;
  size_t in_len_ = 0;
  size_t in_done_ = 0;
  bool ctrl_moved_ = false;  // progress_ctrl() moved bytes
  size_t next_free_ = 0;
};

class SendComm : public Comm {
 public:
  // data.size() / nsocks_per_thread helper threads.
  static ncclResult_t create(Fd ctrl, std::vector<Fd> data, int nsocks_per_thread, std::string peer,
                             SendComm** out);
  ~SendComm() override { stop_workers(); }
  ncclResult_t isend(void* data, int size, int tag, void** request);

 private:
  using Comm::Comm;
  ncclResult_t on_message(const CtrlMsg& msg) override;
  int on_ctrl_failure(ncclResult_t code) override;
  bool helper_reads_control() const override;
  ncclResult_t on_grant(const CtrlMsg& msg);
  void send_eager(Request* req);

  uint64_t next_id_ = 0;
  // Eager state, 0 until the receiver's grant arrived (and for good if it
  // never does).
  bool granted_ = false;
  size_t eager_max_ = 0;
  int eager_credits_ = 0;  // granted
  int credits_ = 0;        // left now
};

// What the connecting side offered in its hello (zeros: no eager path).
struct EagerOffer {
  size_t max_bytes = 0;
  int credits = 0;
};

class RecvComm : public Comm {
 public:
  // Grants min(offer, this build's kEagerMaxBytes / kEagerCredits) when the
  // offer is not zero.
  static ncclResult_t create(Fd ctrl, std::vector<Fd> data, int nsocks_per_thread, std::string peer,
                             EagerOffer offer, RecvComm** out);
  ncclResult_t irecv(void* data, int size, int tag, void** request);
  ncclResult_t iflush(void** request);
  ~RecvComm() override { stop_workers(); }

 private:
  using Comm::Comm;
  ncclResult_t on_message(const CtrlMsg& msg) override;
  int on_ctrl_failure(ncclResult_t code) override;
  void on_payload() override;
  // A message that arrived before its receive: a rendezvous header, or an
  // eager message with its payload.
  struct Arrived {
    CtrlMsg header;
    bool eager = false;
    std::vector<char> payload;
  };
  void match(Request* req, const CtrlMsg& header);
  // socket_eager.cc
  void grant(EagerOffer offer);
  ncclResult_t on_eager(const CtrlMsg& msg);
  void match_held(Request* req, Arrived& held);
  void refuse_eager(const CtrlMsg& header, int capacity);
  void consumed_eager();
  std::deque<Request*>::iterator posted_with_tag(int tag);

  uint64_t expected_id_ = 0;
  std::deque<Request*> posted_;     // receives waiting for a message, oldest first
  std::deque<Arrived> unexpected_;  // messages waiting for a receive, oldest first
  size_t unexpected_headers_ = 0;   // rendezvous entries of unexpected_
  Request flush_request_;           // iflush: always complete (host memory)

  // Eager path (all 0 when not granted).
  size_t eager_max_ = 0;
  int eager_credits_ = 0;
  int eager_unreturned_ = 0;  // eager messages received, credit not yet sent back
  int credits_to_return_ = 0;
  int credit_batch_ = 1;
  // The eager payload being read now: into `target` (a matched receive), or
  // into `held` (no receive yet, or one too small: `refused`).
  struct EagerIn {
    CtrlMsg header{};
    Request* target = nullptr;
    bool refused = false;
    std::vector<char> held;
  } eager_in_;
};

}  // namespace nccom::socket
