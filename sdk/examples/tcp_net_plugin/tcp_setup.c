/* A TCP net plugin built against the nccom SDK, in the Neuron ncclNet_v6
 * layout (<nccom/net_v6.h>): an example to learn the contract from, and a
 * working network between processes and machines.
 *
 * This file is the control path — init/fini, devices, properties,
 * listen/connect/accept, close — the knob the plugin declares, and the two
 * symbols it exports. tcp_data.c moves the data.
 *
 * What nccom relies on (and nccom-plugin-check checks):
 *  - every slot returns an ncclResult_t; bad arguments (NULL pointers, a
 *    device out of range, a handle that is not ours) are errors, never
 *    crashes;
 *  - listen/connect/accept never block: connect and accept answer
 *    ncclSuccess with a NULL comm ("not yet, call again") until the
 *    connection is made, and the host bounds how long it keeps calling;
 *  - nccom never calls into one comm (or one handle, one listen comm) from
 *    two threads at once, but calls on different ones may come from
 *    different threads at the same time: state shared between comms needs
 *    a lock;
 *  - fini comes once, after every comm was closed.
 */
#include "tcp_net.h"

#include <nccom/net_config.h>
#include <nccom/plugin.h> /* NCCOM_PLUGIN_EXPORT */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

ncclDebugLogger_t tcp_log;

/* ---- the knob ----------------------------------------------------------
 * A net plugin of the ncclNet layout declares knobs by exporting
 * nccomNetConfig (<nccom/net_config.h>). The host resolves them from
 * [plugins.tcp_example] in its configuration file, the active cluster's
 * section and the environment, refuses bad values naming the key and where
 * the value came from, and calls configure() once, before init. A plugin
 * must also work when nobody configures it (nccom-plugin-check binds the
 * table alone): then the defaults apply. */

static const char* const tcp_address_env[] = {"NCCOM_TCP_EXAMPLE_ADDRESS", NULL};
static const nccom_knob_t tcp_knobs[] = {
    /* key, type, flags, default, help, min, max, enum names, environment */
    {"address", NCCOM_KNOB_STRING, 0, "127.0.0.1",
     "IPv4 address, dotted, this process listens on and hands to its peers. Every host sets its "
     "own address on the network the hosts share; the default reaches only processes of this "
     "machine.",
     0, 0, NULL, tcp_address_env},
};
static const nccom_knob_table_t tcp_knob_table = NCCOM_KNOB_TABLE(tcp_knobs);

static pthread_mutex_t tcp_lock = PTHREAD_MUTEX_INITIALIZER; /* what follows */
static uint32_t tcp_address = INADDR_LOOPBACK; /* host byte order; the knob's default */

/* Called by the host once, before init, with the resolved values. Only
 * fields the host API's struct_size covers may be read. A value the knob's
 * type admits but the plugin cannot use is refused with one sentence in
 * `why`; the host's error quotes it with the value's source. */
