/* The loopback core (see loopback.h). The tests drive both ends of every
 * connection from one thread, but a host may run connect and accept on
 * threads of its own (libnccom does, for plugins whose calls block), so all
 * state sits behind one lock. A blocking accept waits, as a v4 plugin's
 * does, for a connect to arrive; it gives up after LB_ACCEPT_WAIT_S seconds
 * so that a test that never connects fails instead of hanging. */
#include "loopback.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef LB_NDEV
#define LB_NDEV 1
#endif
#ifndef LB_MAX_RECVS
#define LB_MAX_RECVS 1
#endif
#ifndef LB_ACCEPT_WAIT_S
#define LB_ACCEPT_WAIT_S 20
#endif

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_connected = PTHREAD_COND_INITIALIZER;

#ifdef LB_LONG_STRINGS
static char lb_long_name[512] = {[0 ... 511] = 'n'};
static char lb_long_path[8192] = {[0 ... 8191] = 'p'};
#endif

LB_EXPORT lb_stats_t loopback_stats;

static const uint64_t kMagic = 0x4b4341424f4f4c31ull; /* "1LOOBACK" */

typedef struct lb_msg {
  struct lb_msg* next;
  int tag;
  int size;
  unsigned char bytes[];
} lb_msg;

/* One connection: what the send side queued for the receive side. */
typedef struct {
  lb_msg *head, *tail;
  int ends; /* 2 while both sides are open */
} lb_chan;

#define LB_PENDING 8
typedef struct lb_listener {
  uint64_t id;
  int connect_polls;
  lb_chan* pending[LB_PENDING];
  int npending;
  struct lb_listener* next;
} lb_listener;

typedef struct {
  lb_chan* chan;
} lb_end;
typedef struct {
  void* data;
  size_t size;
} lb_mr;

enum { LB_SEND, LB_RECV, LB_FLUSH };
typedef struct {
  int kind;
  lb_chan* chan;
  void* data;
  int size;
  int tag;
} lb_req;

static lb_listener* g_listeners;
static uint64_t g_next_id = 1;

static void put_u64(unsigned char* p, uint64_t v) { memcpy(p, &v, sizeof v); }
static uint64_t get_u64(const unsigned char* p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static ncclResult_t init_unlocked(ncclDebugLogger_t log) {
  loopback_stats.init_calls++;
  if (log != NULL) {
    log(NCCL_LOG_INFO, NCCL_NET, __FILE__, __LINE__, "%s: loopback init, %d device(s)", LB_NAME,
        LB_NDEV);
    log(NCCL_LOG_INFO, NCCL_NET, __FILE__, __LINE__, NULL); /* odd, but seen in the wild */
  }
#ifdef LB_INIT_FAILS
  if (log != NULL) log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, "%s: no network", LB_NAME);
  return ncclInternalError;
#else
  return ncclSuccess;
#endif
}

static ncclResult_t fini_unlocked(void) {
  loopback_stats.fini_calls++;
  return ncclSuccess;
}

ncclResult_t lb_devices(int* ndev) {
  if (ndev == NULL) return ncclInvalidArgument;
  *ndev = LB_NDEV;
  return ncclSuccess;
}

ncclResult_t lb_properties(int dev, ncclNetProperties_v6_t* props) {
  if (props == NULL || dev < 0 || dev >= LB_NDEV) return ncclInvalidArgument;
  memset(props, 0, sizeof *props);
#ifdef LB_LONG_STRINGS
  props->name = lb_long_name;
  props->pciPath = lb_long_path;
#else
  props->name = (char*)"lo";
  props->pciPath = (char*)"/sys/devices/virtual/net/lo";
#endif
  props->guid = 0x1000u + (uint64_t)dev;
  props->ptrSupport = NCCL_PTR_HOST;
  props->regIsGlobal = 1;
  props->speed = 100000;
  props->port = 1;
  props->latency = 0.5f;
  props->maxComms = 1024;
  props->maxRecvs = LB_MAX_RECVS;
  props->max_write_inline_size = 64;
  props->max_mr_key_size = 8;
  props->rma_supported = 0;
#ifdef LB_WILD_PROPS
  /* A careless plugin: every byte 0xff, the string pointers wild. */
  memset(props, 0xff, sizeof *props);
#endif
  return ncclSuccess;
}

static ncclResult_t listen_unlocked(int dev, void* handle, int handle_bytes, void** listen_comm) {
  if (handle == NULL || listen_comm == NULL || dev < 0 || dev >= LB_NDEV)
    return ncclInvalidArgument;
  lb_listener* l = calloc(1, sizeof *l);
  if (l == NULL) return ncclSystemError;
  l->id = g_next_id++;
  l->next = g_listeners;
  g_listeners = l;
  unsigned char* h = handle;
  memset(h, 0x5a, (size_t)handle_bytes); /* fill it all: tests check what a host copies */
  put_u64(h, kMagic);
  put_u64(h + 8, l->id);
  loopback_stats.open_comms++;
  *listen_comm = l;
  return ncclSuccess;
}

