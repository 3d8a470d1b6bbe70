// nccom-info — what the Neuron runtime sees when it loads libnccom.
//
// Loads libnccom through the reference runtime (libnrt.so.1), which follows
// libnrt's own procedure (its one-time ncclInit load), and prints the file it
// found, the version and compat id, all 37 entry points and where each
// resolves, the libnccom-net.so status, and the platform the runtime emulates.
// Exit status: 0 when libnccom loads, 1 (with the loader's message) when not.
#include <dlfcn.h>
#include <nrt_emu.h>

#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr const char* kUsage =
    "usage: nccom-info [--help]\n"
    "\n"
    "Loads libnccom.so the way the Neuron runtime (libnrt) does: dlopen, the\n"
    "version gate (compatibility id 89), then all 37 neuron* entry points.\n"
    "Prints the file loaded, its version, git hash and compat id, a table of\n"
    "the entry points with the object each resolves into, the libnccom-net.so\n"
    "status, and the platform of the reference runtime.\n"
    "\n"
    "The search for libnccom.so is the dynamic loader's: LD_LIBRARY_PATH, then\n"
    "the directory of libnrt.so.1, then the system paths.\n"
    "\n"
    "Environment of the reference runtime: NEURON_RT_EMU_PLATFORM (emu, trn1,\n"
    "trn2, trn3, trn3-switch-v1), NEURON_RT_EMU_DEVICES (1..16; 16 on\n"
    "trn3-switch-v1), NEURON_RT_VIRTUAL_CORE_SIZE (1, 2; 2 on trn3-switch-v1),\n"
    "NEURON_RT_EMU_TOTAL_VNC_COUNT, NEURON_RT_LOG_LEVEL.\n"
    "\n"
    "Exit status: 0 when libnccom loads, 1 when it does not (the runtime's\n"
    "error message is printed on stderr), 2 on a usage error.\n";

constexpr const char* kSlotNames[] = {
#define NCCOM_INFO_NAME(name) #name,
    NCCOM_FOR_EACH_EXPORT(NCCOM_INFO_NAME)
#undef NCCOM_INFO_NAME
};

std::string real_path(const char* path) {
  char resolved[PATH_MAX];
  return realpath(path, resolved) != nullptr ? resolved : path;
}

std::string object_of(const void* address) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

void print_library() {
  std::printf("libnccom\n");
  if (const char* path = nrt_emu_nccom_path()) {
    const std::string real = real_path(path);
    std::printf("  file          %s%s%s\n", path, real == path ? "" : " -> ",
                real == path ? "" : real.c_str());
  } else {
    std::printf("  file          not loaded\n");
  }
  if (const nec_version_info_t* v = nrt_emu_nccom_version()) {
    std::printf("  version       %" PRIu64 ".%" PRIu64 ".%" PRIu64 ".%" PRIu64 "\n", v->major,
                v->minor, v->patch, v->maintenance);
    std::printf("  git hash      %.*s\n", static_cast<int>(sizeof v->git_hash), v->git_hash);
    std::printf("  compat id     %" PRIu64 " (the runtime requires %u)\n", v->compatibility_version,
                NCCOM_COMPATIBILITY_ID);
  }
}

void print_entry_points(const nccom_export_table_t* table) {
  // The table is 37 function pointers in slot order (nrt_abi.h asserts its size).
  void* slots[NCCOM_EXPORT_COUNT];
  std::memcpy(slots, table, sizeof slots);
  std::printf("\nentry points (%d, in the runtime's slot order)\n", NCCOM_EXPORT_COUNT);
  std::printf("  %4s  %-28s  %-18s  %s\n", "slot", "name", "address", "object");
  for (int i = 0; i < NCCOM_EXPORT_COUNT; ++i) {
    std::printf("  %4d  %-28s  %-18p  %s\n", i, kSlotNames[i], slots[i],
                object_of(slots[i]).c_str());
  }
}

void print_net() {
  std::printf("\nlibnccom-net.so\n");
  if (void* handle = nrt_emu_net_handle()) {
    void* any = dlsym(handle, "ncclNetPlugin_v6");
    std::printf("  status        loaded (handed to libnccom by nrt_get_libnccl_net)\n");
    std::printf("  ncclNetPlugin_v6  %s\n",
                any != nullptr ? object_of(any).c_str() : "not exported");
    return;
  }
  const char* why = nrt_emu_net_error();
  const char* hint = nrt_emu_net_hint();
  std::printf("  status        not loaded (not fatal; libnccom falls back to its own net)\n");
  std::printf("  why           %s\n", why != nullptr ? why : "unknown");
  if (hint != nullptr) std::printf("  hint          %s\n", hint);
}

