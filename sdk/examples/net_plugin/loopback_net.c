/* A third-party net plugin built against the nccom SDK: an in-process
 * loopback network in the Neuron ncclNet_v6 layout (<nccom/net_v6.h>).
 *
 * Both ends of every connection live in one process (a handle from another
 * process is refused), so it is only good for trying out a host or a tool
 * — e.g. `nccom-plugin-check libnccom-net-loopback.so` — but it shows
 * everything a real plugin must get right: non-blocking connect/accept,
 * per-tag FIFO matching, at most NCCL_NET_MAX_REQUESTS requests per comm
 * (then a NULL request: "try again"), a receive buffer that is too small
 * failing both requests, and errors instead of crashes for bad arguments.
 * This file is the control path and the table; loopback_data.c moves data.
 */
#include "loopback.h"

#include <nccom/plugin.h> /* NCCOM_PLUGIN_EXPORT */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lb_lock = PTHREAD_MUTEX_INITIALIZER; /* the listener list */
static struct lb_comm* lb_listeners;
static unsigned long long lb_next_listener = 1;
ncclDebugLogger_t lb_log;
static char lb_mr_marker; /* every mhandle: host memory needs no registration */

static struct lb_comm* lb_new_comm(enum lb_kind kind, struct lb_conn* conn) {
  struct lb_comm* c = (struct lb_comm*)calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->magic = LB_COMM_MAGIC;
  c->kind = kind;
  c->conn = conn;
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) c->requests[i].comm = c;
  return c;
}

static ncclResult_t lb_init(ncclDebugLogger_t logger) {
  lb_log = logger;
  if (lb_log != NULL)
    lb_log(NCCL_LOG_INFO, NCCL_INIT | NCCL_NET, __FILE__, __LINE__, "NET/Loopback: ready");
  return ncclSuccess;
}

static ncclResult_t lb_fini(void) {
  lb_log = NULL;
  return ncclSuccess;
}

static ncclResult_t lb_devices(int* ndev) {
  if (ndev == NULL) return ncclInvalidArgument;
  *ndev = 1;
  return ncclSuccess;
}

static ncclResult_t lb_get_properties(int dev, ncclNetProperties_v6_t* props) {
  if (dev != 0 || props == NULL) return ncclInvalidArgument;
  memset(props, 0, sizeof *props);
  props->name = (char*)"loopback";
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 100000;
  props->maxComms = 65536;
  props->maxRecvs = 1;
  return ncclSuccess;
}

static ncclResult_t lb_listen(int dev, void* handle, void** listen_comm) {
  if (dev != 0 || handle == NULL || listen_comm == NULL) return ncclInvalidArgument;
  struct lb_comm* l = lb_new_comm(LB_LISTEN, NULL);
  if (l == NULL) return ncclSystemError;
  struct lb_handle h = {LB_HANDLE_MAGIC, (unsigned long long)getpid(), 0};
  pthread_mutex_lock(&lb_lock);
  l->listener_id = h.listener_id = lb_next_listener++;
  l->next_listener = lb_listeners;
  lb_listeners = l;
  pthread_mutex_unlock(&lb_lock);
  memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
  memcpy(handle, &h, sizeof h);
  *listen_comm = l;
  return ncclSuccess;
}

/* Completes at once: the connection waits in the listener's backlog. */
static ncclResult_t lb_connect(int dev, void* handle, void** send_comm) {
  if (dev != 0 || handle == NULL || send_comm == NULL) return ncclInvalidArgument;
  struct lb_handle h;
  memcpy(&h, handle, sizeof h);
  if (h.magic != LB_HANDLE_MAGIC || h.pid != (unsigned long long)getpid()) {
    LB_WARN("NET/Loopback: connect: not a loopback handle of this process");
    return ncclInvalidArgument;
  }
  ncclResult_t result = ncclInvalidArgument;
  pthread_mutex_lock(&lb_lock);
  struct lb_comm* l = lb_listeners;
  while (l != NULL && l->listener_id != h.listener_id) l = l->next_listener;
  struct lb_conn* conn = NULL;
  struct lb_comm* s = NULL;
  if (l == NULL) {
    LB_WARN("NET/Loopback: connect: listener %llu is closed", h.listener_id);
  } else if (l->backlog_len == LB_BACKLOG) {
    result = ncclSuccess; /* full: not yet, call again */
    *send_comm = NULL;
  } else if ((conn = (struct lb_conn*)calloc(1, sizeof *conn)) == NULL ||
             (s = lb_new_comm(LB_SEND, conn)) == NULL) {
    free(conn);
    result = ncclSystemError;
  } else {
    pthread_mutex_init(&conn->lock, NULL);
    conn->send_end = s;
    l->backlog[l->backlog_len++] = conn;
    *send_comm = s;
    result = ncclSuccess;
  }
  pthread_mutex_unlock(&lb_lock);
  return result;
}

