// The fuzz targets' entry points as the replay test sees them: each
// fuzz_<name>.cc defines LLVMFuzzerTestOneInput, renamed per file by the
// build (CMakeLists.txt) so that all six link into one test binary.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
int nccom_fuzz_unique_id(const uint8_t* data, size_t size);
int nccom_fuzz_hello_header(const uint8_t* data, size_t size);
int nccom_fuzz_ext_info(const uint8_t* data, size_t size);
int nccom_fuzz_root_reply(const uint8_t* data, size_t size);
int nccom_fuzz_peer_record(const uint8_t* data, size_t size);
int nccom_fuzz_leader(const uint8_t* data, size_t size);
}
