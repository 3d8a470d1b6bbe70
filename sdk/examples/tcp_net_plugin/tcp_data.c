/* The data path: registration, isend/irecv/iflush and test.
 *
 * No thread of its own: bytes move only inside test (and only without
 * blocking: every socket is non-blocking). The host's proxy tests its
 * requests over and over while a collective runs, which is what drives the
 * connection. Testing any request of a comm moves the whole comm forward,
 * so requests may be tested in any order, and one that is never tested
 * still completes while others of its comm are.
 *
 * Sending: posted sends are written in posting order, each as an 8-byte
 * header (tag, size) and its payload.
 * Receiving: the stream is read one message at a time; a message goes to
 * the oldest posted receive with its tag (so messages of one tag arrive in
 * the order they were sent, whatever order receives of different tags are
 * posted in). A message whose tag has no receive posted yet waits in the
 * socket until one is posted: this plugin does not buffer messages, so a
 * caller must not wait for a later message before posting the receive of
 * an earlier one (nccom posts its receives ahead and never does).
 */
#include "tcp_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

struct tcp_comm* tcp_comm_new(enum tcp_kind kind, int fd) {
  struct tcp_comm* c = (struct tcp_comm*)calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->magic = TCP_COMM_MAGIC;
  c->kind = kind;
  c->fd = fd;
  c->broken = ncclSuccess;
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) c->reqs[i].comm = c;
  return c;
}

/* ---- registration ------------------------------------------------------
 * regMr is called for every buffer before it is used in isend/irecv, with
 * the comm it will be used on. A NIC would pin the memory and keep a key;
 * TCP reads host memory directly, so a registration only records what was
 * registered. The host deregisters every registration before closing the
 * comm. Only host memory (ptrSupport NCCL_PTR_HOST) is accepted. */

#define TCP_MR_MAGIC 0x6d726567u /* "mreg" */

struct tcp_mr {
  uint32_t magic;
  void* comm;
};

ncclResult_t tcp_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  (void)data;
  (void)size;
  if (comm == NULL || mhandle == NULL) return ncclInvalidArgument;
  if (type != NCCL_PTR_HOST) {
    PLUGIN_WARN("NET/" TCP_NET_NAME
                ": regMr: memory type %d; only host memory (NCCL_PTR_HOST) "
                "is supported",
                type);
    return ncclInvalidArgument;
  }
  struct tcp_mr* mr = (struct tcp_mr*)malloc(sizeof *mr);
  if (mr == NULL) return ncclSystemError;
  mr->magic = TCP_MR_MAGIC;
  mr->comm = comm;
  *mhandle = mr;
  return ncclSuccess;
}

ncclResult_t tcp_dereg_mr(void* comm, void* mhandle) {
  struct tcp_mr* mr = (struct tcp_mr*)mhandle;
  if (comm == NULL || mr == NULL || mr->magic != TCP_MR_MAGIC || mr->comm != comm) {
    return ncclInvalidArgument;
  }
  mr->magic = 0;
  free(mr);
  return ncclSuccess;
}

/* ---- failures ----------------------------------------------------------
 * A connection that broke fails every request in flight on it, and every
 * later post, with the same cause; the WARN says it once. */

static void tcp_break(struct tcp_comm* c, ncclResult_t error, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, args);
  va_end(args);
  c->broken = error;
  PLUGIN_WARN("NET/" TCP_NET_NAME ": %s connection: %s",
              c->kind == TCP_SEND_COMM ? "send" : "receive", c->why);
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) {
    struct tcp_request* r = &c->reqs[i];
    if (r->state == TCP_POSTED || r->state == TCP_ACTIVE) {
      r->state = TCP_FAILED;
      r->error = error;
    }
  }
  c->queue_len = 0;
  c->current = NULL;
}

/* The cause of a failed send()/recv() (errno) or of an end of stream (0). */
static void tcp_break_io(struct tcp_comm* c, ssize_t n, const char* doing) {
  if (n == 0) {
    tcp_break(c, ncclRemoteError, "the peer closed the connection %s", doing);
  } else if (errno == EPIPE || errno == ECONNRESET) {
    tcp_break(c, ncclRemoteError, "the peer is gone (%s) %s", strerror(errno), doing);
  } else {
    tcp_break(c, ncclSystemError, "%s %s", strerror(errno), doing);
  }
}

static int tcp_would_block(void) { return errno == EAGAIN || errno == EWOULDBLOCK; }

/* ---- progress ----------------------------------------------------------
 * Both return when the socket can take or give nothing more right now. */