static ncclResult_t connect_unlocked(int dev, const void* handle, int blocking, void** send_comm) {
  if (handle == NULL || send_comm == NULL) return ncclInvalidArgument;
  const unsigned char* h = handle;
  if (get_u64(h) != kMagic) return ncclInvalidArgument;
  lb_listener* l = g_listeners;
  while (l != NULL && l->id != get_u64(h + 8)) l = l->next;
  if (l == NULL) return ncclRemoteError;
  if (!blocking && l->connect_polls++ == 0) { /* "not yet, call again" */
    *send_comm = NULL;
    return ncclSuccess;
  }
  if (l->npending == LB_PENDING) return ncclInternalError;
  lb_chan* chan = calloc(1, sizeof *chan);
  lb_end* end = calloc(1, sizeof *end);
  if (chan == NULL || end == NULL) {
    free(chan);
    free(end);
    return ncclSystemError;
  }
  chan->ends = 2;
  end->chan = chan;
  l->pending[l->npending++] = chan;
  pthread_cond_broadcast(&g_connected);
  loopback_stats.open_comms++;
  *send_comm = end;
  return ncclSuccess;
}

static ncclResult_t accept_unlocked(void* listen_comm, int blocking, void** recv_comm) {
  lb_listener* l = listen_comm;
  if (l == NULL || recv_comm == NULL) return ncclInvalidArgument;
  if (l->npending == 0) {
    if (blocking) return ncclInternalError; /* lb_accept waited and nobody connected */
    *recv_comm = NULL;
    return ncclSuccess;
  }
  lb_end* end = calloc(1, sizeof *end);
  if (end == NULL) return ncclSystemError;
  end->chan = l->pending[0];
  memmove(l->pending, l->pending + 1, sizeof(l->pending[0]) * (size_t)--l->npending);
  loopback_stats.open_comms++;
  *recv_comm = end;
  return ncclSuccess;
}

static ncclResult_t reg_mr_unlocked(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (comm == NULL || mhandle == NULL || type != NCCL_PTR_HOST) return ncclInvalidArgument;
  lb_mr* mr = malloc(sizeof *mr);
  if (mr == NULL) return ncclSystemError;
  mr->data = data;
  mr->size = size;
  loopback_stats.open_mrs++;
  *mhandle = mr;
  return ncclSuccess;
}

static ncclResult_t dereg_mr_unlocked(void* comm, void* mhandle) {
  if (comm == NULL || mhandle == NULL) return ncclInvalidArgument;
  free(mhandle);
  loopback_stats.open_mrs--;
  return ncclSuccess;
}

static ncclResult_t new_request(int kind, lb_chan* chan, void* data, int size, int tag,
                                void** request) {
  lb_req* r = malloc(sizeof *r);
  if (r == NULL) return ncclSystemError;
  r->kind = kind;
  r->chan = chan;
  r->data = data;
  r->size = size;
  r->tag = tag;
  *request = r;
  return ncclSuccess;
}

static ncclResult_t isend_unlocked(void* send_comm, void* data, int size, int tag, void** request) {
  lb_end* end = send_comm;
  if (end == NULL || request == NULL || size < 0 || (size > 0 && data == NULL)) {
    return ncclInvalidArgument;
  }
  lb_msg* m = malloc(sizeof *m + (size_t)size);
  if (m == NULL) return ncclSystemError;
  m->next = NULL;
  m->tag = tag;
  m->size = size;
  if (size > 0) memcpy(m->bytes, data, (size_t)size);
  if (end->chan->tail)
    end->chan->tail->next = m;
  else
    end->chan->head = m;
  end->chan->tail = m;
  loopback_stats.last_tag = tag;
  return new_request(LB_SEND, end->chan, data, size, tag, request);
}

static ncclResult_t irecv_unlocked(void* recv_comm, int n, void** data, int* sizes, int* tags,
                                   void** request) {
  lb_end* end = recv_comm;
  if (n > loopback_stats.max_recv_n) loopback_stats.max_recv_n = n;
  if (end == NULL || request == NULL || n != 1 || data == NULL || sizes == NULL) {
    return ncclInvalidArgument;
  }
  return new_request(LB_RECV, end->chan, data[0], sizes[0], tags ? tags[0] : 0, request);
}

static ncclResult_t iflush_unlocked(void* recv_comm, int n, void** request) {
  lb_end* end = recv_comm;
  if (end == NULL || request == NULL || n != 1) return ncclInvalidArgument;
  return new_request(LB_FLUSH, end->chan, NULL, 0, 0, request);
}

