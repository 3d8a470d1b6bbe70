// How the runtime loads libnccom: step by step, with plain dlopen/dlsym
// exactly as libnrt's ncclInit does it, plus the sticky init error of its
// per-call nccl* wrappers.
//
// One process-wide loader. load() runs once (until unload()); every query is
// thread-safe. Nothing happens at library load time.
#pragma once

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <mutex>
#include <string>

namespace nrt_emu {

class NccomLoader {
 public:
  static NccomLoader& instance();

  // All of libnrt's ncclInit load, net plugin included. Idempotent: later calls return the first
  // outcome (NRT_SUCCESS or NRT_FAILURE) until unload().
  NRT_STATUS load();

  // dlcloses libnccom-net.so and libnccom and forgets everything, so that a
  // later load() starts again. The runtime log is kept.
  void unload();

  // Test seam (nrt_emu_debug_install_table): answer as if libnccom had
  // loaded with `table` (copied, slots may be NULL); nullptr = unload().
  // NRT_INVALID while a real libnccom is mapped.
  NRT_STATUS install_for_test(const nccom_export_table_t* table);

  // The 37 slots when all resolved, else nullptr.
  const nccom_export_table_t* table() const;
  // The raw slots: all valid or all NULL (debug query).
  const nccom_export_table_t* slots() const { return &table_; }
  // What neuronGetVersionInfo reported, or nullptr if it was never called.
  const nec_version_info_t* version() const;
  // The file dlopen found (dladdr of neuronGetVersionInfo), or nullptr.
  const char* path() const;
  // The message the failed load recorded, or nullptr after a success.
  const char* last_error() const;
  // dlsym calls made on libnccom's handle (debug query).
  int dlsym_count() const;

  // The guard of libnrt's per-call wrappers: if the sticky init error is
  // armed, logs "NCCL init error: %s", disarms it and answers NRT_FAILURE;
  // otherwise NRT_SUCCESS when libnccom is loaded, NRT_UNINITIALIZED if not.
  NRT_STATUS guard();

  // libnccom-net.so (step 7): the handle, or the reason (dlerror text, or
  // why the runtime never tried).
  nccom::Result<void*> net_plugin() const;
  // The same reason and the libfabric/EFA hint, for the application API;
  // the pointers stay valid until the next load() or unload().
  const char* net_error() const;
  const char* net_hint() const;

 private:
  NccomLoader() = default;
  NRT_STATUS load_nccom();
  void open_net_plugin();
  void* resolve(const char* name);
  NRT_STATUS fail(std::string message);

  mutable std::mutex mutex_;
  bool attempted_ = false;
  NRT_STATUS status_ = NRT_UNINITIALIZED;
  void* nccom_ = nullptr;
  nccom_export_table_t table_{};
  bool table_valid_ = false;
  nec_version_info_t version_{};
  bool version_known_ = false;
  std::string path_;
  std::string last_error_;
  std::string sticky_error_;
  bool sticky_armed_ = false;
  int dlsym_count_ = 0;

  mutable std::mutex net_mutex_;  // separate: nrt_get_libnccl_net may run during load
  void* net_ = nullptr;
  std::string net_error_;
  std::string net_hint_;
};

}  // namespace nrt_emu
