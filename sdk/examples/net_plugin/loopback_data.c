/* The loopback's data path: a send and a receive meet under the
 * connection's lock, at whichever is posted second, and the bytes are copied
 * then. Matching is per tag, oldest first, so messages of one tag arrive in
 * the order they were sent whatever order the receives are posted in. */
#include "loopback.h"

#include <string.h>

/* The oldest posted, unmatched request of `end` with `tag`. Lock held. */
static struct lb_request* lb_oldest(struct lb_comm* end, int tag) {
  struct lb_request* best = NULL;
  if (end == NULL) return NULL;
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) {
    struct lb_request* r = &end->requests[i];
    if (r->state == LB_POSTED && r->tag == tag && (best == NULL || r->seq < best->seq)) best = r;
  }
  return best;
}

/* Moves one message. A receive buffer that is too small fails both sides
 * and nothing is written. Lock held. */
static void lb_match(struct lb_request* send, struct lb_request* recv) {
  if (send->size > recv->size) {
    LB_WARN("NET/Loopback: a %d-byte message (tag %d) does not fit the %d-byte receive buffer",
            send->size, send->tag, recv->size);
    send->state = recv->state = LB_FAILED;
    send->error = ncclRemoteError;
    recv->error = ncclInternalError;
    return;
  }
  if (send->size > 0) memcpy(recv->data, send->data, (size_t)send->size);
  send->moved = recv->moved = send->size;
  send->state = recv->state = LB_DONE;
}

/* Posts on `self` and matches at once if the other end is waiting. */
static ncclResult_t lb_post(struct lb_comm* self, void* data, int size, int tag, void** request) {
  struct lb_conn* conn = self->conn;
  struct lb_request* r = NULL;
  const int sending = self->kind == LB_SEND;
  pthread_mutex_lock(&conn->lock);
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS && r == NULL; ++i) {
    if (self->requests[i].state == LB_FREE) r = &self->requests[i];
  }
  if (r != NULL) {
    r->state = LB_POSTED;
    r->data = data;
    r->size = size;
    r->tag = tag;
    r->moved = 0;
    r->seq = conn->next_seq++;
    r->error = ncclSuccess;
    const int peer_gone =
        sending ? conn->accepted && conn->recv_end == NULL : conn->send_end == NULL;
    struct lb_request* other = lb_oldest(sending ? conn->recv_end : conn->send_end, tag);
    if (peer_gone) {
      r->state = LB_FAILED;
      r->error = ncclRemoteError;
    } else if (other != NULL) {
      lb_match(sending ? r : other, sending ? other : r);
    }
  }
  pthread_mutex_unlock(&conn->lock);
  *request = r; /* NULL: NCCL_NET_MAX_REQUESTS in flight, call again later */
  return ncclSuccess;
}

ncclResult_t lb_isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                      void** request) {
  struct lb_comm* c = lb_comm_of(send_comm, LB_SEND);
  (void)mhandle;
  if (c == NULL || request == NULL || size < 0 || (data == NULL && size > 0)) {
    return ncclInvalidArgument;
  }
  return lb_post(c, data, size, tag, request);
}

ncclResult_t lb_irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                      void** request) {
  struct lb_comm* c = lb_comm_of(recv_comm, LB_RECV);
  (void)mhandles;
  /* maxRecvs is 1: one buffer per receive. */
  if (c == NULL || n != 1 || data == NULL || sizes == NULL || tags == NULL || request == NULL ||
      sizes[0] < 0 || (data[0] == NULL && sizes[0] > 0)) {
    return ncclInvalidArgument;
  }
  return lb_post(c, data[0], sizes[0], tags[0], request);
}

/* Host memory: nothing to flush, which a NULL request says. */
ncclResult_t lb_iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                       void** request) {
  (void)data;
  (void)sizes;
  (void)mhandles;
  if (lb_comm_of(recv_comm, LB_RECV) == NULL || n != 1 || request == NULL) {
    return ncclInvalidArgument;
  }
  *request = NULL;
  return ncclSuccess;
}

/* Done or failed requests are released here; a failed one answers with its
 * error and leaves *done 0. */
ncclResult_t lb_test(void* request, int* done, int* sizes) {
  struct lb_request* r = (struct lb_request*)request;
  ncclResult_t result = ncclSuccess;
  if (r == NULL || done == NULL || r->comm == NULL || r->comm->magic != LB_COMM_MAGIC) {
    return ncclInvalidArgument;
  }
  struct lb_conn* conn = r->comm->conn;
  pthread_mutex_lock(&conn->lock);
  *done = 0;
  switch (r->state) {
    case LB_DONE:
      *done = 1;
      if (sizes != NULL) sizes[0] = r->moved;
      r->state = LB_FREE;
      break;
    case LB_FAILED:
      result = r->error;
      r->state = LB_FREE;
      break;
    case LB_POSTED: break;
    case LB_FREE:
      result = ncclInvalidUsage; /* already completed and released */
      break;
  }
  pthread_mutex_unlock(&conn->lock);
  return result;
}