static ncclResult_t test_unlocked(void* request, int* done, int* sizes) {
  lb_req* r = request;
  if (r == NULL || done == NULL) return ncclInvalidArgument;
  if (r->kind == LB_RECV) {
    lb_msg **link = &r->chan->head, *prev = NULL;
    while (*link != NULL && (*link)->tag != r->tag) {
      prev = *link;
      link = &(*link)->next;
    }
    lb_msg* m = *link;
    if (m == NULL) {
      *done = 0;
      return ncclSuccess;
    }
    if (m->size > r->size) return ncclInvalidUsage; /* would truncate */
    *link = m->next;
    if (r->chan->tail == m) r->chan->tail = prev;
    if (m->size > 0) memcpy(r->data, m->bytes, (size_t)m->size);
    r->size = m->size;
    free(m);
  }
  *done = 1;
  if (sizes != NULL && r->kind != LB_FLUSH) sizes[0] = r->size;
  free(r);
  return ncclSuccess;
}

static void release_chan(lb_chan* chan) {
  if (--chan->ends > 0) return;
  while (chan->head) {
    lb_msg* m = chan->head;
    chan->head = m->next;
    free(m);
  }
  free(chan);
}

static ncclResult_t close_end(lb_end* end) {
  if (end == NULL) return ncclInvalidArgument;
  release_chan(end->chan);
  free(end);
  loopback_stats.open_comms--;
  return ncclSuccess;
}

static ncclResult_t close_send_unlocked(void* send_comm) { return close_end(send_comm); }
static ncclResult_t close_recv_unlocked(void* recv_comm) { return close_end(recv_comm); }

static ncclResult_t close_listen_unlocked(void* listen_comm) {
  lb_listener** link = &g_listeners;
  while (*link != NULL && *link != listen_comm) link = &(*link)->next;
  if (*link == NULL) return ncclInvalidArgument;
  lb_listener* l = *link;
  *link = l->next;
  for (int i = 0; i < l->npending; ++i) release_chan(l->pending[i]); /* never accepted */
  free(l);
  loopback_stats.open_comms--;
  return ncclSuccess;
}

/* The exported calls: each runs under the lock. */
#define LB_LOCKED(call)              \
  do {                               \
    pthread_mutex_lock(&g_lock);     \
    ncclResult_t locked_rc = (call); \
    pthread_mutex_unlock(&g_lock);   \
    return locked_rc;                \
  } while (0)

ncclResult_t lb_init(ncclDebugLogger_t log) { LB_LOCKED(init_unlocked(log)); }

ncclResult_t lb_fini(void) { LB_LOCKED(fini_unlocked()); }

ncclResult_t lb_listen(int dev, void* handle, int handle_bytes, void** listen_comm) {
  LB_LOCKED(listen_unlocked(dev, handle, handle_bytes, listen_comm));
}

ncclResult_t lb_connect(int dev, const void* handle, int blocking, void** send_comm) {
  LB_LOCKED(connect_unlocked(dev, handle, blocking, send_comm));
}

ncclResult_t lb_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  LB_LOCKED(reg_mr_unlocked(comm, data, size, type, mhandle));
}

ncclResult_t lb_dereg_mr(void* comm, void* mhandle) { LB_LOCKED(dereg_mr_unlocked(comm, mhandle)); }

ncclResult_t lb_isend(void* send_comm, void* data, int size, int tag, void** request) {
  LB_LOCKED(isend_unlocked(send_comm, data, size, tag, request));
}

ncclResult_t lb_irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** request) {
  LB_LOCKED(irecv_unlocked(recv_comm, n, data, sizes, tags, request));
}

ncclResult_t lb_iflush(void* recv_comm, int n, void** request) {
  LB_LOCKED(iflush_unlocked(recv_comm, n, request));
}

ncclResult_t lb_test(void* request, int* done, int* sizes) {
  LB_LOCKED(test_unlocked(request, done, sizes));
}

ncclResult_t lb_close_send(void* send_comm) { LB_LOCKED(close_send_unlocked(send_comm)); }

ncclResult_t lb_close_recv(void* recv_comm) { LB_LOCKED(close_recv_unlocked(recv_comm)); }

ncclResult_t lb_close_listen(void* listen_comm) { LB_LOCKED(close_listen_unlocked(listen_comm)); }

/* A blocking accept (v4) waits for a connect, at most LB_ACCEPT_WAIT_S. */
ncclResult_t lb_accept(void* listen_comm, int blocking, void** recv_comm) {
  pthread_mutex_lock(&g_lock);
  if (blocking) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += LB_ACCEPT_WAIT_S;
    lb_listener* l = listen_comm;
    int rc = 0;
    while (l != NULL && l->npending == 0 && rc != ETIMEDOUT)
      rc = pthread_cond_timedwait(&g_connected, &g_lock, &until);
  }
  ncclResult_t r = accept_unlocked(listen_comm, blocking, recv_comm);
  pthread_mutex_unlock(&g_lock);
  return r;
}
