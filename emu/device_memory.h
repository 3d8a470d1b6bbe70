// Device-side memory the network proxy touches, in shared memory.
//
// On a Trainium host the words libnccom's proxy reads and increments live in
// device BARs or pinned host memory that the device DMAs into: semaphore
// increment registers, the per-fold host index words (enc_net_host_memory_t),
// the dynamic-size input, the device-trigger words of libnrt's task gate.
// The emu keeps them in one memfd region mapped MAP_SHARED, so a second
// process (another rank's runtime, a device model) can map the same file and
// reach the same words. Offsets into the region are the process-independent
// names; pointers are valid only in the mapping that made them.
//
// The region is a bump allocator: objects live until the region is destroyed.
// Thread-safe.
#pragma once

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <nrt_emu.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace nrt_emu::devmem {

class Region {
 public:
  // A zeroed region of `bytes` (rounded up to the page size), or nullptr
  // with the reason in *why (bytes out of 1 B..1 GiB, memfd/mmap failure).
  static nccom::Result<Region*> create(size_t bytes);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  int fd() const { return fd_; }
  void* base() const { return base_; }
  size_t size() const { return size_; }
  // Offset of `p` from the base, or SIZE_MAX when it is not inside.
  size_t offset_of(const volatile void* p) const;

  // `bytes` zeroed bytes aligned to `align` (a power of two), or nullptr with
  // a runtime-log ERROR naming `what` when the region is full.
  void* allocate(size_t bytes, size_t align, const char* what);

 private:
  Region(int fd, void* base, size_t size) : fd_(fd), base_(base), size_(size) {}
  int fd_;
  void* base_;
  size_t size_;
  std::mutex mutex_;
  size_t used_ = 0;
};

// The region behind a C handle (nrt_emu.h), for code inside the emu that
// carves its own objects (the device engine's slots and counters).
Region* region_of(nrt_emu_devmem_t* mem);

}  // namespace nrt_emu::devmem