// The reference runtime's variables: set ones with their value, the others
// with their default.
void print_runtime_knobs() {
  std::printf("\nreference runtime variables (docs/internals/emu.md)\n");
  const char* name = nullptr;
  const char* values = nullptr;
  const char* def = nullptr;
  for (int i = 0; nrt_emu_knob(i, &name, &values, &def) != 0; ++i) {
    const char* set = std::getenv(name);
    if (set != nullptr && *set != '\0') {
      std::printf("  %-36s %s (set; default %s)\n", name, set, def);
    } else {
      std::printf("  %-36s default %s\n", name, def);
    }
    std::printf("  %-36s   %s\n", "", values);
  }
}

void print_platform() {
  std::printf("\nreference runtime (libnrt.so.1)\n");
  std::printf("  file          %s\n",
              object_of(reinterpret_cast<void*>(&nrt_emu_load_nccom)).c_str());
  nrt_version_t rt{};
  if (nrt_get_version(&rt, sizeof rt) == NRT_SUCCESS) {
    std::printf("  version       %" PRIu64 ".%" PRIu64 ".%" PRIu64 ".%" PRIu64 " (git %s)\n",
                rt.rt_major, rt.rt_minor, rt.rt_patch, rt.rt_maintenance, rt.git_hash);
  }
  nrt_instance_info_t inst{};
  if (nrt_get_instance_info(&inst, sizeof inst) == NRT_SUCCESS) {
    std::printf("  instance      arch %s, family %u, size %u, device revision %s\n", inst.arch_name,
                inst.family, inst.size, inst.device_revision);
  } else {
    std::printf("  instance      invalid NEURON_RT_EMU_PLATFORM\n");
  }
  uint32_t vnc_size = 0;
  uint32_t vnc_total = 0;
  if (nec_get_virtual_core_size(&vnc_size) == NRT_SUCCESS) {
    std::printf("  vNC size      %u\n", vnc_size);
  }
  if (nrt_get_total_vnc_count(&vnc_total) == NRT_SUCCESS) {
    std::printf("  total vNCs    %u%s\n", vnc_total,
                vnc_total == 0 ? " (libnccom runs its distributed bootstrap)" : "");
  }
  const int devices = nec_get_device_count(nullptr, 0);
  if (devices < 0) {
    std::printf("  devices       invalid NEURON_RT_EMU_DEVICES\n");
    return;
  }
  std::printf("  devices       %d\n", devices);
  for (int d = 0; d < devices; ++d) {
    uint32_t domain = 0, bus = 0;
    uint8_t slot = 0, function = 0;
    nec_get_device_pci_bdf(d, &domain, &bus, &slot, &function);
    std::printf(
        "    dev %-2d  mla %-2d  rid %-2d  bdf %04x:%02x:%02x.%x  port0 -> mla %d  "
        "port1 -> mla %d\n",
        d, d, nec_mla_idx_to_rid(d, d), domain, bus, slot, function, nec_get_peer_mla_idx(d, d, 0),
        nec_get_peer_mla_idx(d, d, 1));
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "nccom-info: unknown argument '%s'\n\n%s", argv[i], kUsage);
    return 2;
  }
  // The loader's messages go to the runtime log; this tool prints the one
  // that matters itself, so keep the runtime from echoing WARN lines too.
  setenv("NEURON_RT_LOG_LEVEL", "ERROR", /*overwrite=*/0);
  // stdout is this report only: libnccom's log lines go to stderr (or
  // NCCL_DEBUG_FILE), whatever the configuration says (log.stream).
  setenv("NCCOM_DEBUG_STREAM", "stderr", /*overwrite=*/1);

  const NRT_STATUS status = nrt_emu_load_nccom();
  print_library();
  if (status != NRT_SUCCESS) {
    const char* error = nrt_emu_last_error();
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", error != nullptr ? error : "libnccom could not be loaded");
    return 1;
  }
  print_entry_points(nrt_emu_nccom_table());
  print_net();
  print_platform();
  print_runtime_knobs();
  return 0;
}
