// Provider discovery (the original plugin's init, rdma_init and getProperties,
// in our own terms).
//
// The provider filter is what production does: FI_PROVIDER when set —
// libfabric reads that variable itself and filters fi_getinfo with it; we
// only ask libfabric (fi_param_get_str, after its init) whether it was set —
// otherwise "efa". On a host without EFA and without FI_PROVIDER this finds
// nothing and init fails cleanly, so the host falls back to sockets.
#include "provider.h"

#include "shm_room.h"

#include <nccom/util/efa.h>

#include <ifaddrs.h>
#include <net/if.h>
#include <strings.h>

#include <rdma/providers/fi_prov.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nccom::ofi {
namespace {

constexpr uint64_t kRmaCaps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
// The MR modes the data path copes with (see NicCaps for what each implies).
constexpr uint64_t kMrModes =
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
constexpr const char* kDefaultProvider = "efa";
constexpr int kDefaultSpeedMbps = 10000;  // when the provider reports no link speed

enum class EfaMode { Auto, Yes, No };
std::atomic<EfaMode> g_efa_mode{EfaMode::Auto};

// Why finding no efa provider is expected on this host; "" when EFA is
// present (or said to be), so the failure is a WARN.
std::string efa_absence() {
  switch (g_efa_mode.load()) {
    case EfaMode::Yes: return "";
    case EfaMode::No: return "expected here: net.efa is no, this host has no EFA device";
    case EfaMode::Auto: break;
  }
  if (!efa_device().empty()) return "";
  return std::string("expected here: this host has no EFA device (none under ") + kRdmaClassDir +
         " is bound to the efa driver)";
}

InfoPtr make_hints(bool rma) {
  InfoPtr hints(fi_allocinfo());
  if (!hints) return hints;
  hints->caps = FI_TAGGED | FI_MSG | (rma ? kRmaCaps : 0);
  hints->mode = FI_CONTEXT | FI_CONTEXT2;  // every op context is a fi_context2 we own
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode = kMrModes;
  hints->domain_attr->av_type = FI_AV_TABLE;
  // Same-tag messages of one comm must match receives in the order they were sent.
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  // Queue depth: a comm has at most NCCL_NET_MAX_REQUESTS in flight plus its
  // control message; asking for what we use keeps providers from sizing
  // bounce-buffer pools for thousands (ofi_rxm: ~70 MB per endpoint).
  hints->tx_attr->size = 2 * kMaxRequests;
  hints->rx_attr->size = 2 * kMaxRequests;
  return hints;
}

// Empty: libfabric applied FI_PROVIDER itself. Only meaningful after the
// first fi_getinfo (libfabric defines its parameters during its own init).
std::string provider_filter() {
  char* value = nullptr;
  if (fi_param_get_str(nullptr, "provider", &value) == FI_SUCCESS && value != nullptr &&
      value[0] != '\0') {
    OFI_INFO(NCCL_INIT | NCCL_NET, "NET/OFI Provider filter from FI_PROVIDER: %s", value);
    return "";
  }
  OFI_INFO(NCCL_INIT | NCCL_NET, "NET/OFI Setting provider_filter to %s", kDefaultProvider);
  return kDefaultProvider;
}

// fi_getinfo, then keep the infos of `filter` (all when empty). rc as fi_getinfo's.
int query(bool rma, bool* filter_known, std::string* filter, InfoPtr* out) {
  InfoPtr hints = make_hints(rma);
  if (!hints) return -FI_ENOMEM;
  fi_info* found = nullptr;
  int rc = fi_getinfo(kFiApiVersion, nullptr, nullptr, 0, hints.get(), &found);
  InfoPtr all(found);
  if (!*filter_known) {
    *filter = provider_filter();
    *filter_known = true;
  }
  if (rc != 0) return rc;
  fi_info* head = nullptr;
  fi_info** tail = &head;
  for (fi_info* info = all.get(); info != nullptr; info = info->next) {
    if (!filter->empty() && std::strcmp(info->fabric_attr->prov_name, filter->c_str()) != 0)
      continue;
    *tail = fi_dupinfo(info);
    if (*tail == nullptr) {
      fi_freeinfo(head);
      return -FI_ENOMEM;
    }
    tail = &(*tail)->next;
  }
  out->reset(head);
  return head != nullptr ? 0 : -FI_ENODATA;
}

// Whether libfabric's tcp provider is among `providers` ("tcp",
// "tcp;ofi_rxm", an FI_PROVIDER list such as "shm,tcp;ofi_rxm"; a list
// that starts with '^' names the providers left out).
bool names_tcp(const std::string& providers) {
  if (providers.empty() || providers[0] == '^') return false;
  size_t start = 0;
  for (;;) {
    const size_t end = providers.find_first_of(",;", start);
    if (providers.compare(start, end - start, "tcp") == 0) return true;
    if (end == std::string::npos) return false;
    start = end + 1;
  }
}

// The interfaces of this host that are up, by name, in getifaddrs order.
std::string up_interfaces() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return std::string("unknown: getifaddrs: ") + std::strerror(errno);
  std::vector<std::string> names;
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_name == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    bool seen = false;
    for (const std::string& n : names) seen = seen || n == ifa->ifa_name;
    if (!seen) names.emplace_back(ifa->ifa_name);
  }
  ::freeifaddrs(list);
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// What to say when FI_TCP_IFACE names no interface of this host: libfabric's
// tcp provider (ofi_get_list_of_addr) then drops the filter — noting it
// only in its own info log — and offers every up interface with an
// address, and loopback. A list ("eth0,eth1") is one name to it. "" when
// FI_TCP_IFACE is unset, empty, or names an interface.
std::string unknown_tcp_iface() {
  const char* iface = std::getenv("FI_TCP_IFACE");
  if (iface == nullptr || iface[0] == '\0' || ::if_nametoindex(iface) != 0) return "";
  const std::string value = iface;
  const std::string list_note =
      value.find_first_of(", ") != std::string::npos
          ? " (libfabric takes one interface name there, not a list: it reads \"" + value +
                "\" as one name)"
          : "";
  return "FI_TCP_IFACE=\"" + value + "\" names no network interface of this host" + list_note +
         "; the interfaces up here are " + up_interfaces() +
         ". libfabric's tcp provider ignores a name it cannot find and uses every interface "
         "instead";
}

