/* A TCP net plugin written the way third-party plugins are, not the way
 * nccom's own are: one source built in the layouts nccom accepts (Neuron
 * ncclNet_v4, v5, v6; NVIDIA v6), with the behaviours real plugins have and
 * the host must survive, chosen by TPN_BEHAVIOUR (a comma list) at init:
 *
 *   block_accept    accept waits in accept(2) until a peer connects (the v4
 *                   contract; NCCL's own socket code before v5)
 *   block_connect   connect waits until the peer's accept has taken the
 *                   connection (the acceptor sends one byte back)
 *   in_order_test   test of any request but the oldest pending one of its
 *                   comm fails: "test called with invalid request" (a plugin
 *                   that, like NCCL's proxy, relies on posting order)
 *   out_of_order    even-numbered requests of a comm report done only after
 *                   the next one did (or after 3 more tests)
 *   never_complete  test never reports a request done
 *   hang_connect    connect never returns (a plugin stuck inside a call)
 *   init_fails      init fails with ncclSystemError (no usable hardware)
 *   sizes_unset     test never writes the received size (NCCL of the NVIDIA
 *                   layouts read it only to size a GPU flush, so plugins
 *                   written for it may leave it)
 *   full_is_error   a post beyond the pool of TPN_MAX_REQUESTS fails with
 *                   ncclInternalError instead of answering a NULL request
 *   devices_null_crash  devices(NULL) writes through the NULL pointer (a
 *                   plugin that never checks its arguments): SIGSEGV
 *   test_null_hang  test(NULL) never returns (a plugin that waits for a
 *                   request that cannot complete)
 *   isend_fails     every isend fails with ncclSystemError after a WARN (a
 *                   plugin whose device went away between setup and data)
 *
 * A v4 build always blocks in accept and connect (its contract); the other
 * builds are non-blocking unless told. Data: one TCP connection per comm,
 * each message a 4-byte length and the payload, progressed only inside test
 * (no threads), in posting order. Listens on 127.0.0.1 (TPN_ADDR overrides).
 */
#define _GNU_SOURCE
#include <nccom/net_v4.h>
#include <nccom/net_v5.h>
#include <nccom/net_v6.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#if defined(TPN_NVIDIA_V6)
#include "../../../host/net/plugins/nvidia_tables.h"
#endif

#if defined(TPN_NEURON_V4)
#define TPN_LAYOUT "Neuron ncclNet_v4"
#define TPN_V4 1
#elif defined(TPN_NEURON_V5)
#define TPN_LAYOUT "Neuron ncclNet_v5"
#elif defined(TPN_NEURON_V6)
#define TPN_LAYOUT "Neuron ncclNet_v6"
#elif defined(TPN_NVIDIA_V6)
#define TPN_LAYOUT "NVIDIA ncclNet_v6"
#else
#error "build with one of TPN_NEURON_V4, TPN_NEURON_V5, TPN_NEURON_V6, TPN_NVIDIA_V6"
#endif

#define TPN_EXPORT __attribute__((visibility("default")))
#define TPN_UNUSED __attribute__((unused)) /* not every layout has every slot */
#define TPN_MAGIC 0x54504e31u              /* "TPN1" */
#define TPN_MAX_REQUESTS 8                 /* outstanding per comm, as NCCL_NET_MAX_REQUESTS */

static ncclDebugLogger_t g_log;
static int g_block_accept, g_block_connect, g_in_order, g_out_of_order, g_never, g_hang_connect;
static int g_sizes_unset, g_full_is_error, g_devices_null_crash, g_test_null_hang, g_isend_fails;