static void tcp_progress_send(struct tcp_comm* c) {
  while (c->broken == ncclSuccess && c->queue_len > 0) {
    struct tcp_request* r = c->queue[c->queue_head];
    const size_t total = TCP_HEADER_BYTES + (size_t)r->size;
    /* The rest of the header and the rest of the payload in one call. */
    struct iovec iov[2];
    int n_iov = 0;
    if (r->moved < TCP_HEADER_BYTES) {
      iov[n_iov].iov_base = r->hdr + r->moved;
      iov[n_iov].iov_len = TCP_HEADER_BYTES - r->moved;
      ++n_iov;
    }
    const size_t sent_payload = r->moved > TCP_HEADER_BYTES ? r->moved - TCP_HEADER_BYTES : 0;
    if (sent_payload < (size_t)r->size) {
      iov[n_iov].iov_base = r->data + sent_payload;
      iov[n_iov].iov_len = (size_t)r->size - sent_payload;
      ++n_iov;
    }
    if (n_iov > 0) {
      struct msghdr msg;
      memset(&msg, 0, sizeof msg);
      msg.msg_iov = iov;
      msg.msg_iovlen = (size_t)n_iov;
      const ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && tcp_would_block()) return; /* the socket buffer is full */
      if (n <= 0) {
        tcp_break_io(c, n, "while sending");
        return;
      }
      r->moved += (size_t)n;
    }
    if (r->moved == total) {
      r->state = TCP_DONE;
      c->queue_head = (c->queue_head + 1) % NCCL_NET_MAX_REQUESTS;
      --c->queue_len;
    }
  }
}

/* The oldest posted receive waiting for a message of `tag`, or NULL. */
static struct tcp_request* tcp_oldest_posted(struct tcp_comm* c, int tag) {
  struct tcp_request* best = NULL;
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) {
    struct tcp_request* r = &c->reqs[i];
    if (r->state == TCP_POSTED && r->tag == tag && (best == NULL || r->seq < best->seq)) best = r;
  }
  return best;
}

static void tcp_fail_posted(struct tcp_comm* c, ncclResult_t error) {
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) {
    if (c->reqs[i].state == TCP_POSTED) {
      c->reqs[i].state = TCP_FAILED;
      c->reqs[i].error = error;
    }
  }
}

static void tcp_progress_recv(struct tcp_comm* c) {
  while (c->broken == ncclSuccess) {
    ssize_t n;
    if (c->discard > 0) { /* the payload of a message whose receive failed */
      char scratch[4096];
      n = recv(c->fd, scratch, c->discard < sizeof scratch ? c->discard : sizeof scratch, 0);
      if (n > 0) c->discard -= (size_t)n;
    } else if (c->current != NULL) { /* a matched message's payload */
      struct tcp_request* r = c->current;
      if (r->moved == (size_t)r->received) {
        r->state = TCP_DONE;
        c->current = NULL;
        continue;
      }
      n = recv(c->fd, r->data + r->moved, (size_t)r->received - r->moved, 0);
      if (n > 0) r->moved += (size_t)n;
    } else if (c->hdr_got < TCP_HEADER_BYTES) { /* the next header */
      if (c->peer_closed) return;
      n = recv(c->fd, c->hdr + c->hdr_got, (size_t)(TCP_HEADER_BYTES - c->hdr_got), 0);
      if (n == 0 && c->hdr_got == 0) {
        /* The sender closed between messages: nothing more will come, so
         * a receive posted now or later can never complete. */
        c->peer_closed = 1;
        tcp_fail_posted(c, ncclRemoteError);
        PLUGIN_WARN("NET/" TCP_NET_NAME
                    ": receive connection: the sender closed it; receives "
                    "still posted fail");
        return;
      }
      if (n > 0) c->hdr_got += (int)n;
    } else { /* a whole header: find its receive */
      uint32_t tag_be, size_be;
      memcpy(&tag_be, c->hdr, 4);
      memcpy(&size_be, c->hdr + 4, 4);
      const int tag = (int)ntohl(tag_be);
      const uint32_t size = ntohl(size_be);
      struct tcp_request* r = tcp_oldest_posted(c, tag);
      if (r == NULL) return; /* waits in the socket until irecv posts this tag */
      c->hdr_got = 0;
      if (size > (uint32_t)r->size) {
        /* Never write past the buffer: fail this receive, drop the
         * payload, and keep the connection usable for the next message. */
        PLUGIN_WARN("NET/" TCP_NET_NAME
                    ": a %u-byte message (tag %d) does not fit the %d-byte "
                    "receive buffer; the receive fails",
                    size, tag, r->size);
        r->state = TCP_FAILED;
        r->error = ncclInternalError;
        c->discard = size;
      } else {
        r->state = TCP_ACTIVE;
        r->received = (int)size;
        r->moved = 0;
        c->current = r;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && tcp_would_block()) return; /* nothing more has arrived */
    if (n <= 0) tcp_break_io(c, n, "in the middle of a message");
  }
}

/* ---- posting -----------------------------------------------------------
 * isend/irecv only take a request from the pool and queue it; they never
 * wait. A NULL request with ncclSuccess means "all NCCL_NET_MAX_REQUESTS
 * are in flight: test some and post again" (nccom retries). */

static struct tcp_request* tcp_take_request(struct tcp_comm* c) {
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) {
    if (c->reqs[i].state == TCP_FREE) return &c->reqs[i];
  }
  return NULL;
}

