/* What tcp_setup.c (the control path) and tcp_data.c (the data path) share:
 * the handle, the wire format, the comm and request records.
 * Internal to the example plugin; nothing here is installed.
 *
 * One TCP connection per comm pair: the connector's socket is its send
 * comm, the acceptor's socket its recv comm. Data flows one way only, as
 * messages: an 8-byte header (tag, size; both in network byte order) and
 * then `size` payload bytes. */
#ifndef TCP_NET_H
#define TCP_NET_H

#include <nccom/net_v6.h>

#include <stddef.h>
#include <stdint.h>

/* The table's name: the host's log line "NET/Plugin: using TcpExample
 * (Neuron ncclNet_v6) from ..." and nccom-plugin-check's report show it. */
#define TCP_NET_NAME "TcpExample"

#define TCP_HANDLE_MAGIC 0x5443504578616d31ull /* "TCPExam1": a handle of this plugin */
#define TCP_HELLO_MAGIC 0x54435048u            /* "TCPH": the connector's first bytes */
#define TCP_WIRE_VERSION 1u
#define TCP_HEADER_BYTES 8 /* per message: tag, size */

/* What listen writes into the host's NCCL_NET_HANDLE_MAXSIZE-byte handle and
 * connect reads back. The host carries the handle to the peer as opaque
 * bytes, and hands connect the same buffer on every "call again", so a
 * non-blocking connect keeps its progress here (`attempt`). */
struct tcp_handle {
  uint64_t magic;       /* TCP_HANDLE_MAGIC; anything else is refused */
  uint32_t addr;        /* the listener's IPv4 address, network order */
  uint16_t port;        /* the listener's port, network order */
  uint16_t version;     /* TCP_WIRE_VERSION */
  uint32_t attempt_pid; /* the process whose connect attempt `attempt` is */
  uint32_t attempt;     /* 0: connect not started; else the attempt in progress */
};
NCCOM_NET_ASSERT(sizeof(struct tcp_handle) <= NCCL_NET_HANDLE_MAXSIZE, tcp_handle_fits);

enum tcp_kind { TCP_SEND_COMM = 1, TCP_RECV_COMM = 2 };

/* A request's life: FREE in the pool -> POSTED by isend/irecv -> (a receive
 * that a message was matched to: ACTIVE) -> DONE or FAILED -> FREE again when
 * test reports it. */
enum tcp_state { TCP_FREE = 0, TCP_POSTED, TCP_ACTIVE, TCP_DONE, TCP_FAILED };

struct tcp_comm;

struct tcp_request {
  struct tcp_comm* comm;
  enum tcp_state state;
  int tag;
  char* data;
  int size;                            /* send: message bytes; receive: buffer capacity */
  int received;                        /* receive: bytes of the matched message */
  size_t moved;                        /* bytes moved so far (send: header included) */
  unsigned long long seq;              /* posting order, for per-tag matching */
  unsigned char hdr[TCP_HEADER_BYTES]; /* send: this message's header */
  ncclResult_t error;                  /* TCP_FAILED: what test answers */
};

#define TCP_COMM_MAGIC 0x636f6d6du /* "comm" */

struct tcp_comm {
  uint32_t magic;
  enum tcp_kind kind;
  int fd; /* non-blocking, TCP_NODELAY */
  /* Set once the connection is unusable; every later call fails with it. */
  ncclResult_t broken;
  char why[192];
  unsigned long long next_seq;
  /* The bounded pool: at most NCCL_NET_MAX_REQUESTS in flight per comm;
   * when all are taken, isend/irecv answer a NULL request. */
  struct tcp_request reqs[NCCL_NET_MAX_REQUESTS];

  /* Send comm: posted sends not yet fully written, in posting order. */
  struct tcp_request* queue[NCCL_NET_MAX_REQUESTS];
  int queue_head, queue_len;

  /* Recv comm: where the incoming byte stream stands. */
  unsigned char hdr[TCP_HEADER_BYTES]; /* the next message's header */
  int hdr_got;                         /* bytes of it read */
  struct tcp_request* current;         /* the receive the payload goes to */
  size_t discard;                      /* payload bytes to drop (a failed receive) */
  int peer_closed;                     /* the sender closed at a message boundary */
};

/* The host's logger, from init (NULL before init and after fini). */
extern ncclDebugLogger_t tcp_log;

#define PLUGIN_WARN(...)                                                                    \
  do {                                                                                      \
    if (tcp_log != NULL) tcp_log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define PLUGIN_INFO(flags, ...)                                                            \
  do {                                                                                     \
    if (tcp_log != NULL) tcp_log(NCCL_LOG_INFO, (flags), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

/* `p` as a comm of `kind`, or NULL when it is NULL or the other kind of comm:
 * the plugin then answers ncclInvalidArgument instead of crashing. (A comm
 * after its close is freed memory: nccom never passes one.) */
static inline struct tcp_comm* tcp_comm_of(void* p, enum tcp_kind kind) {
  struct tcp_comm* c = (struct tcp_comm*)p;
  return c != NULL && c->magic == TCP_COMM_MAGIC && c->kind == kind ? c : NULL;
}

/* tcp_data.c: a comm around a connected socket (NULL when out of memory),
 * and the data-path slots of the table. */
struct tcp_comm* tcp_comm_new(enum tcp_kind kind, int fd);
ncclResult_t tcp_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t tcp_dereg_mr(void* comm, void* mhandle);
ncclResult_t tcp_isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                       void** request);
ncclResult_t tcp_irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                       void** request);
ncclResult_t tcp_iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                        void** request);
ncclResult_t tcp_test(void* request, int* done, int* sizes);

#endif /* TCP_NET_H */