#define WARN(...)                                                               \
  do {                                                                          \
    if (g_log) g_log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define INFO(...)                                                               \
  do {                                                                          \
    if (g_log) g_log(NCCL_LOG_INFO, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

/* The handle: where to connect, whether this side wants the ack, and the
 * connect stage of a non-blocking connect (kept in the handle between calls,
 * as NCCL's socket code keeps it). */
struct handle {
  uint32_t magic;
  uint16_t port; /* network order */
  uint16_t unused;
  uint32_t addr;  /* network order */
  int32_t fd;     /* non-blocking connect in progress: its socket, else -1 */
  uint32_t stage; /* 0 not started, 1 connecting */
};

struct listen_comm {
  int fd;
};

enum { REQ_FREE = 0, REQ_SEND, REQ_RECV };
struct comm;
struct request {
  int kind;
  int index; /* posting number within the comm */
  struct comm* comm;
  char* data;
  int size;        /* posted size; for a receive, the actual size once known */
  uint32_t header; /* the length word, in network order */
  int header_done; /* header bytes moved */
  int data_done;   /* payload bytes moved */
  int transferred; /* all bytes moved */
  int tests_after; /* tests since transferred (out_of_order) */
};

struct comm {
  int fd;
  int next_index;
  struct request reqs[TPN_MAX_REQUESTS]; /* a ring in posting order */
  int head, count;
};

static int env_has(const char* list, const char* word) {
  size_t n = strlen(word);
  for (const char* p = list; p && *p;) {
    const char* end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, word, n) == 0) return 1;
    p = end ? end + 1 : NULL;
  }
  return 0;
}

static ncclResult_t tpn_init(ncclDebugLogger_t logger) {
  g_log = logger;
  const char* b = getenv("TPN_BEHAVIOUR");
  g_block_accept = env_has(b, "block_accept");
  g_block_connect = env_has(b, "block_connect");
  g_in_order = env_has(b, "in_order_test");
  g_out_of_order = env_has(b, "out_of_order");
  g_never = env_has(b, "never_complete");
  g_hang_connect = env_has(b, "hang_connect");
  g_sizes_unset = env_has(b, "sizes_unset");
  g_full_is_error = env_has(b, "full_is_error");
  g_devices_null_crash = env_has(b, "devices_null_crash");
  g_test_null_hang = env_has(b, "test_null_hang");
  g_isend_fails = env_has(b, "isend_fails");
  if (env_has(b, "init_fails")) {
    WARN("TPN/" TPN_LAYOUT ": init fails (TPN_BEHAVIOUR=init_fails)");
    return ncclSystemError;
  }
#ifdef TPN_V4
  g_block_accept = g_block_connect = 1;
#endif
  INFO("TPN/" TPN_LAYOUT ": init (%s%s%s%s%s%s%s%s%s%s%s)", g_block_accept ? " block_accept" : "",
       g_block_connect ? " block_connect" : "", g_in_order ? " in_order_test" : "",
       g_out_of_order ? " out_of_order" : "", g_never ? " never_complete" : "",
       g_hang_connect ? " hang_connect" : "", g_sizes_unset ? " sizes_unset" : "",
       g_full_is_error ? " full_is_error" : "", g_devices_null_crash ? " devices_null_crash" : "",
       g_test_null_hang ? " test_null_hang" : "", g_isend_fails ? " isend_fails" : "");
  return ncclSuccess;
}

TPN_UNUSED static ncclResult_t tpn_fini(void) { return ncclSuccess; }

static ncclResult_t tpn_devices(int* ndev) {
  if (g_devices_null_crash) {
    *ndev = 1; /* unchecked: devices(NULL) dies of SIGSEGV */
    return ncclSuccess;
  }
  if (!ndev) return ncclInvalidArgument;
  *ndev = 1;
  return ncclSuccess;
}

static char g_name[] = "tpn0";

static ncclResult_t props_common(int dev, char** name, int* ptr, int* speed, int* port,
                                 int* max_comms) {
  if (dev != 0) return ncclInvalidArgument;
  *name = g_name;
  *ptr = NCCL_PTR_HOST;
  *speed = 10000;
  *port = 0;
  *max_comms = 65536;
  return ncclSuccess;
}

#if defined(TPN_NVIDIA_V6)
static ncclResult_t tpn_props(int dev, nv_properties_v6_t* p) {
  if (!p) return ncclInvalidArgument;
  memset(p, 0, sizeof *p);
  p->maxRecvs = 1;
  return props_common(dev, &p->name, &p->ptrSupport, &p->speed, &p->port, &p->maxComms);
}
#elif defined(TPN_V4)
static ncclResult_t tpn_props(int dev, ncclNetProperties_v4_t* p) {
  if (!p) return ncclInvalidArgument;
  memset(p, 0, sizeof *p);
  return props_common(dev, &p->name, &p->ptrSupport, &p->speed, &p->port, &p->maxComms);
}
#else
static ncclResult_t tpn_props(int dev, ncclNetProperties_v6_t* p) {
  if (!p) return ncclInvalidArgument;
  memset(p, 0, sizeof *p);
  p->maxRecvs = 1;
  return props_common(dev, &p->name, &p->ptrSupport, &p->speed, &p->port, &p->maxComms);
}
#endif

static int write_all(int fd, const void* buf, size_t n) {
  const char* p = buf;
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, void* buf, size_t n) {
  char* p = buf;
  while (n > 0) {
    ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static ncclResult_t tpn_listen(int dev, void* opaque, void** listen_comm) {
  if (dev != 0 || !opaque || !listen_comm) return ncclInvalidArgument;
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  const char* addr = getenv("TPN_ADDR");
  if (inet_pton(AF_INET, addr ? addr : "127.0.0.1", &sa.sin_addr) != 1) {
    WARN("TPN: TPN_ADDR \"%s\" is not an IPv4 address", addr);
    return ncclInvalidArgument;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ncclSystemError;
  socklen_t len = sizeof sa;
  if (bind(fd, (struct sockaddr*)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, (struct sockaddr*)&sa, &len) != 0) {
    WARN("TPN: listen failed: %s", strerror(errno));
    close(fd);
    return ncclSystemError;
  }
  struct listen_comm* l = calloc(1, sizeof *l);
  if (!l) {
    close(fd);
    return ncclSystemError;
  }
  l->fd = fd;
  struct handle h = {TPN_MAGIC, sa.sin_port, 0, sa.sin_addr.s_addr, -1, 0};
  memcpy(opaque, &h, sizeof h);
  *listen_comm = l;
  return ncclSuccess;
}

/* The comm of a connected socket, handed out through *out (the socket is
 * closed when that fails). */
static ncclResult_t hand_out(int fd, void** out) {
  struct comm* c = calloc(1, sizeof *c);
  if (!c) {
    close(fd);
    return ncclSystemError;
  }
  c->fd = fd;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  *out = c;
  return ncclSuccess;
}

/* The hello: magic, then whether the connector waits for the ack byte. */
static ncclResult_t finish_connect(int fd, void** send_comm) {
  uint32_t hello[2] = {TPN_MAGIC, (uint32_t)g_block_connect};
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (write_all(fd, hello, sizeof hello) != 0) {
    WARN("TPN: connect: sending the hello failed: %s", strerror(errno));
    close(fd);
    return ncclSystemError;
  }
  if (g_block_connect) {
    char ack;
    if (read_all(fd, &ack, 1) != 0) {
      WARN("TPN: connect: the acceptor closed before its ack");
      close(fd);
      return ncclSystemError;
    }
  }
  return hand_out(fd, send_comm);
}

static ncclResult_t tpn_connect(int dev, void* opaque, void** send_comm) {
  if (dev != 0 || !opaque || !send_comm) return ncclInvalidArgument;
  *send_comm = NULL;
  if (g_hang_connect) {
    for (;;) pause(); /* stuck inside the plugin until the process ends */
  }
  struct handle h;
  memcpy(&h, opaque, sizeof h);
  if (h.magic != TPN_MAGIC) {
    WARN("TPN: connect: the handle is not a TPN handle (magic 0x%x)", h.magic);
    return ncclInvalidArgument;
  }
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = h.port;
  sa.sin_addr.s_addr = h.addr;
  const int blocking = g_block_connect;
  if (h.stage == 0) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (blocking ? 0 : SOCK_NONBLOCK), 0);
    if (fd < 0) return ncclSystemError;
    int rc = connect(fd, (struct sockaddr*)&sa, sizeof sa);
    if (rc != 0 && !(errno == EINPROGRESS && !blocking)) {
      WARN("TPN: connect to port %d failed: %s", ntohs(h.port), strerror(errno));
      close(fd);
      return ncclSystemError;
    }
    if (blocking) return finish_connect(fd, send_comm);
    h.fd = fd;
    h.stage = 1;
    memcpy(opaque, &h, sizeof h);
    return ncclSuccess; /* NULL: call again */
  }
  struct pollfd p = {h.fd, POLLOUT, 0};
  if (poll(&p, 1, 0) == 0) return ncclSuccess;
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(h.fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    WARN("TPN: connect to port %d failed: %s", ntohs(h.port), strerror(err));
    close(h.fd);
    return ncclSystemError;
  }
  h.stage = 0;
  int fd = h.fd;
  h.fd = -1;
  memcpy(opaque, &h, sizeof h);
  return finish_connect(fd, send_comm);
}

static ncclResult_t tpn_accept(void* listen_comm, void** recv_comm) {
  if (!listen_comm || !recv_comm) return ncclInvalidArgument;
  *recv_comm = NULL;
  struct listen_comm* l = listen_comm;
  if (!g_block_accept) {
    struct pollfd p = {l->fd, POLLIN, 0};
    if (poll(&p, 1, 0) == 0) return ncclSuccess; /* NULL: call again */
  }
  int fd;
  do fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    WARN("TPN: accept failed: %s", strerror(errno));
    return ncclSystemError;
  }
  uint32_t hello[2];
  if (read_all(fd, hello, sizeof hello) != 0 || hello[0] != TPN_MAGIC) {
    WARN("TPN: accept: the connector sent no TPN hello");
    close(fd);
    return ncclSystemError;
  }
  if (hello[1] != 0 && write_all(fd, "A", 1) != 0) {
    close(fd);
    return ncclSystemError;
  }
  return hand_out(fd, recv_comm);
}

static int g_mr;
static ncclResult_t tpn_reg(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (!comm || !mhandle) return ncclInvalidArgument;
  if (type != NCCL_PTR_HOST) return ncclInvalidArgument;
  *mhandle = &g_mr;
  return ncclSuccess;
}
TPN_UNUSED static ncclResult_t tpn_reg_int(void* comm, void* data, int size, int type,
                                           void** mhandle) {
  return tpn_reg(comm, data, (size_t)size, type, mhandle);
}
static ncclResult_t tpn_dereg(void* comm, void* mhandle) {
  return comm && mhandle == &g_mr ? ncclSuccess : ncclInvalidArgument;
}

static ncclResult_t post(struct comm* c, int kind, void* data, int size, void** request) {
  if (!c || !request || size < 0) return ncclInvalidArgument;
  *request = NULL;
  if (c->count == TPN_MAX_REQUESTS) {
    if (!g_full_is_error) return ncclSuccess; /* NULL: call again */
    WARN("TPN: no free request: %d requests in flight on this comm", TPN_MAX_REQUESTS);
    return ncclInternalError;
  }
  struct request* r = &c->reqs[(c->head + c->count) % TPN_MAX_REQUESTS];
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->index = c->next_index++;
  r->comm = c;
  r->data = data;
  r->size = size;
  r->header = htonl((uint32_t)size);
  c->count++;
  *request = r;
  return ncclSuccess;
}

static ncclResult_t send_refused(void) {
  WARN("TPN: isend fails: the device went away (TPN_BEHAVIOUR=isend_fails)");
  return ncclSystemError;
}
TPN_UNUSED static ncclResult_t tpn_isend4(void* comm, void* data, int size, void* mh,
                                          void** request) {
  if (g_isend_fails) return send_refused();
  return post(comm, REQ_SEND, data, size, request);
}
TPN_UNUSED static ncclResult_t tpn_isend(void* comm, void* data, int size, int tag, void* mh,
                                         void** request) {
  if (g_isend_fails) return send_refused();
  return post(comm, REQ_SEND, data, size, request);
}
TPN_UNUSED static ncclResult_t tpn_irecv4(void* comm, void* data, int size, void* mh,
                                          void** request) {
  return post(comm, REQ_RECV, data, size, request);
}
TPN_UNUSED static ncclResult_t tpn_irecv(void* comm, int n, void** data, int* sizes, int* tags,
                                         void** mh, void** request) {
  if (n != 1 || !data || !sizes) return ncclInvalidArgument;
  return post(comm, REQ_RECV, data[0], sizes[0], request);
}

/* Moves what the socket takes of one request; -1 on a broken connection. */
static int progress(struct request* r) {
  int fd = r->comm->fd;
  while (r->header_done < 4) {
    char* h = (char*)&r->header + r->header_done;
    ssize_t n = r->kind == REQ_SEND ? send(fd, h, 4 - r->header_done, MSG_DONTWAIT | MSG_NOSIGNAL)
                                    : recv(fd, h, 4 - r->header_done, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (n <= 0) return -1;
    r->header_done += (int)n;
    if (r->header_done == 4 && r->kind == REQ_RECV) {
      uint32_t size = ntohl(r->header);
      if (size > (uint32_t)r->size) {
        WARN("TPN: a message of %u bytes arrived for a receive of %d bytes", size, r->size);
        return -1;
      }
      r->size = (int)size;
    }
  }
  while (r->data_done < r->size) {
    ssize_t n =
        r->kind == REQ_SEND
            ? send(fd, r->data + r->data_done, (size_t)(r->size - r->data_done),
                   MSG_DONTWAIT | MSG_NOSIGNAL)
            : recv(fd, r->data + r->data_done, (size_t)(r->size - r->data_done), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (n <= 0) return -1;
    r->data_done += (int)n;
  }
  r->transferred = 1;
  return 0;
}

static ncclResult_t tpn_test(void* request, int* done, int* size) {
  struct request* r = request;
  if (!r && g_test_null_hang) {
    for (;;) pause(); /* waits for a request that cannot complete */
  }
  if (!r || !done || r->kind == REQ_FREE) {
    WARN("TPN: test called with invalid request %p", request);
    return ncclInternalError;
  }
  struct comm* c = r->comm;
  struct request* oldest = &c->reqs[c->head];
  if (g_in_order && r != oldest) {
    WARN(
        "TPN: test called with invalid request (request %d of its comm; the oldest pending is "
        "%d): requests must be tested in posting order",
        r->index, oldest->index);
    return ncclInternalError;
  }
  *done = 0;
  /* The stream carries messages in posting order: progress everything up
   * to and including this request. */
  for (int k = 0; k < c->count; ++k) {
    struct request* q = &c->reqs[(c->head + k) % TPN_MAX_REQUESTS];
    if (!q->transferred && progress(q) != 0) {
      WARN("TPN: request %d: the connection broke: %s", q->index,
           errno ? strerror(errno) : "closed by the peer");
      return ncclSystemError;
    }
    if (!q->transferred || q == r) break;
  }
  if (!r->transferred || g_never) return ncclSuccess;
  if (g_out_of_order && r->index % 2 == 0) {
    /* Reported after the next request of the comm, or after 3 more tests. */
    struct request* next = NULL;
    for (int k = 0; k < c->count; ++k) {
      struct request* q = &c->reqs[(c->head + k) % TPN_MAX_REQUESTS];
      if (q->index == r->index + 1) next = q;
    }
    int next_reported = (next == NULL || next->kind == REQ_FREE) && r->index + 1 < c->next_index;
    if (!next_reported && r->tests_after++ < 3) return ncclSuccess;
  }
  *done = 1;
  if (size && !g_sizes_unset) *size = r->size;
  /* Free it; the ring keeps posting order for what is left. */
  r->kind = REQ_FREE;
  while (c->count > 0 && c->reqs[c->head].kind == REQ_FREE) {
    c->head = (c->head + 1) % TPN_MAX_REQUESTS;
    c->count--;
  }
  return ncclSuccess;
}

static ncclResult_t close_comm(void* comm) {
  struct comm* c = comm;
  if (!c) return ncclInvalidArgument;
  close(c->fd);
  free(c);
  return ncclSuccess;
}

static ncclResult_t tpn_close_listen(void* listen_comm) {
  struct listen_comm* l = listen_comm;
  if (!l) return ncclInvalidArgument;
  close(l->fd);
  free(l);
  return ncclSuccess;
}

#if defined(TPN_NEURON_V4)
TPN_EXPORT const ncclNet_v4_t ncclNetPlugin_v4 = {
    "TPN",      tpn_init,   tpn_devices, tpn_props,       tpn_listen, tpn_connect,
    tpn_accept, tpn_reg,    tpn_dereg,   tpn_isend4,      tpn_irecv4, NULL,
    tpn_test,   close_comm, close_comm,  tpn_close_listen};
#elif defined(TPN_NEURON_V5)
TPN_EXPORT const ncclNet_v5_t ncclNetPlugin_v5 = {.name = "TPN",
                                                  .init = tpn_init,
                                                  .devices = tpn_devices,
                                                  .getProperties = tpn_props,
                                                  .listen = tpn_listen,
                                                  .connect = tpn_connect,
                                                  .accept = tpn_accept,
                                                  .regMr = tpn_reg,
                                                  .deregMr = tpn_dereg,
                                                  .isend = tpn_isend,
                                                  .irecv = tpn_irecv,
                                                  .test = tpn_test,
                                                  .closeSend = close_comm,
                                                  .closeRecv = close_comm,
                                                  .closeListen = tpn_close_listen};
#elif defined(TPN_NEURON_V6)
TPN_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {.name = "TPN",
                                                  .init = tpn_init,
                                                  .fini = tpn_fini,
                                                  .devices = tpn_devices,
                                                  .getProperties = tpn_props,
                                                  .listen = tpn_listen,
                                                  .connect = tpn_connect,
                                                  .accept = tpn_accept,
                                                  .regMr = tpn_reg,
                                                  .deregMr = tpn_dereg,
                                                  .isend = tpn_isend,
                                                  .irecv = tpn_irecv,
                                                  .test = tpn_test,
                                                  .closeSend = close_comm,
                                                  .closeRecv = close_comm,
                                                  .closeListen = tpn_close_listen};
#elif defined(TPN_NVIDIA_V6)
TPN_EXPORT const nv_net_v6_t ncclNetPlugin_v6 = {.name = "TPN",
                                                 .init = tpn_init,
                                                 .devices = tpn_devices,
                                                 .getProperties = tpn_props,
                                                 .listen = tpn_listen,
                                                 .connect = tpn_connect,
                                                 .accept = tpn_accept,
                                                 .regMr = tpn_reg_int,
                                                 .deregMr = tpn_dereg,
                                                 .isend = tpn_isend,
                                                 .irecv = tpn_irecv,
                                                 .test = tpn_test,
                                                 .closeSend = close_comm,
                                                 .closeRecv = close_comm,
                                                 .closeListen = tpn_close_listen};
#endif
