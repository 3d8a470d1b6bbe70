// nrt_emu_net_plugin: which net plugin libnccom selected, read from what
// neuronGetOFIHandle hands out (sdk/include/nccom/net_handle.h) — libnccom's
// own answer, not the runtime's guess from its environment.
#include "nccom_loader.h"

#include <nccom/net_handle.h>

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <nrt_emu.h>
#include <stdlib.h>

#include <cstring>
#include <mutex>
#include <string>

namespace {

std::string real_path(const char* path) {
  if (path == nullptr || *path == '\0') return {};
  char resolved[PATH_MAX];
  return realpath(path, resolved) != nullptr ? std::string(resolved) : std::string(path);
}

std::string file_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
  return real_path(info.dli_fname);
}

struct Answer {
  std::string name, layout, file, error;
};

std::mutex g_mutex;
Answer g_answer;  // what the last call's strings point into

NRT_STATUS fail(nrt_emu_net_plugin_t* out, NRT_STATUS status, std::string why) {
  g_answer = Answer{};
  g_answer.error = std::move(why);
  out->error = g_answer.error.c_str();
  return status;
}

}  // namespace

extern "C" NRT_STATUS nrt_emu_net_plugin(nrt_emu_net_plugin_t* out) {
  if (out == nullptr || out->struct_size < sizeof(nrt_emu_net_plugin_t)) return NRT_INVALID;
  std::lock_guard lock(g_mutex);
  const size_t size = out->struct_size;
  *out = nrt_emu_net_plugin_t{};
  out->struct_size = size;
  out->name = out->layout = out->file = out->error = "";
  nrt_emu::NccomLoader& loader = nrt_emu::NccomLoader::instance();
  const nccom_export_table_t* table = loader.table();
  if (table == nullptr) return fail(out, NRT_UNINITIALIZED, "libnccom is not loaded");

  void* handle = nullptr;
  if (NRT_STATUS s = table->neuronGetOFIHandle(&handle); s != NRT_SUCCESS || handle == nullptr) {
    return fail(out, s != NRT_SUCCESS ? s : NRT_FAILURE,
                "neuronGetOFIHandle returned status " + std::to_string(s) +
                    (handle == nullptr ? " and no table" : "") + " (libnccom's log says why)");
  }
  const auto* net = static_cast<const ncclNet_v6_t*>(handle);
  const std::string table_file = file_of(net);
  const std::string nccom_file = real_path(loader.path());
  Answer answer;
  answer.name = net->name != nullptr ? std::string(net->name, strnlen(net->name, 256)) : "";
  bool adapted = false;
  int version = 6;
  if (!nccom_file.empty() && table_file == nccom_file) {
    // Inside libnccom: only its adapter may be there.
    const auto* wrapper = static_cast<const nccom_adapted_net_t*>(handle);
    if (std::memcmp(wrapper->magic, NCCOM_ADAPTED_NET_MAGIC, sizeof wrapper->magic) != 0 ||
        wrapper->struct_size < sizeof(nccom_adapted_net_t)) {
      return fail(out, NRT_FAILURE,
                  "neuronGetOFIHandle handed out a table inside libnccom (" + nccom_file +
                      ") that is not an nccom_adapted_net_t");
    }
    adapted = true;
    version = static_cast<int>(wrapper->version);
    answer.layout = wrapper->layout != nullptr ? wrapper->layout : "";
    answer.file = real_path(wrapper->file);
  } else {
    answer.layout = "Neuron";
    answer.file = table_file;
  }
  bool from_runtime = false;
  if (auto runtime = loader.net_plugin(); runtime) {
    void* runtime_net = *runtime;
    if (!adapted) {
      dlerror();
      from_runtime = dlsym(runtime_net, NCCL_NET_PLUGIN_SYMBOL_V6) == handle;
    } else {
      link_map* map = nullptr;
      from_runtime = dlinfo(runtime_net, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
                     !answer.file.empty() && real_path(map->l_name) == answer.file;
    }
  }
  g_answer = std::move(answer);
  out->name = g_answer.name.c_str();
  out->layout = g_answer.layout.c_str();
  out->version = version;
  out->file = g_answer.file.c_str();
  out->adapted = adapted;
  out->from_runtime = from_runtime;
  out->error = "";
  return NRT_SUCCESS;
}
