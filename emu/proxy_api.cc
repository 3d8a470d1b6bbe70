// The application API of the proxy worker and the device memory helpers
// (nrt_emu.h, version node NRT_EMU_1.0).
#include "device_memory.h"
#include "nccom_loader.h"
#include "proxy_queue.h"
#include "runtime_log.h"

#include <nrt_emu.h>

#include <cinttypes>
#include <cstdint>
#include <memory>
#include <string>

using nrt_emu::log::Level;

struct nrt_emu_devmem {
  std::unique_ptr<nrt_emu::devmem::Region> region;
};

struct nrt_emu_proxy {
  nrt_emu::proxy::Seat* seat;
};

struct nrt_emu_proxy_status {
  std::shared_ptr<nrt_emu::proxy::Status> status;
};

namespace nrt_emu::devmem {
Region* region_of(nrt_emu_devmem_t* mem) { return mem ? mem->region.get() : nullptr; }
}  // namespace nrt_emu::devmem

namespace {

constexpr uint32_t kTriggerArmed = 0xFFFFFFFFu;
constexpr int kMaxDynRanks = 65536;

bool check_out(const char* fn, const void* mem, const void* out) {
  if (mem != nullptr && out != nullptr) return true;
  nrt_emu::log::message(Level::Error, "%s: %s is NULL", fn, mem == nullptr ? "mem" : "out");
  return false;
}

void* carve(nrt_emu_devmem_t* mem, size_t bytes, size_t align, const char* what) {
  return mem->region->allocate(bytes, align, what);
}

NRT_STATUS host_indices(nrt_emu_devmem_t* mem, enc_host_mem_t* out) {
  void* va = carve(mem, sizeof(enc_net_host_memory_t), NEC_CACHE_LINE_SIZE, "host index words");
  if (va == nullptr) return NRT_RESOURCE;
  *out = enc_host_mem_t{mem, va, mem->region->offset_of(va), sizeof(enc_net_host_memory_t)};
  return NRT_SUCCESS;
}

}  // namespace

