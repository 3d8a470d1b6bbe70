/* A third-party transport plugin: "direct" connects two ranks of one server
 * (same host hash and pod node) and leaves the data to the device, like the
 * original's p2pTransport — it is proxy-free, so its memory-registration and
 * op slots are NULL and the host builds no proxy path over it. Ranks on other
 * servers are left to the next transport in `transport.plugins`.
 *
 * What it does show is the connection contract: `setup` writes this side's
 * exchange blob, the host carries it to the peer, and `connect` checks the
 * peer's blob really is the other end of this connection (the same channel,
 * the opposite direction, the expected rank, the same server) before saying
 * done. A mismatch is an error naming both ends.
 *
 * Built with the installed SDK alone (nccom/transport_plugin.h); pure C99. */
#include <nccom/plugin.h>
#include <nccom/transport_plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIRECT_MAGIC 0x54434944u /* "DICT" little-endian */
#define DIRECT_BLOB_VERSION 1u

/* NCCL_DEBUG_SUBSYS bits used here. */
#define SUBSYS_INIT 1ul
#define SUBSYS_P2P 4ul

/* This side of one connection, as written into the 128-byte exchange blob. */
typedef struct {
  uint32_t magic;
  uint32_t version;
  int32_t rank;      /* the writer */
  int32_t peer_rank; /* whom the writer expects at the other end */
  int32_t channel;
  int32_t dir; /* the writer's nccom_transport_direction_t */
  uint64_t host_hash;
  int32_t pod_node_id;
  int32_t pid; /* for the log line only */
} direct_blob_t;

typedef char direct_blob_fits[sizeof(direct_blob_t) <= NCCOM_TRANSPORT_CONNECT_BYTES ? 1 : -1];

typedef struct {
  uint32_t marker;
  direct_blob_t mine;
  int connected;
} direct_connector_t;

#define DIRECT_CONNECTOR_MARKER 0x43524944u

static nccom_log_fn g_log = NULL;

