/*
 * nrt_emu.h — the application API of nccom's reference runtime (libnrt.so.1,
 * version node NRT_EMU_1.0).
 *
 * The reference runtime stands in for AWS's libnrt on machines without a
 * Neuron device: it provides the 20 callbacks libnccom imports @NRT_2.0.0
 * and loads libnccom exactly as libnrt does (spec abi.md §2). These functions
 * are what tests and tools use to drive and inspect it. A real libnrt has
 * none of them.
 *
 * Environment (read when used, never at load time): NEURON_RT_EMU_PLATFORM,
 * NEURON_RT_EMU_DEVICES, NEURON_RT_EMU_TOTAL_VNC_COUNT,
 * NEURON_RT_VIRTUAL_CORE_SIZE, NEURON_RT_LOG_LEVEL — see emu/README.md.
 *
 * Pure C; usable from C++.
 */
#ifndef NRT_EMU_H
#define NRT_EMU_H

#include <nccom/nrt_abi.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NRT_EMU_PUBLIC __attribute__((visibility("default")))

/* Loads libnccom as libnrt's ncclInit does: dlopen("libnccom.so"), the
 * version gate (compat id 89), 37 dlsyms all-or-nothing, then the soft
 * dlopen("libnccom-net.so"). Runs once; later calls return the first outcome
 * (NRT_SUCCESS or NRT_FAILURE) until nrt_emu_unload_nccom(). Thread-safe. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_load_nccom(void);

/* The 37 entry points in slot order, or NULL unless the load succeeded. */
NRT_EMU_PUBLIC const nccom_export_table_t *nrt_emu_nccom_table(void);

/* The file the loader opened (dladdr of a resolved symbol), or NULL. */
NRT_EMU_PUBLIC const char *nrt_emu_nccom_path(void);

/* What neuronGetVersionInfo reported — also after a rejected compat id — or
 * NULL if it was never called. */
NRT_EMU_PUBLIC const nec_version_info_t *nrt_emu_nccom_version(void);

/* The message a failed load recorded (the spec's exact text), else NULL. */
NRT_EMU_PUBLIC const char *nrt_emu_last_error(void);

/* The per-call wrapper guard of abi.md §2.2, for code that calls through the
 * table: if the load armed its sticky error, logs "NCCL init error: %s",
 * clears it and returns NRT_FAILURE (once); otherwise NRT_SUCCESS when
 * libnccom is loaded and NRT_UNINITIALIZED when it is not. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_nccom_guard(void);

/* libnccom-net.so as opened by the loader (also what nrt_get_libnccl_net
 * hands libnccom), or NULL. When NULL, nrt_emu_net_error() says why (the
 * dlerror text) and nrt_emu_net_hint() whether libfabric is present. */
NRT_EMU_PUBLIC void *nrt_emu_net_handle(void);
NRT_EMU_PUBLIC const char *nrt_emu_net_error(void);
NRT_EMU_PUBLIC const char *nrt_emu_net_hint(void);

/* dlcloses libnccom-net.so and libnccom and resets the loader. */
NRT_EMU_PUBLIC void nrt_emu_unload_nccom(void);

/* The runtime log (last 256 lines, oldest first, each ending in '\n'):
 * copies what fits into buf, NUL-terminated when len > 0, and returns the
 * full length in bytes without the NUL (as snprintf). */
NRT_EMU_PUBLIC int nrt_emu_log_snapshot(char *buf, size_t len);
NRT_EMU_PUBLIC void nrt_emu_log_clear(void);

/* Debug queries for tests. */
/* dlsym calls made on libnccom's handle by the last load. */
NRT_EMU_PUBLIC int nrt_emu_debug_dlsym_count(void);
/* The loader's raw 37 slots (never NULL): all valid or all NULL. */
NRT_EMU_PUBLIC const nccom_export_table_t *nrt_emu_debug_slots(void);
/* The maps nec_build_port_and_rid_map recorded for device dev: copies up to
 * cap entries into the two arrays (either may be NULL) and returns the number
 * recorded, or -1 if none were. */
NRT_EMU_PUBLIC int nrt_emu_debug_port_and_rid_map(int dev, int *mla_indexes,
                                                  int *host_device_ids, int cap);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NRT_EMU_H */
