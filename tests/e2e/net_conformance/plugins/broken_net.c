/* A deliberately broken ncclNet_v6 plugin, for the tests that check how
 * nccom-plugin-check reports a plugin that does not conform. Connections
 * "succeed" at once without moving anything; each variant breaks one thing:
 *   BROKEN_NEVER_DONE  test() never reports completion
 *   BROKEN_PROPS       getProperties: speed 0, no NCCL_PTR_HOST, maxRecvs 0, a
 *                      name not NUL-terminated within 256 bytes
 *   BROKEN_HUGE_DEVICES  devices() reports 2^30 devices
 *   BROKEN_CRASH       isend dies of SIGSEGV
 *   BROKEN_HANG        isend never returns
 */
#include <nccom/net_v6.h>
#include <nccom/plugin.h>

#include <signal.h>
#include <string.h>
#include <unistd.h>

static char comm_token, request_token, mr_token;
static int connects, accepts; /* accept answers "not yet" until a connect came */

static ncclResult_t b_init(ncclDebugLogger_t logger) {
  (void)logger;
  return ncclSuccess;
}
static ncclResult_t b_fini(void) { return ncclSuccess; }
static ncclResult_t b_devices(int* ndev) {
  if (ndev == NULL) return ncclInvalidArgument;
#ifdef BROKEN_HUGE_DEVICES
  *ndev = 1 << 30;
#else
  *ndev = 1;
#endif
  return ncclSuccess;
}

#ifdef BROKEN_PROPS
static char long_name[512] = {[0 ... 511] = 'b'};
#endif

static ncclResult_t b_get_properties(int dev, ncclNetProperties_v6_t* props) {
  if (dev != 0 || props == NULL) return ncclInvalidArgument;
  memset(props, 0, sizeof *props);
  props->name = (char*)"broken";
  props->maxRecvs = 1;
  props->maxComms = 1024;
#ifdef BROKEN_PROPS
  props->name = long_name;
  props->maxRecvs = 0;
  props->ptrSupport = 0;
  props->speed = 0;
#else
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 1000;
#endif
  return ncclSuccess;
}

static ncclResult_t b_listen(int dev, void* handle, void** listen_comm) {
  if (dev != 0 || handle == NULL || listen_comm == NULL) return ncclInvalidArgument;
  memset(handle, 0x42, NCCL_NET_HANDLE_MAXSIZE);
  *listen_comm = &comm_token;
  return ncclSuccess;
}

static ncclResult_t b_connect(int dev, void* handle, void** send_comm) {
  if (dev != 0 || handle == NULL || send_comm == NULL) return ncclInvalidArgument;
  if (((unsigned char*)handle)[0] != 0x42) return ncclInvalidArgument;
  __atomic_add_fetch(&connects, 1, __ATOMIC_SEQ_CST);
  *send_comm = &comm_token;
  return ncclSuccess;
}

static ncclResult_t b_accept(void* listen_comm, void** recv_comm) {
  if (listen_comm == NULL || recv_comm == NULL) return ncclInvalidArgument;
  int seen = __atomic_load_n(&accepts, __ATOMIC_SEQ_CST);
  *recv_comm = NULL;
  if (seen < __atomic_load_n(&connects, __ATOMIC_SEQ_CST) &&
      __atomic_compare_exchange_n(&accepts, &seen, seen + 1, 0, __ATOMIC_SEQ_CST,
                                  __ATOMIC_SEQ_CST)) {
    *recv_comm = &comm_token;
  }
  return ncclSuccess;
}

static ncclResult_t b_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  (void)comm;
  (void)data;
  (void)size;
  (void)type;
  *mhandle = &mr_token;
  return ncclSuccess;
}

static ncclResult_t b_dereg_mr(void* comm, void* mhandle) {
  (void)comm;
  (void)mhandle;
  return ncclSuccess;
}

static ncclResult_t b_isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                            void** request) {
  (void)data;
  (void)size;
  (void)tag;
  (void)mhandle;
#ifdef BROKEN_CRASH
  raise(SIGSEGV); /* what a wild write does; sanitizer builds would stop a real one first */
#endif
#ifdef BROKEN_HANG
  for (;;) sleep(1);
#endif
  if (send_comm == NULL) return ncclInvalidArgument;
  *request = &request_token;
  return ncclSuccess;
}

static ncclResult_t b_irecv(void* recv_comm, int n, void** data, int* sizes, int* tags,
                            void** mhandles, void** request) {
  (void)n;
  (void)data;
  (void)sizes;
  (void)tags;
  (void)mhandles;
  if (recv_comm == NULL) return ncclInvalidArgument;
  *request = &request_token;
  return ncclSuccess;
}

static ncclResult_t b_test(void* request, int* done, int* sizes) {
  (void)sizes;
  if (request == NULL) return ncclInvalidArgument;
  *done = 0; /* never */
  return ncclSuccess;
}

static ncclResult_t b_close(void* comm) {
  (void)comm;
  return ncclSuccess;
}

NCCOM_PLUGIN_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {
    "broken",  b_init,   b_fini,   b_devices, b_get_properties, b_listen,
    b_connect, b_accept, b_reg_mr, NULL,      b_dereg_mr,       b_isend,
    b_irecv,   NULL,     b_test,   b_close,   b_close,          b_close,
    NULL,      NULL,     NULL,     NULL};