extern "C" {

// ---- device memory -------------------------------------------------------------

NRT_STATUS nrt_emu_devmem_create(size_t bytes, nrt_emu_devmem_t** out) {
  if (out == nullptr) {
    nrt_emu::log::message(Level::Error, "nrt_emu_devmem_create: out is NULL");
    return NRT_INVALID;
  }
  *out = nullptr;
  auto region = nrt_emu::devmem::Region::create(bytes);
  if (!region) {
    nrt_emu::log::message(Level::Error, "nrt_emu_devmem_create: %s",
                          region.error().message.c_str());
    return region.error().status;
  }
  *out = new nrt_emu_devmem{std::unique_ptr<nrt_emu::devmem::Region>(*region)};
  return NRT_SUCCESS;
}

void nrt_emu_devmem_destroy(nrt_emu_devmem_t* mem) { delete mem; }

int nrt_emu_devmem_fd(const nrt_emu_devmem_t* mem) { return mem ? mem->region->fd() : -1; }

void* nrt_emu_devmem_base(const nrt_emu_devmem_t* mem) {
  return mem ? mem->region->base() : nullptr;
}

size_t nrt_emu_devmem_size(const nrt_emu_devmem_t* mem) { return mem ? mem->region->size() : 0; }

size_t nrt_emu_devmem_offset(const nrt_emu_devmem_t* mem, const volatile void* p) {
  return mem ? mem->region->offset_of(p) : SIZE_MAX;
}

NRT_STATUS nrt_emu_devmem_semaphore(nrt_emu_devmem_t* mem, volatile uint32_t** out) {
  if (!check_out("nrt_emu_devmem_semaphore", mem, out)) return NRT_INVALID;
  *out = static_cast<volatile uint32_t*>(
      carve(mem, sizeof(uint32_t), sizeof(uint32_t), "a semaphore"));
  return *out != nullptr ? NRT_SUCCESS : NRT_RESOURCE;
}

NRT_STATUS nrt_emu_devmem_trigger_word(nrt_emu_devmem_t* mem, volatile uint32_t** out) {
  if (!check_out("nrt_emu_devmem_trigger_word", mem, out)) return NRT_INVALID;
  *out = static_cast<volatile uint32_t*>(
      carve(mem, sizeof(uint32_t), sizeof(uint32_t), "a device-trigger word"));
  if (*out == nullptr) return NRT_RESOURCE;
  nrt_emu_proxy_arm_trigger(*out);
  return NRT_SUCCESS;
}

void nrt_emu_proxy_arm_trigger(volatile uint32_t* word) {
  if (word == nullptr) {
    nrt_emu::log::message(Level::Error, "nrt_emu_proxy_arm_trigger: word is NULL");
    return;
  }
  __atomic_store_n(word, kTriggerArmed, __ATOMIC_RELEASE);
}

NRT_STATUS nrt_emu_devmem_host_indices(nrt_emu_devmem_t* mem, enc_host_mem_t* out) {
  if (!check_out("nrt_emu_devmem_host_indices", mem, out)) return NRT_INVALID;
  return host_indices(mem, out);
}

NRT_STATUS nrt_emu_devmem_dynamic_table(nrt_emu_devmem_t* mem, int rank_n,
                                        enc_host_mem_shared_t** out) {
  if (!check_out("nrt_emu_devmem_dynamic_table", mem, out)) return NRT_INVALID;
  *out = nullptr;
  if (rank_n < 1 || rank_n > kMaxDynRanks) {
    nrt_emu::log::message(Level::Error, "nrt_emu_devmem_dynamic_table: rank_n %d outside 1..%d",
                          rank_n, kMaxDynRanks);
    return NRT_INVALID;
  }
  auto* shared = static_cast<enc_host_mem_shared_t*>(carve(
      mem, sizeof(enc_host_mem_shared_t), alignof(enc_host_mem_shared_t), "a dynamic-size input"));
  const size_t bytes = NRT_EMU_DYN_TABLE_BYTES(rank_n);
  void* va =
      shared ? carve(mem, bytes, alignof(nrt_emu_dyn_entry_t), "a dynamic-size table") : nullptr;
  if (va == nullptr) return NRT_RESOURCE;
  auto* table = static_cast<nrt_emu_dyn_table_t*>(va);
  table->rank_n = static_cast<uint32_t>(rank_n);
  __atomic_store_n(&table->magic, NRT_EMU_DYN_TABLE_MAGIC, __ATOMIC_RELEASE);
  shared->mem = enc_host_mem_t{mem, va, mem->region->offset_of(va), bytes};
  shared->refcnt = 1;
  *out = shared;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_emu_devmem_connector(nrt_emu_devmem_t* mem, int fold_n,
                                    enc_host_mem_shared_t* dynamic_input, void* nccl_connector,
                                    enc_net_connector_t** out) {
  if (!check_out("nrt_emu_devmem_connector", mem, out)) return NRT_INVALID;
  *out = nullptr;
  if (fold_n < 1 || fold_n > NEC_MAX_FOLD_N) {
    nrt_emu::log::message(Level::Error, "nrt_emu_devmem_connector: fold_n %d outside 1..%d", fold_n,
                          NEC_MAX_FOLD_N);
    return NRT_INVALID;
  }
  auto* conn = static_cast<enc_net_connector_t*>(
      carve(mem, sizeof(enc_net_connector_t), alignof(enc_net_connector_t), "a connector"));
  if (conn == nullptr) return NRT_RESOURCE;
  if (const NRT_STATUS rc = host_indices(mem, &conn->net_host_mem); rc != NRT_SUCCESS) return rc;
  conn->fold_n = fold_n;
  conn->dynamic_input_host_mem = dynamic_input;
  conn->nccl_connector = nccl_connector;
  *out = conn;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_emu_devmem_channel(nrt_emu_devmem_t* mem, int id, enc_pattern_t pattern,
                                  enc_net_connector_t* net_recv, enc_net_connector_t* net_send,
                                  enc_channel_prefix_t** out) {
  if (!check_out("nrt_emu_devmem_channel", mem, out)) return NRT_INVALID;
  *out = nullptr;
  if (pattern != ENC_PATTERN_RING && pattern != ENC_PATTERN_MESH) {
    nrt_emu::log::message(Level::Error,
                          "nrt_emu_devmem_channel: pattern %d is neither RING (0) nor MESH (1)",
                          static_cast<int>(pattern));
    return NRT_INVALID;
  }
  auto* channel = static_cast<enc_channel_prefix_t*>(
      carve(mem, sizeof(enc_channel_prefix_t), alignof(enc_channel_prefix_t), "a channel"));
  if (channel == nullptr) return NRT_RESOURCE;
  *channel = enc_channel_prefix_t{id, pattern, net_recv, net_send};
  *out = channel;
  return NRT_SUCCESS;
}

// ---- the proxy worker --------------------------------------------------------------

NRT_STATUS nrt_emu_proxy_acquire(void* comm, int rank, int nec_dev, nrt_emu_proxy_t** out) {
  if (out != nullptr) *out = nullptr;
  nrt_emu::proxy::Seat* seat = nullptr;
  const NRT_STATUS rc = nrt_emu::proxy::acquire(comm, rank, nec_dev, out ? &seat : nullptr);
  if (rc == NRT_SUCCESS) *out = new nrt_emu_proxy{seat};
  return rc;
}

void nrt_emu_proxy_release(nrt_emu_proxy_t* proxy) {
  if (proxy == nullptr) return;
  nrt_emu::proxy::release(proxy->seat);
  delete proxy;
}

int nrt_emu_proxy_group(const nrt_emu_proxy_t* proxy) { return proxy ? proxy->seat->gid : -1; }

int nrt_emu_proxy_worker_tid(const nrt_emu_proxy_t* proxy) {
  return proxy ? proxy->seat->queue->tid() : -1;
}

int nrt_emu_proxy_refcount(const nrt_emu_proxy_t* proxy) {
  return proxy ? nrt_emu::proxy::refcount(proxy->seat->gid) : 0;
}

int nrt_emu_proxy_worker_count(void) { return nrt_emu::proxy::live_workers(); }

NRT_STATUS nrt_emu_proxy_submit(nrt_emu_proxy_t* proxy, const nrt_emu_network_task_t* task,
                                nrt_emu_proxy_status_t** status_out) {
  if (proxy == nullptr || task == nullptr || status_out == nullptr) {
    nrt_emu::log::message(Level::Error, "nrt_emu_proxy_submit: %s is NULL",
                          proxy == nullptr  ? "proxy"
                          : task == nullptr ? "task"
                                            : "status_out");
    return NRT_INVALID;
  }
  *status_out = nullptr;
  const nrt_emu::proxy::Seat& seat = *proxy->seat;
  if (nccom::Status valid = nrt_emu::proxy::NetworkTask::validate(*task); !valid) {
    nrt_emu::log::message(Level::Error,
                          "nrt_emu_proxy_submit: network task exec %" PRIu64 " refused: %s",
                          task->exec_id, valid.error().message.c_str());
    return NRT_INVALID;
  }
  char name[96];
  std::snprintf(name, sizeof name, "network task exec %" PRIu64 " rank %d", task->exec_id,
                seat.rank);
  auto status = std::make_shared<nrt_emu::proxy::Status>(name, seat.nec_dev, seat.gid);
  seat.queue->submit(std::make_shared<nrt_emu::proxy::NetworkTask>(seat.fns, seat.comm, seat.rank,
                                                                   seat.nec_dev, *task, status));
  *status_out = new nrt_emu_proxy_status{std::move(status)};
  return NRT_SUCCESS;
}

int nrt_emu_proxy_help(nrt_emu_proxy_t* proxy) {
  return proxy != nullptr && proxy->seat->queue->help() ? 1 : 0;
}

void nrt_emu_proxy_stop_helping(nrt_emu_proxy_t* proxy) {
  if (proxy != nullptr) proxy->seat->queue->stop_helping();
}

uint64_t nrt_emu_proxy_stand_backs(nrt_emu_proxy_t* proxy) {
  return proxy != nullptr ? proxy->seat->queue->stand_backs() : 0;
}

NRT_STATUS nrt_emu_proxy_wait(nrt_emu_proxy_status_t* status, uint32_t timeout_ms) {
  if (status == nullptr) {
    nrt_emu::log::message(Level::Error, "nrt_emu_proxy_wait: status is NULL");
    return NRT_INVALID;
  }
  return status->status->wait(timeout_ms);
}

nrt_emu_task_run_state_t nrt_emu_proxy_run_state(const nrt_emu_proxy_status_t* s) {
  return s ? s->status->run_state() : NRT_EMU_TASK_DONE;
}

const char* nrt_emu_proxy_status_message(const nrt_emu_proxy_status_t* s) {
  return s ? s->status->message() : "";
}

const char* nrt_emu_proxy_status_reason(const nrt_emu_proxy_status_t* s) {
  return s ? s->status->reason() : "";
}

void nrt_emu_proxy_status_free(nrt_emu_proxy_status_t* s) { delete s; }

NRT_STATUS nrt_emu_debug_install_table(const nccom_export_table_t* table) {
  return nrt_emu::NccomLoader::instance().install_for_test(table);
}

}  // extern "C"
