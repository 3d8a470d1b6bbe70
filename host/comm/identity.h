// Host and process identity for the peer records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nccom::comm {

// Upstream NCCL's getHash: h = 5381; for each byte h = ((h << 5) + h) ^ byte.
uint64_t hash_bytes(const void* data, std::size_t size);

// Hash of this host's identity: `host_id` when not empty (NCCL_HOSTID),
// otherwise the host name and the kernel boot id.
uint64_t host_hash(std::string_view host_id);

// Hash of this process: its pid namespace and pid.
uint64_t pid_hash();

// st_dev of /dev/shm (0 when it does not exist).
uint64_t shm_device();

}  // namespace nccom::comm