uint64_t fnv1a64(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

void describe_rail(const fi_info& info, Device* device) {
  const fid_nic* nic = info.nic;
  if (nic != nullptr && nic->bus_attr != nullptr && nic->bus_attr->bus_type == FI_BUS_PCI) {
    const fi_pci_attr& pci = nic->bus_attr->attr.pci;
    char path[64];
    std::snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.%x", pci.domain_id,
                  pci.bus_id, pci.device_id, pci.function_id);
    if (device->pci_path.empty()) device->pci_path = path;
  }
  size_t bps = (nic != nullptr && nic->link_attr != nullptr) ? nic->link_attr->speed : 0;
  device->speed_mbps += bps >= 1000000 ? static_cast<int>(bps / 1000000) : kDefaultSpeedMbps;
}

}  // namespace

void set_efa_mode(const char* mode) {
  const auto is = [mode](const char* name) {
    return mode != nullptr && strcasecmp(mode, name) == 0;
  };
  g_efa_mode.store(is("yes") ? EfaMode::Yes : is("no") ? EfaMode::No : EfaMode::Auto);
}

NicCaps decode_caps(const fi_info& info) {
  NicCaps caps;
  const uint64_t mr_mode = info.domain_attr->mr_mode;
  caps.mr_local = (mr_mode & FI_MR_LOCAL) != 0;
  caps.virt_addr = (mr_mode & FI_MR_VIRT_ADDR) != 0;
  caps.prov_key = (mr_mode & FI_MR_PROV_KEY) != 0;
  caps.mr_endpoint = (mr_mode & FI_MR_ENDPOINT) != 0;
  caps.manual_progress = info.domain_attr->data_progress != FI_PROGRESS_AUTO;
  const bool has_rma =
      (info.caps & (FI_RMA | FI_READ | FI_REMOTE_READ)) == (FI_RMA | FI_READ | FI_REMOTE_READ);
  // Without FI_MR_VIRT_ADDR the target address is an offset into the region;
  // we carry the region base inside our own key (see memory.cc), which needs
  // a key we choose ourselves, i.e. no FI_MR_PROV_KEY.
  caps.rma = has_rma && info.domain_attr->mr_key_size <= 8 && (caps.virt_addr || !caps.prov_key);
  caps.inject_size = caps.rma ? info.tx_attr->inject_size : 0;
  return caps;
}

