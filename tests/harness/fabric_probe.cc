// fabric_probe PROVIDER CAPS: whether this machine's libfabric offers an
// FI_EP_RDM endpoint of exactly PROVIDER with the capability bits CAPS
// (decimal). Exit 0 when it does; exit 1, printing why not, when it does
// not; 2 on a usage error. machine::libfabric_provider (machine_fabric.h)
// runs it, in a process of its own.
#include <rdma/fabric.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

namespace {

// Every memory-registration mode and operation mode is accepted: the
// question is what the provider offers, not whether nccom copes with it.
constexpr uint64_t kAnyMrMode = FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |
                                FI_MR_ENDPOINT | FI_MR_HMEM;

// fi_getinfo for RDM endpoints with `caps`, of `provider` when not empty.
int rdm_infos(const char* provider, uint64_t caps, fi_info** out) {
  fi_info* hints = fi_allocinfo();
  if (hints == nullptr) return -FI_ENOMEM;
  hints->caps = caps;
  hints->mode = ~0ULL;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode = static_cast<int>(kAnyMrMode);
  if (provider != nullptr) hints->fabric_attr->prov_name = ::strdup(provider);
  const int rc = fi_getinfo(FI_VERSION(1, 5), nullptr, nullptr, 0, hints, out);
  fi_freeinfo(hints);  // frees prov_name too
  return rc;
}

std::string rdm_providers(uint64_t caps) {
  fi_info* all = nullptr;
  std::set<std::string> names;
  if (rdm_infos(nullptr, caps, &all) == 0)
    for (const fi_info* i = all; i != nullptr; i = i->next) names.insert(i->fabric_attr->prov_name);
  fi_freeinfo(all);
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fabric_probe PROVIDER CAPS\n");
    return 2;
  }
  ::unsetenv("FI_PROVIDER");  // the whole machine, not what a test case selected
  const char* provider = argv[1];
  const uint64_t caps = std::strtoull(argv[2], nullptr, 10);
  fi_info* found = nullptr;
  const int rc = rdm_infos(provider, caps, &found);
  // A core provider's name also selects the layered providers over it
  // ("tcp" finds "tcp;ofi_rxm"): only the exact name counts.
  bool exact = false;
  for (const fi_info* i = found; i != nullptr && !exact; i = i->next)
    exact = std::strcmp(provider, i->fabric_attr->prov_name) == 0;
  fi_freeinfo(found);
  if (exact) return 0;
  const uint32_t v = fi_version();
  std::printf("libfabric %u.%u has no FI_EP_RDM endpoint of provider %s", FI_MAJOR(v), FI_MINOR(v),
              provider);
  if (caps != 0) std::printf(" with %s", fi_tostr(&caps, FI_TYPE_CAPS));
  if (rc != 0 && rc != -FI_ENODATA) std::printf(" (fi_getinfo: %s)", fi_strerror(-rc));
  std::printf("; the RDM providers it has%s: %s", caps != 0 ? " with those caps" : "",
              rdm_providers(caps).c_str());
  return 1;
}
