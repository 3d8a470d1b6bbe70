#include "comm/identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace nccom::comm {

uint64_t hash_bytes(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t h = 5381;
  for (std::size_t i = 0; i < size; ++i) h = ((h << 5) + h) ^ bytes[i];
  return h;
}

uint64_t host_hash(std::string_view host_id) {
  std::string identity(host_id);
  if (identity.empty()) {
    char name[256] = {0};
    gethostname(name, sizeof name - 1);
    identity = name;
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::string boot_id;
    if (std::getline(boot, boot_id)) identity += boot_id;
  }
  return hash_bytes(identity.data(), identity.size());
}

uint64_t pid_hash() {
  char link[256] = {0};
  const ssize_t n = readlink("/proc/self/ns/pid", link, sizeof link - 1);
  std::string identity = n > 0 ? std::string(link, static_cast<std::size_t>(n)) : std::string();
  identity += std::to_string(getpid());
  return hash_bytes(identity.data(), identity.size());
}

uint64_t shm_device() {
  struct stat st {};
  return stat("/dev/shm", &st) == 0 ? static_cast<uint64_t>(st.st_dev) : 0;
}

}  // namespace nccom::comm
