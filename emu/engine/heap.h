// heap.h — the application's device memory: a first-fit allocator over one
// shared-memory region (nrt_emu_ccom_alloc / nrt_emu_ccom_free).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace nrt_emu::engine {

class Heap {
 public:
  static constexpr size_t kAlign = 64;

  Heap() = default;
  void reset(uint8_t* base, size_t size);
  // nullptr when no free range fits (the caller says why).
  void* allocate(size_t bytes);
  // false when p is not a live allocation of this heap.
  bool release(void* p);
  // true when [p, p + bytes) lies inside one live allocation.
  bool contains(const void* p, size_t bytes) const;
  size_t free_bytes() const;
  size_t largest_free() const;

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  mutable std::mutex mutex_;
  std::map<size_t, size_t> free_;  // offset -> length, coalesced
  std::map<size_t, size_t> used_;  // offset -> length
};

}  // namespace nrt_emu::engine
