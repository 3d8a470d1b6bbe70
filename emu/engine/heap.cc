#include "heap.h"

#include <iterator>

namespace nrt_emu::engine {

void Heap::reset(uint8_t* base, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  base_ = base;
  size_ = size / kAlign * kAlign;
  free_.clear();
  used_.clear();
  if (size_ > 0) free_[0] = size_;
}

void* Heap::allocate(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > size_) return nullptr;
  const size_t need = (bytes + kAlign - 1) / kAlign * kAlign;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const size_t off = it->first;
    const size_t left = it->second - need;
    free_.erase(it);
    if (left > 0) free_[off + need] = left;
    used_[off] = need;
    return base_ + off;
  }
  return nullptr;
}

bool Heap::release(void* p) {
  if (p == nullptr || base_ == nullptr) return false;
  auto* b = static_cast<uint8_t*>(p);
  if (b < base_ || b >= base_ + size_) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = used_.find(static_cast<size_t>(b - base_));
  if (it == used_.end()) return false;
  size_t off = it->first, len = it->second;
  used_.erase(it);
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + len == next->first) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += len;
      return true;
    }
  }
  free_[off] = len;
  return true;
}

bool Heap::contains(const void* p, size_t bytes) const {
  const auto* b = static_cast<const uint8_t*>(p);
  if (base_ == nullptr || b < base_ || b >= base_ + size_) return false;
  const size_t off = static_cast<size_t>(b - base_);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = used_.upper_bound(off);
  if (it == used_.begin()) return false;
  --it;
  return off + bytes <= it->first + it->second;
}

size_t Heap::free_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& [off, len] : free_) n += len;
  return n;
}

size_t Heap::largest_free() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& [off, len] : free_) n = len > n ? len : n;
  return n;
}

}  // namespace nrt_emu::engine
