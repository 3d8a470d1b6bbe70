// The application API (nrt_emu.h, version node NRT_EMU_1.0).
#include "device_model.h"
#include "knobs.h"
#include "nccom_loader.h"
#include "platform.h"
#include "runtime_log.h"

#include <nrt_emu.h>

#include <algorithm>
#include <climits>

using nrt_emu::NccomLoader;

extern "C" {

NRT_STATUS nrt_emu_load_nccom(void) { return NccomLoader::instance().load(); }

const nccom_export_table_t* nrt_emu_nccom_table(void) { return NccomLoader::instance().table(); }

const char* nrt_emu_nccom_path(void) { return NccomLoader::instance().path(); }

const nec_version_info_t* nrt_emu_nccom_version(void) { return NccomLoader::instance().version(); }

const char* nrt_emu_platform_name(void) {
  const nrt_emu::platform::Spec* p = nrt_emu::platform::current();
  return p == nullptr ? nullptr : p->name;
}

const char* nrt_emu_last_error(void) { return NccomLoader::instance().last_error(); }

NRT_STATUS nrt_emu_nccom_guard(void) { return NccomLoader::instance().guard(); }

void* nrt_emu_net_handle(void) {
  auto plugin = NccomLoader::instance().net_plugin();
  return plugin ? *plugin : nullptr;  // the reason: nrt_emu_net_error()
}

const char* nrt_emu_net_error(void) { return NccomLoader::instance().net_error(); }

const char* nrt_emu_net_hint(void) { return NccomLoader::instance().net_hint(); }

void nrt_emu_unload_nccom(void) { NccomLoader::instance().unload(); }

int nrt_emu_host_device_count(int local_n) {
  const nrt_emu::platform::Spec* spec = nrt_emu::platform::current();
  if (spec == nullptr || local_n < 1) return -1;
  // What a rank reports once nrt_emu_ccom_init placed it (Ccom::place_on_device):
  // NEURON_RT_EMU_DEVICES when set, else the platform's own count, else
  // one device per rank on the host.
  if (nrt_emu::knobs::is_set(nrt_emu::knobs::Var::kDevices)) return nrt_emu::devices::count();
  return spec->devices != 0 ? spec->devices : local_n;
}

int nrt_emu_platform_pod_type(void) {
  const nrt_emu::platform::Spec* spec = nrt_emu::platform::current();
  return spec != nullptr ? static_cast<int>(spec->pod_type) : -1;
}

int nrt_emu_log_snapshot(char* buf, size_t len) {
  if (buf == nullptr) len = 0;
  const size_t needed = nrt_emu::log::snapshot(buf, len);
  return static_cast<int>(std::min<size_t>(needed, INT_MAX));
}

void nrt_emu_log_clear(void) { nrt_emu::log::clear(); }

int nrt_emu_debug_dlsym_count(void) { return NccomLoader::instance().dlsym_count(); }

const nccom_export_table_t* nrt_emu_debug_slots(void) { return NccomLoader::instance().slots(); }

int nrt_emu_debug_port_and_rid_map(int dev, int* mla_indexes, int* host_device_ids, int cap) {
  nrt_emu::devices::PortAndRidMap map;
  if (!nrt_emu::devices::recorded_map(dev, &map)) return -1;
  const int n = static_cast<int>(map.mla_indexes.size());
  const int copy = std::clamp(cap, 0, n);
  if (mla_indexes != nullptr) std::copy_n(map.mla_indexes.begin(), copy, mla_indexes);
  if (host_device_ids != nullptr) std::copy_n(map.host_device_ids.begin(), copy, host_device_ids);
  return n;
}

}  // extern "C"