static nccom_plugin_status_t tcp_configure(const nccom_host_api_t* host, char* why,
                                           size_t why_size) {
  if (host == NULL ||
      host->struct_size < offsetof(nccom_host_api_t, host_ctx) + sizeof host->host_ctx ||
      host->config_get == NULL) {
    snprintf(why, why_size, "the host API offers no config_get; %s cannot read its knobs",
             TCP_NET_NAME);
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  const char* text = host->config_get(host->host_ctx, "address");
  struct in_addr address;
  if (text == NULL || inet_pton(AF_INET, text, &address) != 1) {
    snprintf(why, why_size, "address \"%s\" is not an IPv4 address in dotted form (a.b.c.d)",
             text != NULL ? text : "");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  pthread_mutex_lock(&tcp_lock);
  tcp_address = ntohl(address.s_addr);
  pthread_mutex_unlock(&tcp_lock);
  return NCCOM_PLUGIN_OK;
}

/* The second exported symbol: the section name, the knobs, configure. */
NCCOM_PLUGIN_EXPORT const nccom_net_config_t nccomNetConfig = {
    sizeof(nccom_net_config_t), NCCOM_NET_CONFIG_ABI_VERSION, "tcp_example", &tcp_knob_table,
    tcp_configure};

/* ---- connect attempts --------------------------------------------------
 * A non-blocking connect spans several connect calls. Its state lives here,
 * in a table of this process, and the handle carries only the attempt's id:
 * a handle is bytes from the network, so the plugin never trusts a pointer
 * or a file descriptor found in one. fini closes attempts a caller gave up
 * on. */

struct tcp_attempt {
  uint32_t id;
  int fd;
  struct sockaddr_in to;
  size_t hello_sent;
  struct tcp_attempt* next;
};

static struct tcp_attempt* tcp_attempts; /* under tcp_lock */
static uint32_t tcp_next_attempt = 1;

/* Takes the attempt out of the table (so no other caller can use it while
 * this one works on it); NULL when there is none. */
static struct tcp_attempt* tcp_attempt_take(uint32_t id) {
  pthread_mutex_lock(&tcp_lock);
  struct tcp_attempt** link = &tcp_attempts;
  while (*link != NULL && (*link)->id != id) link = &(*link)->next;
  struct tcp_attempt* a = *link;
  if (a != NULL) *link = a->next;
  pthread_mutex_unlock(&tcp_lock);
  return a;
}

static void tcp_attempt_put(struct tcp_attempt* a) {
  pthread_mutex_lock(&tcp_lock);
  a->next = tcp_attempts;
  tcp_attempts = a;
  pthread_mutex_unlock(&tcp_lock);
}

/* ---- init, fini, devices, properties ----------------------------------- */

/* init: called once, before any other slot of the table (and after
 * configure, when the host configures the plugin). Keep the logger; log only
 * through it (a plugin never prints). */
static ncclResult_t tcp_init(ncclDebugLogger_t logger) {
  tcp_log = logger;
  char address[INET_ADDRSTRLEN] = "";
  struct in_addr in;
  pthread_mutex_lock(&tcp_lock);
  in.s_addr = htonl(tcp_address);
  pthread_mutex_unlock(&tcp_lock);
  inet_ntop(AF_INET, &in, address, sizeof address);
  PLUGIN_INFO(NCCL_INIT | NCCL_NET, "NET/" TCP_NET_NAME ": ready, listening on %s", address);
  return ncclSuccess;
}

/* fini: after every comm was closed. Release what is left (connect
 * attempts whose caller gave up). */
static ncclResult_t tcp_fini(void) {
  pthread_mutex_lock(&tcp_lock);
  while (tcp_attempts != NULL) {
    struct tcp_attempt* a = tcp_attempts;
    tcp_attempts = a->next;
    close(a->fd);
    free(a);
  }
  pthread_mutex_unlock(&tcp_lock);
  tcp_log = NULL;
  return ncclSuccess;
}

/* One device: the configured address. A plugin with several NICs reports
 * each, and every other slot's `dev` selects one. */
static ncclResult_t tcp_devices(int* ndev) {
  if (ndev == NULL) return ncclInvalidArgument;
  *ndev = 1;
  return ncclSuccess;
}

static char tcp_device_name[] = "tcp0";

static ncclResult_t tcp_get_properties(int dev, ncclNetProperties_v6_t* props) {
  if (dev != 0 || props == NULL) return ncclInvalidArgument;
  memset(props, 0, sizeof *props);
  props->name = tcp_device_name;     /* NUL-terminated, lives as long as the plugin */
  props->ptrSupport = NCCL_PTR_HOST; /* host memory only */
  props->speed = 10000;              /* Mbps, the link's speed; must be > 0 */
  props->maxComms = 65536;
  props->maxRecvs = 1;      /* irecv takes one buffer; Neuron requires 1 */
  props->rma_supported = 0; /* no getMrKey/iwrite/iwriteInline/iread: NULL slots */
  return ncclSuccess;
}

/* ---- sockets ----------------------------------------------------------- */

/* Every socket of the plugin is non-blocking (no call ever waits) and
 * close-on-exec (a child process the job starts does not inherit it). */
static int tcp_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return -1;
  return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static int tcp_stream_socket(void) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0 && tcp_nonblocking(fd) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static const char* tcp_endpoint(const struct sockaddr_in* sa, char* text, size_t size) {
  char ip[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof ip);
  snprintf(text, size, "%s:%u", ip, (unsigned)ntohs(sa->sin_port));
  return text;
}

/* A comm around a connected socket; the socket is closed when that fails. */
static struct tcp_comm* tcp_comm_around(enum tcp_kind kind, int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* small messages go at once */
  struct tcp_comm* c = tcp_comm_new(kind, fd);
  if (c == NULL) close(fd);
  return c;
}

/* ---- listen ------------------------------------------------------------
 * listen: open an endpoint on `dev` and describe it in `handle` (at most
 * NCCL_NET_HANDLE_MAXSIZE bytes). The host sends the handle to the peer,
 * which passes it to connect; the listen comm is given to accept. */

#define TCP_LISTEN_MAGIC 0x6c69736eu /* "lisn" */

struct tcp_listen_comm {
  uint32_t magic;
  int fd;
  struct sockaddr_in at;
  /* A connection accepted from the socket whose hello has not all arrived. */
  int arriving;
  struct sockaddr_in arriving_from;
  uint32_t hello[2];
  size_t hello_got;
};

static ncclResult_t tcp_listen(int dev, void* handle, void** listen_comm) {
  if (dev != 0 || handle == NULL || listen_comm == NULL) return ncclInvalidArgument;
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  pthread_mutex_lock(&tcp_lock);
  sa.sin_addr.s_addr = htonl(tcp_address);
  pthread_mutex_unlock(&tcp_lock);
  sa.sin_port = 0; /* any free port */
  char where[64];
  socklen_t len = sizeof sa;
  const int fd = tcp_stream_socket();
  if (fd < 0 || bind(fd, (struct sockaddr*)&sa, sizeof sa) != 0 || listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, (struct sockaddr*)&sa, &len) != 0) {
    const int err = errno;
    PLUGIN_WARN("NET/" TCP_NET_NAME ": listen on %s failed: %s (plugins.tcp_example.address)",
                tcp_endpoint(&sa, where, sizeof where), strerror(err));
    if (fd >= 0) close(fd);
    return ncclSystemError;
  }
  struct tcp_listen_comm* l = (struct tcp_listen_comm*)calloc(1, sizeof *l);
  if (l == NULL) {
    close(fd);
    return ncclSystemError;
  }
  l->magic = TCP_LISTEN_MAGIC;
  l->fd = fd;
  l->at = sa;
  l->arriving = -1;

  struct tcp_handle h;
  memset(&h, 0, sizeof h);
  h.magic = TCP_HANDLE_MAGIC;
  h.addr = sa.sin_addr.s_addr;
  h.port = sa.sin_port;
  h.version = TCP_WIRE_VERSION;
  memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
  memcpy(handle, &h, sizeof h);
  *listen_comm = l;
  return ncclSuccess;
}

/* ---- connect -----------------------------------------------------------
 * connect: from the peer's handle, make a send comm. Never blocks: a first
 * call starts a non-blocking TCP connect; later calls (the host calls
 * again with the same handle buffer while *send_comm is NULL) check it and
 * send the 8-byte hello. The send comm is handed out once the hello is
 * sent; the peer need not have called accept yet (its kernel queues the
 * connection). A connection that cannot be made is an error naming the
 * address, so the host's setup fails with the cause instead of timing out. */
/* The first connect call: a non-blocking TCP connect to the handle's
 * address, under a new attempt id that the handle records. */
static ncclResult_t tcp_attempt_start(struct tcp_handle* h, void* handle,
                                      struct tcp_attempt** out) {
  char where[64];
  struct tcp_attempt* a = (struct tcp_attempt*)calloc(1, sizeof *a);
  if (a == NULL) return ncclSystemError;
  a->to.sin_family = AF_INET;
  a->to.sin_addr.s_addr = h->addr;
  a->to.sin_port = h->port;
  a->fd = tcp_stream_socket();
  if (a->fd < 0 ||
      (connect(a->fd, (struct sockaddr*)&a->to, sizeof a->to) != 0 && errno != EINPROGRESS)) {
    const int err = errno;
    PLUGIN_WARN("NET/" TCP_NET_NAME ": connect to %s failed: %s",
                tcp_endpoint(&a->to, where, sizeof where), strerror(err));
    if (a->fd >= 0) close(a->fd);
    free(a);
    return ncclSystemError;
  }
  pthread_mutex_lock(&tcp_lock);
  a->id = tcp_next_attempt++;
  if (tcp_next_attempt == 0) tcp_next_attempt = 1;
  pthread_mutex_unlock(&tcp_lock);
  h->attempt = a->id;
  h->attempt_pid = (uint32_t)getpid();
  memcpy(handle, h, sizeof *h);
  *out = a;
  return ncclSuccess;
}

/* The connection's state: 0 connected with the whole hello sent,
 * TCP_NOT_YET (call again), else the errno that ended it. */
#define TCP_NOT_YET (-1)
static int tcp_attempt_step(struct tcp_attempt* a) {
  /* Connected yet? poll with timeout 0 only looks. */
  struct pollfd p = {a->fd, POLLOUT, 0};
  if (poll(&p, 1, 0) == 0) return TCP_NOT_YET;
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  const uint32_t hello[2] = {htonl(TCP_HELLO_MAGIC), htonl(TCP_WIRE_VERSION)};
  while (err == 0 && a->hello_sent < sizeof hello) {
    const ssize_t n =
        send(a->fd, (const char*)hello + a->hello_sent, sizeof hello - a->hello_sent, MSG_NOSIGNAL);
    if (n > 0) {
      a->hello_sent += (size_t)n;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return TCP_NOT_YET;
    } else if (n < 0 && errno != EINTR) {
      err = errno;
    }
  }
  return err;
}

static ncclResult_t tcp_connect(int dev, void* handle, void** send_comm) {
  if (dev != 0 || handle == NULL || send_comm == NULL) return ncclInvalidArgument;
  *send_comm = NULL;
  struct tcp_handle h;
  memcpy(&h, handle, sizeof h);
  if (h.magic != TCP_HANDLE_MAGIC || h.version != TCP_WIRE_VERSION) {
    PLUGIN_WARN("NET/" TCP_NET_NAME
                ": connect: the handle is not one of this plugin's "
                "(another plugin or version on the listening side?)");
    return ncclInvalidArgument;
  }
  struct tcp_attempt* a = NULL;
  if (h.attempt == 0) { /* the first call: start connecting */
    const ncclResult_t rc = tcp_attempt_start(&h, handle, &a);
    if (rc != ncclSuccess) return rc;
  } else { /* a later call: continue the attempt the handle names */
    if (h.attempt_pid == (uint32_t)getpid()) a = tcp_attempt_take(h.attempt);
    if (a == NULL) {
      PLUGIN_WARN("NET/" TCP_NET_NAME
                  ": connect: the handle names connect attempt %u of process "
                  "%u, which this process does not have (a handle copied after its first connect "
                  "call?)",
                  h.attempt, h.attempt_pid);
      return ncclInvalidArgument;
    }
  }
  const int err = tcp_attempt_step(a);
  if (err == TCP_NOT_YET) {
    tcp_attempt_put(a);
    return ncclSuccess; /* not yet: call again */
  }
  h.attempt = 0; /* the attempt ends here either way */
  h.attempt_pid = 0;
  memcpy(handle, &h, sizeof h);
  if (err != 0) {
    char where[64];
    PLUGIN_WARN("NET/" TCP_NET_NAME ": connect to %s failed: %s",
                tcp_endpoint(&a->to, where, sizeof where), strerror(err));
    close(a->fd);
    free(a);
    return ncclSystemError;
  }
  struct tcp_comm* c = tcp_comm_around(TCP_SEND_COMM, a->fd);
  free(a);
  if (c == NULL) return ncclSystemError;
  *send_comm = c;
  return ncclSuccess;
}

/* ---- accept ------------------------------------------------------------
 * accept: from a listen comm, make a recv comm. Never blocks: NULL until a
 * connector's whole hello has arrived. A connection that is not one of
 * this plugin's (a port scanner, a stray process) is dropped with a WARN
 * and accept goes on waiting for the real peer. */
static ncclResult_t tcp_accept(void* listen_comm, void** recv_comm) {
  struct tcp_listen_comm* l = (struct tcp_listen_comm*)listen_comm;
  if (l == NULL || l->magic != TCP_LISTEN_MAGIC || recv_comm == NULL) return ncclInvalidArgument;
  *recv_comm = NULL;
  char where[64];
  if (l->arriving < 0) {
    socklen_t len = sizeof l->arriving_from;
    const int fd = accept(l->fd, (struct sockaddr*)&l->arriving_from, &len);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ECONNABORTED) {
        return ncclSuccess; /* nobody yet: call again */
      }
      PLUGIN_WARN("NET/" TCP_NET_NAME ": accept on %s failed: %s",
                  tcp_endpoint(&l->at, where, sizeof where), strerror(err));
      return ncclSystemError;
    }
    if (tcp_nonblocking(fd) != 0) {
      PLUGIN_WARN("NET/" TCP_NET_NAME ": accept: making the socket non-blocking failed: %s",
                  strerror(errno));
      close(fd);
      return ncclSystemError;
    }
    l->arriving = fd;
    l->hello_got = 0;
  }
  while (l->hello_got < sizeof l->hello) {
    const ssize_t n =
        recv(l->arriving, (char*)l->hello + l->hello_got, sizeof l->hello - l->hello_got, 0);
    if (n > 0) {
      l->hello_got += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ncclSuccess; /* call again */
    const char* how = n == 0 ? "closed" : strerror(errno);
    PLUGIN_WARN("NET/" TCP_NET_NAME
                ": accept: a connection from %s ended before its hello (%s); "
                "dropped",
                tcp_endpoint(&l->arriving_from, where, sizeof where), how);
    close(l->arriving);
    l->arriving = -1;
    return ncclSuccess;
  }
  const int fd = l->arriving;
  l->arriving = -1;
  if (ntohl(l->hello[0]) != TCP_HELLO_MAGIC || ntohl(l->hello[1]) != TCP_WIRE_VERSION) {
    PLUGIN_WARN("NET/" TCP_NET_NAME
                ": accept: a connection from %s is not one of this plugin's "
                "(hello 0x%08x, version %u); dropped",
                tcp_endpoint(&l->arriving_from, where, sizeof where), ntohl(l->hello[0]),
                ntohl(l->hello[1]));
    close(fd);
    return ncclSuccess;
  }
  struct tcp_comm* c = tcp_comm_around(TCP_RECV_COMM, fd);
  if (c == NULL) return ncclSystemError;
  *recv_comm = c;
  return ncclSuccess;
}

