/* A transport plugin for the host adapter's tests, built in variants:
 *   default        connects after two connect calls; its ops finish an
 *                  execution after `ticks_per_execution` ticks;
 *   XPORT_FAIL_OP  op_progress fails on the second tick;
 *   XPORT_FAIL_CREATE create_op refuses every receive op, with a reason;
 *   XPORT_NO_PROXY all five op slots NULL (a proxy-free transport);
 *   XPORT_HALF_OPS only some op slots set;
 *   XPORT_NULL_CONNECT the mandatory connect slot is NULL. */
#include <nccom/transport_plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAYBE_UNUSED __attribute__((unused))

NCCOM_PLUGIN_EXPORT int xport_test_live_connectors;
NCCOM_PLUGIN_EXPORT int xport_test_live_ops;
NCCOM_PLUGIN_EXPORT int xport_test_ticks_per_execution = 3;

typedef struct {
  int dir, channel, peer, connect_calls;
} connector_t;

typedef struct {
  int dir, ticks, fifo_n;
} op_t;

static nccom_plugin_status_t x_init(const nccom_host_api_t* host, void** ctx) {
  (void)host;
  *ctx = NULL;
  return NCCOM_PLUGIN_OK;
}

static nccom_plugin_status_t x_can_connect(void* ctx, const nccom_transport_comm_t* comm,
                                           const nccom_transport_peer_t* me,
                                           const nccom_transport_peer_t* peer, int* ok) {
  (void)ctx;
  (void)comm;
  *ok = me->host_hash != peer->host_hash;
  return NCCOM_PLUGIN_OK;
}

static nccom_plugin_status_t x_setup(void* ctx, const nccom_transport_comm_t* comm,
                                     nccom_transport_direction_t dir, int channel,
                                     const nccom_transport_peer_t* peer, uint8_t* blob,
                                     void** connector, char* err, size_t err_len) {
  (void)ctx;
  if (peer->rank == comm->rank) {
    snprintf(err, err_len, "cannot connect rank %d to itself", peer->rank);
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  connector_t* c = calloc(1, sizeof *c);
  c->dir = dir;
  c->channel = channel;
  c->peer = peer->rank;
  snprintf((char*)blob, NCCOM_TRANSPORT_CONNECT_BYTES, "rank %d channel %d", comm->rank, channel);
  *connector = c;
  xport_test_live_connectors++;
  return NCCOM_PLUGIN_OK;
}

static MAYBE_UNUSED nccom_plugin_status_t x_connect(void* ctx, void* connector, const uint8_t* blob,
                                                    int* done, char* err, size_t err_len) {
  (void)ctx;
  connector_t* c = connector;
  char expected[64];
  snprintf(expected, sizeof expected, "rank %d channel %d", c->peer, c->channel);
  if (strcmp((const char*)blob, expected) != 0) {
    snprintf(err, err_len, "blob \"%.60s\" is not from rank %d", (const char*)blob, c->peer);
    return NCCOM_PLUGIN_ERROR;
  }
  *done = ++c->connect_calls >= 2;
  return NCCOM_PLUGIN_OK;
}

static void x_free_connector(void* ctx, void* connector) {
  (void)ctx;
  free(connector);
  xport_test_live_connectors--;
}

static MAYBE_UNUSED nccom_plugin_status_t x_create_op(void* ctx, const nccom_transport_comm_t* comm,
                                                      nccom_transport_direction_t dir,
                                                      const net_ops_info_t* ops, int ops_n,
                                                      const void* fifo, int fifo_n, void** out,
                                                      char* err, size_t err_len) {
  (void)ctx;
  (void)comm;
  (void)ops;
  (void)ops_n;
  (void)fifo;
#if defined(XPORT_FAIL_CREATE)
  if (dir == NCCOM_TRANSPORT_RECV) {
    snprintf(err, err_len, "a fifo of %d entries holds no receive slot", fifo_n);
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
#else
  (void)err;
  (void)err_len;
#endif
  op_t* op = calloc(1, sizeof *op);
  op->dir = dir;
  op->fifo_n = fifo_n;
  *out = op;
  xport_test_live_ops++;
  return NCCOM_PLUGIN_OK;
}

static MAYBE_UNUSED nccom_plugin_status_t x_progress(void* o, int* idle, int* done, char* err,
                                                     size_t err_len) {
  op_t* op = o;
  op->ticks++;
#if defined(XPORT_FAIL_OP)
  if (op->ticks == 2) {
    snprintf(err, err_len, "peer rank 1 closed the connection (descriptor %d)", op->ticks);
    return NCCOM_PLUGIN_ERROR;
  }
#else
  (void)err;
  (void)err_len;
#endif
  *idle = 0;
  *done = op->ticks >= xport_test_ticks_per_execution;
  return NCCOM_PLUGIN_OK;
}

static MAYBE_UNUSED nccom_plugin_status_t x_rearm(void* o, char* err, size_t err_len) {
  (void)err;
  (void)err_len;
  ((op_t*)o)->ticks = 0;
  return NCCOM_PLUGIN_OK;
}

static MAYBE_UNUSED void x_describe(void* o, char* buf, size_t len) {
  op_t* op = o;
  snprintf(buf, len, "at tick %d of %d entries", op->ticks, op->fifo_n);
}

static MAYBE_UNUSED void x_free_op(void* o) {
  free(o);
  xport_test_live_ops--;
}

/* One slot per line; the build variant chooses some of them. */
/* clang-format off */
static const nccom_transport_ops_t x_ops = {
    {sizeof(nccom_transport_ops_t), 0, x_init, NULL},
    NCCOM_TRANSPORT_OPS_VERSION,
    0,
    x_can_connect,
    x_setup,
#if defined(XPORT_NULL_CONNECT)
    NULL,
#else
    x_connect,
#endif
    x_free_connector,
    NULL,
    NULL,
#if defined(XPORT_NO_PROXY)
    NULL, NULL, NULL, NULL, NULL
#elif defined(XPORT_HALF_OPS)
    x_create_op, x_progress, NULL, NULL, x_free_op
#else
    x_create_op, x_progress, x_rearm, x_describe, x_free_op
#endif
    , NULL /* op_waiting_on */
    , NULL /* op_waiting_in */
};
/* clang-format on */

NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TRANSPORT,
    0,
    "xport_test",
    "1.0",
    0,
    &x_ops.head,
    NULL /* knobs */};