namespace {

// fi_getinfo found no provider: says why as far as it can tell (a short
// /dev/shm for shm, an FI_TCP_IFACE naming nothing, no EFA on this host).
void report_none_found(int rc, const std::string& filter) {
  // libfabric's shm provider answers nothing when /dev/shm is short of
  // room for its queues: say how much there is.
  const char* env = std::getenv("FI_PROVIDER");
  const std::string asked = filter.empty() && env != nullptr ? env : filter;
  const std::string shm_note =
      asked.find("shm") != std::string::npos
          ? "; libfabric's shm provider also refuses when /dev/shm lacks room for its queues "
            "(/dev/shm has " +
                shm_room::room_text() + ")"
          : "";
  const std::string iface = names_tcp(asked) ? unknown_tcp_iface() : "";
  const std::string iface_note =
      iface.empty() ? ""
                    : "; " + iface + " (set FI_TCP_IFACE to one of those interfaces, or unset it)";
  // Only the default filter can be expected to find nothing: FI_PROVIDER
  // names a provider someone asked for.
  const std::string absence = filter == kDefaultProvider ? efa_absence() : "";
  if (absence.empty()) {
    OFI_WARN(
        "NET/OFI No eligible providers were found (provider %s, FI_EP_RDM, tagged "
        "messages): %s%s%s",
        filter.empty() ? "from FI_PROVIDER" : filter.c_str(), fi_error_text(rc).c_str(),
        shm_note.c_str(), iface_note.c_str());
  } else {
    OFI_INFO(NCCL_INIT | NCCL_NET,
             "NET/OFI No eligible providers were found (provider %s, FI_EP_RDM, tagged "
             "messages): %s; %s",
             filter.c_str(), fi_error_text(rc).c_str(), absence.c_str());
  }
}

// The first answer decides the provider; its NICs are its distinct domains.
Status distinct_nics(const fi_info* infos, const std::string& provider,
                     std::vector<InfoPtr>* nics) {
  for (const fi_info* info = infos; info != nullptr; info = info->next) {
    if (provider != info->fabric_attr->prov_name) continue;
    bool seen = false;
    for (const InfoPtr& nic : *nics) {
      seen = seen || std::strcmp(nic->domain_attr->name, info->domain_attr->name) == 0;
    }
    if (seen) continue;
    InfoPtr copy(fi_dupinfo(info));
    if (!copy) return ncclSystemError;
    nics->push_back(std::move(copy));
  }
  return ncclSuccess;
}

// A tcp provider whose FI_TCP_IFACE names nothing uses every interface:
// the WARN names those this process took.
void warn_unknown_tcp_iface(const std::vector<InfoPtr>& nics) {
  const std::string iface = unknown_tcp_iface();
  if (iface.empty()) return;
  std::string used;
  for (const InfoPtr& nic : nics)
    used += (used.empty() ? "" : ", ") + std::string(nic->domain_attr->name);
  OFI_WARN(
      "NET/OFI %s: this process uses %s. Set FI_TCP_IFACE to one of the interfaces up "
      "here, or unset it",
      iface.c_str(), used.c_str());
}

// One device per `rails` consecutive NICs.
void group_rails(std::vector<InfoPtr> nics, int rails, Discovery& found) {
  for (size_t first = 0; first < nics.size(); first += static_cast<size_t>(rails)) {
    Device device;
    device.name = nics[first]->domain_attr->name;
    device.caps = decode_caps(*nics[first]);
    device.guid = fnv1a64(found.provider + "/" + device.name);
    for (size_t i = first; i < nics.size() && i < first + static_cast<size_t>(rails); ++i) {
      describe_rail(*nics[i], &device);
      device.rails.push_back(std::move(nics[i]));
    }
    OFI_INFO(NCCL_INIT | NCCL_NET,
             "NET/OFI Device %zu: %s (%zu rail%s), RMA %s, mr_mode 0x%llx, %s progress",
             found.devices.size(), device.name.c_str(), device.rails.size(),
             device.rails.size() == 1 ? "" : "s", device.caps.rma ? "yes" : "no",
             static_cast<unsigned long long>(device.rails[0]->domain_attr->mr_mode),
             device.caps.manual_progress ? "manual" : "auto");
    found.devices.push_back(std::move(device));
  }
}

}  // namespace

Status discover(int rails, Discovery* out) {
  bool filter_known = false;
  std::string filter;
  InfoPtr infos;
  int rc = query(/*rma=*/true, &filter_known, &filter, &infos);
  if (rc == -FI_ENODATA) rc = query(/*rma=*/false, &filter_known, &filter, &infos);
  if (rc == -FI_ENODATA) {
    report_none_found(rc, filter);
    return ncclInternalError;
  }
  if (rc != 0) {
    OFI_WARN("NET/OFI fi_getinfo failed: %s", fi_error_text(rc).c_str());
    return ncclInternalError;
  }
  const std::string provider = infos->fabric_attr->prov_name;
  std::vector<InfoPtr> nics;
  if (const Status s = distinct_nics(infos.get(), provider, &nics); !s.ok()) return s;
  OFI_INFO(NCCL_INIT | NCCL_NET, "NET/OFI Selected provider is %s, fabric is %s (found %d nics)",
           provider.c_str(), infos->fabric_attr->name, static_cast<int>(nics.size()));
  if (names_tcp(provider)) warn_unknown_tcp_iface(nics);
  if (provider == "efa" && fi_version() <= FI_VERSION(1, 21)) {
    OFI_WARN("NET/OFI EFA provider requires at least libfabric version 1.22.0.");
    return ncclInternalError;
  }
  Discovery found;
  found.provider = provider;
  found.fabric = infos->fabric_attr->name;
  found.nics = static_cast<int>(nics.size());
  group_rails(std::move(nics), rails, found);
  *out = std::move(found);
  return ncclSuccess;
}

}  // namespace nccom::ofi