static ncclResult_t tcp_refuse_broken(const struct tcp_comm* c, const char* call) {
  PLUGIN_WARN("NET/" TCP_NET_NAME ": %s on a broken connection: %s", call, c->why);
  return c->broken;
}

ncclResult_t tcp_isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                       void** request) {
  struct tcp_comm* c = tcp_comm_of(send_comm, TCP_SEND_COMM);
  (void)mhandle; /* regMr recorded nothing the socket needs */
  if (c == NULL || request == NULL || size < 0 || (data == NULL && size > 0)) {
    return ncclInvalidArgument;
  }
  *request = NULL;
  if (c->broken != ncclSuccess) return tcp_refuse_broken(c, "isend");
  struct tcp_request* r = tcp_take_request(c);
  if (r == NULL) return ncclSuccess; /* the pool is full: call again */
  const uint32_t tag_be = htonl((uint32_t)tag), size_be = htonl((uint32_t)size);
  memcpy(r->hdr, &tag_be, 4);
  memcpy(r->hdr + 4, &size_be, 4);
  r->state = TCP_POSTED;
  r->tag = tag;
  r->data = (char*)data;
  r->size = size;
  r->moved = 0;
  r->seq = c->next_seq++;
  c->queue[(c->queue_head + c->queue_len) % NCCL_NET_MAX_REQUESTS] = r;
  ++c->queue_len;
  *request = r;
  return ncclSuccess;
}

ncclResult_t tcp_irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                       void** request) {
  struct tcp_comm* c = tcp_comm_of(recv_comm, TCP_RECV_COMM);
  (void)mhandles;
  /* getProperties says maxRecvs 1: exactly one buffer per receive. */
  if (c == NULL || n != 1 || data == NULL || sizes == NULL || tags == NULL || request == NULL ||
      sizes[0] < 0 || (data[0] == NULL && sizes[0] > 0)) {
    return ncclInvalidArgument;
  }
  *request = NULL;
  if (c->broken != ncclSuccess) return tcp_refuse_broken(c, "irecv");
  if (c->peer_closed) {
    PLUGIN_WARN("NET/" TCP_NET_NAME ": irecv: the sender closed this connection");
    return ncclRemoteError;
  }
  struct tcp_request* r = tcp_take_request(c);
  if (r == NULL) return ncclSuccess; /* the pool is full: call again */
  r->state = TCP_POSTED;
  r->tag = tags[0];
  r->data = (char*)data[0];
  r->size = sizes[0];
  r->received = 0;
  r->moved = 0;
  r->seq = c->next_seq++;
  *request = r;
  return ncclSuccess;
}

/* iflush makes received data visible to a device that reads it behind the
 * NIC's back (GPU memory). Host memory needs nothing, which a NULL request
 * says. */
ncclResult_t tcp_iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                        void** request) {
  (void)data;
  (void)sizes;
  (void)mhandles;
  if (tcp_comm_of(recv_comm, TCP_RECV_COMM) == NULL || n != 1 || request == NULL) {
    return ncclInvalidArgument;
  }
  *request = NULL;
  return ncclSuccess;
}

/* ---- test --------------------------------------------------------------
 * Moves the request's comm forward, then reports the request:
 *  - done: *done = 1, sizes[0] = the bytes it moved (for a receive, the
 *    size of the message that arrived, which nccom relies on when only the
 *    sender knows the length); the request goes back to the pool;
 *  - failed: its error is returned (*done stays 0); it goes back too;
 *  - otherwise *done = 0: test again later. */
ncclResult_t tcp_test(void* request, int* done, int* sizes) {
  struct tcp_request* r = (struct tcp_request*)request;
  if (r == NULL || done == NULL || r->comm == NULL || r->comm->magic != TCP_COMM_MAGIC) {
    return ncclInvalidArgument;
  }
  *done = 0;
  struct tcp_comm* c = r->comm;
  if (c->kind == TCP_SEND_COMM) {
    tcp_progress_send(c);
  } else {
    tcp_progress_recv(c);
  }
  switch (r->state) {
    case TCP_DONE:
      *done = 1;
      if (sizes != NULL) sizes[0] = c->kind == TCP_SEND_COMM ? r->size : r->received;
      r->state = TCP_FREE;
      return ncclSuccess;
    case TCP_FAILED: r->state = TCP_FREE; return r->error;
    case TCP_POSTED:
    case TCP_ACTIVE: return ncclSuccess;
    case TCP_FREE: break;
  }
  PLUGIN_WARN("NET/" TCP_NET_NAME
              ": test of a request that is not in flight (already reported "
              "done or failed)");
  return ncclInvalidUsage;
}
