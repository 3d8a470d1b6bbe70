// neuronGetVersionInfo — slot 0, the runtime's compatibility gate.
//
// Callable before anything else, with no side effects: no logging, no
// configuration, no allocation. It writes only the fields the caller's size
// covers, so an older, smaller caller struct is never overrun.
#include "abi/export.h"

#include <cstdint>
#include <cstring>

extern "C" const char nccom_build_git_hash[];  // generated: cmake/WriteBuildId.cmake
extern "C" const char nccom_build_version[];   // "2.31.24.0"

#ifndef NCCOM_COMPAT_ID_VALUE
#error "NCCOM_COMPAT_ID_VALUE must be set by the build (89 for the real library)"
#endif

namespace {

// Parses "a.b.c.d" into four numbers; missing parts stay 0.
void parse_version(const char* text, uint64_t (&parts)[4]) {
  int index = 0;
  for (const char* p = text; *p != '\0' && index < 4; ++p) {
    if (*p == '.') {
      ++index;
    } else if (*p >= '0' && *p <= '9') {
      parts[index] = parts[index] * 10 + static_cast<uint64_t>(*p - '0');
    }
  }
}

void store_u64(nec_version_info_t* out, size_t n, size_t offset, uint64_t value) {
  if (n >= offset + sizeof(uint64_t)) {
    std::memcpy(reinterpret_cast<char*>(out) + offset, &value, sizeof value);
  }
}

}  // namespace

NCCOM_API NRT_STATUS neuronGetVersionInfo(nec_version_info_t* out, size_t n) {
  return nccom::abi::guard("neuronGetVersionInfo", [&]() -> NRT_STATUS {
    if (out == nullptr) return NRT_INVALID;

    uint64_t parts[4] = {0, 0, 0, 0};
    parse_version(nccom_build_version, parts);
    store_u64(out, n, offsetof(nec_version_info_t, major), parts[0]);
    store_u64(out, n, offsetof(nec_version_info_t, minor), parts[1]);
    store_u64(out, n, offsetof(nec_version_info_t, patch), parts[2]);
    store_u64(out, n, offsetof(nec_version_info_t, maintenance), parts[3]);

    if (n >= offsetof(nec_version_info_t, git_hash) + sizeof out->git_hash) {
      std::memset(out->git_hash, 0, sizeof out->git_hash);
      // At most 15 characters: the runtime prints it with %s, and the next
      // field's low byte (0x59) is not a terminator.
      std::strncpy(out->git_hash, nccom_build_git_hash, sizeof out->git_hash - 1);
    }
    store_u64(out, n, offsetof(nec_version_info_t, compatibility_version), NCCOM_COMPAT_ID_VALUE);
    return NRT_SUCCESS;
  });
}