/* ---- close -------------------------------------------------------------
 * The host closes every comm it made, once, after its requests finished
 * and its registrations were deregistered. Closing the socket is the whole
 * story: the peer's next read sees the end of the stream. */

static ncclResult_t tcp_close_comm(void* comm, enum tcp_kind kind) {
  struct tcp_comm* c = tcp_comm_of(comm, kind);
  if (c == NULL) return ncclInvalidArgument;
  close(c->fd);
  c->magic = 0; /* a second close is an error, not a double free */
  free(c);
  return ncclSuccess;
}

static ncclResult_t tcp_close_send(void* send_comm) {
  return tcp_close_comm(send_comm, TCP_SEND_COMM);
}

static ncclResult_t tcp_close_recv(void* recv_comm) {
  return tcp_close_comm(recv_comm, TCP_RECV_COMM);
}

static ncclResult_t tcp_close_listen(void* listen_comm) {
  struct tcp_listen_comm* l = (struct tcp_listen_comm*)listen_comm;
  if (l == NULL || l->magic != TCP_LISTEN_MAGIC) return ncclInvalidArgument;
  if (l->arriving >= 0) close(l->arriving);
  close(l->fd);
  l->magic = 0;
  free(l);
  return ncclSuccess;
}

/* ---- the table ---------------------------------------------------------
 * The one symbol the host binds: ncclNetPlugin_v6, const, every mandatory
 * slot set. regMrDmaBuf and the RMA slots are NULL: the host answers for
 * them (rma_supported is 0). Everything else in the object is hidden
 * (C_VISIBILITY_PRESET hidden in CMakeLists.txt). */
NCCOM_PLUGIN_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {
    .name = TCP_NET_NAME,
    .init = tcp_init,
    .fini = tcp_fini,
    .devices = tcp_devices,
    .getProperties = tcp_get_properties,
    .listen = tcp_listen,
    .connect = tcp_connect,
    .accept = tcp_accept,
    .regMr = tcp_reg_mr,
    .regMrDmaBuf = NULL, /* no dma-buf registration */
    .deregMr = tcp_dereg_mr,
    .isend = tcp_isend,
    .irecv = tcp_irecv,
    .iflush = tcp_iflush,
    .test = tcp_test,
    .closeSend = tcp_close_send,
    .closeRecv = tcp_close_recv,
    .closeListen = tcp_close_listen,
    .getMrKey = NULL, /* rma_supported is 0: no RMA slots */
    .iwrite = NULL,
    .iwriteInline = NULL,
    .iread = NULL,
};
