/* A careless ncclNet_v6 plugin: each build fails in one of the discovery
 * calls the host makes first, the way plugins seen in the field do:
 *   CARELESS_DEVICES_CRASH  devices() dies of SIGSEGV (a NULL dereference)
 *   CARELESS_PROPS_CRASH    getProperties(0) dies of SIGSEGV
 *   CARELESS_INIT_EXIT      init() calls exit(3) (no usable hardware, said rudely)
 *   CARELESS_INIT_HANG      init() never returns
 * Nothing else works: it is never meant to carry data.
 */
#include <nccom/net_v6.h>
#include <nccom/plugin.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a wild access does without a sanitizer: the default action of
 * SIGSEGV (a sanitizer's handler would turn it into an exit status). */
#if defined(CARELESS_DEVICES_CRASH) || defined(CARELESS_PROPS_CRASH)
static void die_of_segv(void) {
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
}
#endif

static ncclResult_t c_init(ncclDebugLogger_t logger) {
  (void)logger;
#ifdef CARELESS_INIT_EXIT
  exit(3);
#endif
#ifdef CARELESS_INIT_HANG
  for (;;) pause();
#endif
  return ncclSuccess;
}
static ncclResult_t c_fini(void) { return ncclSuccess; }
static ncclResult_t c_devices(int* ndev) {
#ifdef CARELESS_DEVICES_CRASH
  die_of_segv();
#endif
  *ndev = 1;
  return ncclSuccess;
}
static ncclResult_t c_props(int dev, ncclNetProperties_v6_t* props) {
  (void)dev;
#ifdef CARELESS_PROPS_CRASH
  die_of_segv();
#endif
  memset(props, 0, sizeof *props);
  props->name = (char*)"careless";
  props->ptrSupport = NCCL_PTR_HOST;
  props->speed = 1000;
  props->maxComms = 1;
  props->maxRecvs = 1;
  return ncclSuccess;
}
static ncclResult_t c_listen(int dev, void* handle, void** comm) {
  (void)dev;
  (void)handle;
  (void)comm;
  return ncclInternalError;
}
static ncclResult_t c_connect(int dev, void* handle, void** comm) {
  (void)dev;
  (void)handle;
  (void)comm;
  return ncclInternalError;
}
static ncclResult_t c_accept(void* listen, void** comm) {
  (void)listen;
  (void)comm;
  return ncclInternalError;
}
static ncclResult_t c_reg(void* comm, void* data, size_t size, int type, void** mh) {
  (void)comm;
  (void)data;
  (void)size;
  (void)type;
  (void)mh;
  return ncclInternalError;
}
static ncclResult_t c_dereg(void* comm, void* mh) {
  (void)comm;
  (void)mh;
  return ncclInternalError;
}
static ncclResult_t c_isend(void* comm, void* data, int size, int tag, void* mh, void** req) {
  (void)comm;
  (void)data;
  (void)size;
  (void)tag;
  (void)mh;
  (void)req;
  return ncclInternalError;
}
static ncclResult_t c_irecv(void* comm, int n, void** data, int* sizes, int* tags, void** mh,
                            void** req) {
  (void)comm;
  (void)n;
  (void)data;
  (void)sizes;
  (void)tags;
  (void)mh;
  (void)req;
  return ncclInternalError;
}
static ncclResult_t c_test(void* req, int* done, int* sizes) {
  (void)req;
  (void)done;
  (void)sizes;
  return ncclInternalError;
}
static ncclResult_t c_close(void* comm) {
  (void)comm;
  return ncclSuccess;
}

NCCOM_PLUGIN_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {
    "careless", c_init,  c_fini,  c_devices, c_props, c_listen, c_connect, c_accept,
    c_reg,      NULL,    c_dereg, c_isend,   c_irecv, NULL,     c_test,    c_close,
    c_close,    c_close, NULL,    NULL,      NULL,    NULL};
