/*
 * nccom/net_common.h — what every ncclNet plugin ABI version shares: the
 * result codes, the logger the host hands to init, and the limits.
 * These are the Neuron (aws-ofi-nccl Neuron interface) definitions.
 * FROZEN: never edit a released value.
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_NET_COMMON_H
#define NCCOM_NET_COMMON_H

#include <nccom/nccl_ptr.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Compile-time check usable from C99 (no _Static_assert) and C++. */
#define NCCOM_NET_ASSERT_CAT2(a, b) a##b
#define NCCOM_NET_ASSERT_CAT(a, b) NCCOM_NET_ASSERT_CAT2(a, b)
#define NCCOM_NET_ASSERT(cond, tag) \
  typedef char NCCOM_NET_ASSERT_CAT(nccom_net_assert_##tag##_, __LINE__)[(cond) ? 1 : -1]

#define NCCL_NET_HANDLE_MAXSIZE 128   /* listen/connect handle, v5 and v6 */
#define NCCL_NET_HANDLE_MAXSIZE_V4 64 /* listen/connect handle, v4 */
#define NCCL_NET_MAX_REQUESTS 128     /* outstanding requests per comm */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1

#ifndef NCCL_H_ /* NVIDIA's nccl.h defines the same enum */
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6
} ncclResult_t;
#endif

typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

typedef enum {
  NCCL_INIT = 1,
  NCCL_COLL = 2,
  NCCL_P2P = 4,
  NCCL_SHM = 8,
  NCCL_NET = 16,
  NCCL_GRAPH = 32,
  NCCL_TUNING = 64,
  NCCL_ENV = 128,
  NCCL_ALLOC = 256,
  NCCL_CALL = 512,
  NCCL_ALL = ~0
} ncclDebugLogSubSys;

/* The logger given to init. The host's logger tolerates calls before init
 * returns and a NULL format. */
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file,
                                  int line, const char* fmt, ...);

NCCOM_NET_ASSERT(sizeof(ncclResult_t) == 4, result_size);

#ifdef __cplusplus
}
#endif

#endif /* NCCOM_NET_COMMON_H */