#define DIRECT_LOG(level, subsys, ...)                                            \
  do {                                                                            \
    if (g_log != NULL) g_log((level), (subsys), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

static int same_server(const nccom_transport_peer_t* a, const nccom_transport_peer_t* b) {
  return a->rank != b->rank && a->host_hash == b->host_hash && a->pod_node_id == b->pod_node_id;
}

static const char* dir_name(int32_t dir) {
  return dir == NCCOM_TRANSPORT_SEND ? "send" : "receive";
}

static nccom_plugin_status_t direct_init(const nccom_host_api_t* host, void** ctx) {
  if (ctx == NULL) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  if (host != NULL && host->struct_size >= sizeof(nccom_host_api_t)) g_log = host->log;
  *ctx = NULL;
  DIRECT_LOG(NCCOM_LOG_LEVEL_INFO, SUBSYS_INIT,
             "direct transport: ranks of one server, proxy-free");
  return NCCOM_PLUGIN_OK;
}

static void direct_fini(void* ctx) { (void)ctx; }

static nccom_plugin_status_t direct_can_connect(void* ctx, const nccom_transport_comm_t* comm,
                                                const nccom_transport_peer_t* me,
                                                const nccom_transport_peer_t* peer, int* ok) {
  (void)ctx;
  if (comm == NULL || me == NULL || peer == NULL || ok == NULL)
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  *ok = same_server(me, peer);
  return NCCOM_PLUGIN_OK;
}

static nccom_plugin_status_t direct_setup(void* ctx, const nccom_transport_comm_t* comm,
                                          nccom_transport_direction_t dir, int channel,
                                          const nccom_transport_peer_t* peer,
                                          uint8_t blob_out[NCCOM_TRANSPORT_CONNECT_BYTES],
                                          void** connector, char* err, size_t err_len) {
  (void)ctx;
  if (comm == NULL || peer == NULL || blob_out == NULL || connector == NULL ||
      comm->peers == NULL || comm->rank < 0 || comm->rank >= comm->n_ranks)
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  const nccom_transport_peer_t* me = &comm->peers[comm->rank];
  if (!same_server(me, peer)) {
    snprintf(err, err_len, "direct setup: rank %d is not on rank %d's server", (int)peer->rank,
             (int)me->rank);
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  direct_connector_t* c = calloc(1, sizeof *c);
  if (c == NULL) return NCCOM_PLUGIN_SYSTEM_ERROR;
  c->marker = DIRECT_CONNECTOR_MARKER;
  c->mine.magic = DIRECT_MAGIC;
  c->mine.version = DIRECT_BLOB_VERSION;
  c->mine.rank = me->rank;
  c->mine.peer_rank = peer->rank;
  c->mine.channel = channel;
  c->mine.dir = (int32_t)dir;
  c->mine.host_hash = me->host_hash;
  c->mine.pod_node_id = me->pod_node_id;
  c->mine.pid = (int32_t)getpid();
  memset(blob_out, 0, NCCOM_TRANSPORT_CONNECT_BYTES);
  memcpy(blob_out, &c->mine, sizeof c->mine);
  *connector = c;
  return NCCOM_PLUGIN_OK;
}

static nccom_plugin_status_t direct_connect(void* ctx, void* connector,
                                            const uint8_t peer_blob[NCCOM_TRANSPORT_CONNECT_BYTES],
                                            int* done, char* err, size_t err_len) {
  (void)ctx;
  direct_connector_t* c = connector;
  if (c == NULL || c->marker != DIRECT_CONNECTOR_MARKER || peer_blob == NULL || done == NULL)
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  *done = 0;
  direct_blob_t theirs;
  memcpy(&theirs, peer_blob, sizeof theirs);
  const direct_blob_t* m = &c->mine;
  if (theirs.magic != DIRECT_MAGIC || theirs.version != DIRECT_BLOB_VERSION) {
    snprintf(err, err_len,
             "direct connect: channel %d %s, rank %d: the blob from rank %d is not a direct "
             "transport blob (magic 0x%08x, version %u)",
             (int)m->channel, dir_name(m->dir), (int)m->rank, (int)m->peer_rank,
             (unsigned)theirs.magic, (unsigned)theirs.version);
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  if (theirs.rank != m->peer_rank || theirs.peer_rank != m->rank || theirs.channel != m->channel ||
      theirs.dir == m->dir || theirs.host_hash != m->host_hash ||
      theirs.pod_node_id != m->pod_node_id) {
    snprintf(err, err_len,
             "direct connect: rank %d expected rank %d's %s end of channel %d, got rank %d's %s "
             "end of channel %d towards rank %d%s",
             (int)m->rank, (int)m->peer_rank, dir_name(!m->dir), (int)m->channel, (int)theirs.rank,
             dir_name(theirs.dir), (int)theirs.channel, (int)theirs.peer_rank,
             theirs.host_hash != m->host_hash ? " on another server" : "");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  c->connected = 1;
  *done = 1;
  if (m->dir == NCCOM_TRANSPORT_SEND) {
    DIRECT_LOG(NCCOM_LOG_LEVEL_INFO, SUBSYS_P2P,
               "Channel %02d : %d -> %d via direct (pid %d -> %d)", (int)m->channel, (int)m->rank,
               (int)theirs.rank, (int)m->pid, (int)theirs.pid);
  }
  return NCCOM_PLUGIN_OK;
}

static void direct_free_connector(void* ctx, void* connector) {
  (void)ctx;
  direct_connector_t* c = connector;
  if (c == NULL || c->marker != DIRECT_CONNECTOR_MARKER) return;
  c->marker = 0;
  free(c);
}

static const nccom_transport_ops_t direct_ops = {
    {sizeof(nccom_transport_ops_t), 0, direct_init, direct_fini},
    NCCOM_TRANSPORT_OPS_VERSION,
    0,
    direct_can_connect,
    direct_setup,
    direct_connect,
    direct_free_connector,
    NULL, /* reg_mr: no network comm behind a direct connector */
    NULL, /* dereg_mr */
    NULL, /* create_op: proxy-free, the device moves the data */
    NULL, /* op_progress */
    NULL, /* op_rearm */
    NULL, /* op_describe */
    NULL, /* op_free */
};

NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TRANSPORT,
    0,
    "direct",
    "1.0.0",
    0,
    &direct_ops.head,
};