static ncclResult_t lb_accept(void* listen_comm, void** recv_comm) {
  struct lb_comm* l = lb_comm_of(listen_comm, LB_LISTEN);
  if (l == NULL || recv_comm == NULL) return ncclInvalidArgument;
  *recv_comm = NULL;
  pthread_mutex_lock(&lb_lock);
  if (l->backlog_len > 0) {
    struct lb_conn* conn = l->backlog[0];
    struct lb_comm* r = lb_new_comm(LB_RECV, conn);
    if (r != NULL) {
      memmove(l->backlog, l->backlog + 1, sizeof l->backlog[0] * (size_t)--l->backlog_len);
      pthread_mutex_lock(&conn->lock);
      conn->recv_end = r;
      conn->accepted = 1;
      pthread_mutex_unlock(&conn->lock);
      *recv_comm = r;
    }
  }
  pthread_mutex_unlock(&lb_lock);
  return ncclSuccess;
}

static ncclResult_t lb_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  (void)data;
  (void)size;
  if (comm == NULL || mhandle == NULL || type != NCCL_PTR_HOST) return ncclInvalidArgument;
  *mhandle = &lb_mr_marker;
  return ncclSuccess;
}

static ncclResult_t lb_dereg_mr(void* comm, void* mhandle) {
  return comm != NULL && mhandle == &lb_mr_marker ? ncclSuccess : ncclInvalidArgument;
}

/* A connection is freed by whichever end closes last — once it can no
 * longer be accepted (it was, or its listener is gone). */
static int lb_release(struct lb_conn* conn) {
  return conn->send_end == NULL && conn->recv_end == NULL && (conn->accepted || conn->orphaned);
}

static void lb_free_conn(struct lb_conn* conn) {
  pthread_mutex_destroy(&conn->lock);
  free(conn);
}

static ncclResult_t lb_close_end(void* p, enum lb_kind kind) {
  struct lb_comm* c = lb_comm_of(p, kind);
  if (c == NULL) return ncclInvalidArgument;
  struct lb_conn* conn = c->conn;
  pthread_mutex_lock(&conn->lock);
  if (kind == LB_SEND) conn->send_end = NULL;
  if (kind == LB_RECV) conn->recv_end = NULL;
  const int last = lb_release(conn);
  pthread_mutex_unlock(&conn->lock);
  c->magic = 0;
  free(c);
  if (last) lb_free_conn(conn);
  return ncclSuccess;
}

static ncclResult_t lb_close_send(void* send_comm) { return lb_close_end(send_comm, LB_SEND); }
static ncclResult_t lb_close_recv(void* recv_comm) { return lb_close_end(recv_comm, LB_RECV); }

static ncclResult_t lb_close_listen(void* listen_comm) {
  struct lb_comm* l = lb_comm_of(listen_comm, LB_LISTEN);
  if (l == NULL) return ncclInvalidArgument;
  pthread_mutex_lock(&lb_lock);
  struct lb_comm** link = &lb_listeners;
  while (*link != l) link = &(*link)->next_listener;
  *link = l->next_listener;
  for (int i = 0; i < l->backlog_len; ++i) { /* connected, never accepted */
    struct lb_conn* conn = l->backlog[i];
    pthread_mutex_lock(&conn->lock);
    conn->orphaned = 1;
    const int last = lb_release(conn);
    pthread_mutex_unlock(&conn->lock);
    if (last) lb_free_conn(conn);
  }
  pthread_mutex_unlock(&lb_lock);
  l->magic = 0;
  free(l);
  return ncclSuccess;
}

/* Only this symbol leaves the object (hidden visibility by default). */
NCCOM_PLUGIN_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {"Loopback",
                                                           lb_init,
                                                           lb_fini,
                                                           lb_devices,
                                                           lb_get_properties,
                                                           lb_listen,
                                                           lb_connect,
                                                           lb_accept,
                                                           lb_reg_mr,
                                                           NULL /* regMrDmaBuf */,
                                                           lb_dereg_mr,
                                                           lb_isend,
                                                           lb_irecv,
                                                           lb_iflush,
                                                           lb_test,
                                                           lb_close_send,
                                                           lb_close_recv,
                                                           lb_close_listen,
                                                           NULL /* getMrKey */,
                                                           NULL /* iwrite */,
                                                           NULL /* iwriteInline */,
                                                           NULL /* iread */};
