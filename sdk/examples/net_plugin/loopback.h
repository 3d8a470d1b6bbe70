/* What loopback_net.c (control path) and loopback_data.c (data path) share.
 * Not installed anywhere: internal to the example plugin. */
#ifndef LOOPBACK_H
#define LOOPBACK_H

#include <nccom/net_v6.h>

#include <pthread.h>

#define LB_HANDLE_MAGIC 0x4c4f4f504241434bull /* "LOOPBACK" */
#define LB_COMM_MAGIC 0x6c62636du
#define LB_BACKLOG 64 /* connects waiting for accept, per listener */

enum lb_kind { LB_LISTEN, LB_SEND, LB_RECV };
enum lb_state { LB_FREE, LB_POSTED, LB_DONE, LB_FAILED };

struct lb_comm;

struct lb_request {
  struct lb_comm* comm;
  enum lb_state state;
  void* data;
  int size; /* send: bytes to send; receive: buffer size */
  int tag;
  int moved; /* bytes that arrived, once done */
  unsigned long long seq;
  ncclResult_t error;
};

struct lb_conn {
  pthread_mutex_t lock;
  unsigned long long next_seq;
  struct lb_comm *send_end, *recv_end; /* NULL once closed (recv: until accepted) */
  int accepted;                        /* a recv end was made */
  int orphaned;                        /* its listener closed before accepting it */
};

struct lb_comm {
  unsigned magic;
  enum lb_kind kind;
  struct lb_conn* conn;                              /* send and recv comms */
  struct lb_request requests[NCCL_NET_MAX_REQUESTS]; /* send and recv comms */
  unsigned long long listener_id;                    /* listen comms */
  struct lb_conn* backlog[LB_BACKLOG];
  int backlog_len;
  struct lb_comm* next_listener;
};

struct lb_handle {
  unsigned long long magic, pid, listener_id;
};

extern ncclDebugLogger_t lb_log; /* the host's logger, from init */

#define LB_WARN(...)                                                                      \
  do {                                                                                    \
    if (lb_log != NULL) lb_log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

static inline struct lb_comm* lb_comm_of(void* p, enum lb_kind kind) {
  struct lb_comm* c = (struct lb_comm*)p;
  return c != NULL && c->magic == LB_COMM_MAGIC && c->kind == kind ? c : NULL;
}

/* The data path (loopback_data.c). */
ncclResult_t lb_isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                      void** request);
ncclResult_t lb_irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                      void** request);
ncclResult_t lb_iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                       void** request);
ncclResult_t lb_test(void* request, int* done, int* sizes);

#endif /* LOOPBACK_H */
