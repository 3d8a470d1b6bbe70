// emu_loader_driver — one loader scenario per process (see emu_loader_test).
//
// Loads libnccom through the reference runtime from several threads at once,
// then prints what the runtime ended up with as "key=value" lines; unloads,
// loads again and prints that outcome ("reload_*"); and ends with the line
// "--- log ---" and the runtime log as it was before the reload.
#include <dlfcn.h>
#include <nrt_emu.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 8;

constexpr const char* kSlotNames[] = {
#define DRIVER_NAME(name) #name,
    NCCOM_FOR_EACH_EXPORT(DRIVER_NAME)
#undef DRIVER_NAME
};

const char* or_none(const char* s) { return s != nullptr ? s : "(null)"; }

std::string object_of(const void* address, std::string* symbol = nullptr) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0) return "(none)";
  if (symbol != nullptr) *symbol = or_none(info.dli_sname);
  return or_none(info.dli_fname);
}

void report_slots() {
  void* slots[NCCOM_EXPORT_COUNT];
  std::memcpy(slots, nrt_emu_debug_slots(), sizeof slots);
  const char* path = nrt_emu_nccom_path();
  int non_null = 0, in_nccom = 0, named_right = 0;
  for (int i = 0; i < NCCOM_EXPORT_COUNT; ++i) {
    if (slots[i] == nullptr) continue;
    ++non_null;
    std::string symbol;
    if (path != nullptr && object_of(slots[i], &symbol) == path) ++in_nccom;
    if (symbol == kSlotNames[i]) ++named_right;
  }
  std::printf("slots_non_null=%d\nslots_in_nccom=%d\nslots_named_right=%d\n", non_null, in_nccom,
              named_right);
}

void report_net() {
  int err = -1;
  char msg[512];
  std::memset(msg, 'x', sizeof msg);
  void* handle = nrt_get_libnccl_net(&err, msg, sizeof msg);
  std::printf("net_handle=%s\nnet_err=%d\nnet_msg=%s\n", handle != nullptr ? "non-null" : "null",
              err, msg);
  std::printf("net_handle_matches=%d\n", handle == nrt_emu_net_handle() ? 1 : 0);
  std::printf("net_hint=%s\n", or_none(nrt_emu_net_hint()));
  if (handle != nullptr) {
    const void* marker = dlsym(handle, "nccom_emu_dummy_net_marker");
    std::printf("net_marker=%s\n", marker != nullptr ? static_cast<const char*>(marker) : "(none)");
  }
}

std::string log_snapshot() {
  const int needed = nrt_emu_log_snapshot(nullptr, 0);
  std::vector<char> buf(static_cast<size_t>(needed) + 1);
  nrt_emu_log_snapshot(buf.data(), buf.size());
  return buf.data();
}

}  // namespace

int main() {
  // Concurrent first calls: exactly one load runs, all see its outcome.
  std::vector<NRT_STATUS> statuses(kThreads, NRT_UNINITIALIZED);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&statuses, i] { statuses[i] = nrt_emu_load_nccom(); });
  }
  for (auto& t : threads) t.join();
  int same = 0;
  for (NRT_STATUS s : statuses) same += s == statuses[0] ? 1 : 0;

  std::printf("status=%d\nstatus_all_threads_same=%d\n", statuses[0], same == kThreads ? 1 : 0);
  std::printf("status_again=%d\n", nrt_emu_load_nccom());
  std::printf("libnrt=%s\n", object_of(reinterpret_cast<void*>(&nrt_emu_load_nccom)).c_str());
  std::printf("table=%s\n", nrt_emu_nccom_table() != nullptr ? "non-null" : "null");
  std::printf("path=%s\n", or_none(nrt_emu_nccom_path()));
  std::printf("last_error=%s\n", or_none(nrt_emu_last_error()));
  std::printf("dlsym_count=%d\n", nrt_emu_debug_dlsym_count());
  if (const nec_version_info_t* v = nrt_emu_nccom_version()) {
    std::printf("version=%lu.%lu.%lu.%lu\ncompat=%lu\ngit_hash=%.16s\n",
                static_cast<unsigned long>(v->major), static_cast<unsigned long>(v->minor),
                static_cast<unsigned long>(v->patch), static_cast<unsigned long>(v->maintenance),
                static_cast<unsigned long>(v->compatibility_version), v->git_hash);
  } else {
    std::printf("version=(none)\n");
  }
  report_slots();
  report_net();
  const NRT_STATUS guard1 = nrt_emu_nccom_guard();
  const NRT_STATUS guard2 = nrt_emu_nccom_guard();
  std::printf("guard1=%d\nguard2=%d\n", guard1, guard2);
  const std::string log = log_snapshot();  // before the reload adds to it

  const bool had_net = nrt_emu_net_handle() != nullptr;
  nrt_emu_unload_nccom();
  std::printf("unloaded_table=%s\nunloaded_net=%s\n",
              nrt_emu_nccom_table() != nullptr ? "non-null" : "null",
              nrt_emu_net_handle() != nullptr ? "non-null" : "null");
  if (had_net) {
    // libnccom-net.so pins the libfabric it links: not unload-safe.
    void* fabric = dlopen("libfabric.so.1", RTLD_NOW | RTLD_NOLOAD);
    std::printf("libfabric_after_unload=%s\n", fabric != nullptr ? "loaded" : "unloaded");
    if (fabric != nullptr) dlclose(fabric);
  }
  const NRT_STATUS reload = nrt_emu_load_nccom();
  std::printf("reload_status=%d\nreload_dlsym_count=%d\n", reload, nrt_emu_debug_dlsym_count());
  nrt_emu_unload_nccom();
  std::printf("--- log ---\n%s", log.c_str());
  return 0;
}
