#include "device_memory.h"

#include "runtime_log.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace nrt_emu::devmem {
namespace {

constexpr size_t kMaxRegionBytes = size_t{1} << 30;

}  // namespace

nccom::Result<Region*> Region::create(size_t bytes) {
  if (bytes == 0 || bytes > kMaxRegionBytes) {
    return nccom::make_error(bytes == 0 ? NRT_INVALID : NRT_RESOURCE,
                             "device memory region of " + std::to_string(bytes) +
                                 " bytes: the size must be in 1.." +
                                 std::to_string(kMaxRegionBytes));
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = (bytes + page - 1) / page * page;
  const int fd = memfd_create("nrt-emu-devmem", MFD_CLOEXEC);
  if (fd < 0) {
    return nccom::make_error(
        NRT_RESOURCE,
        std::string("memfd_create for the device memory region failed: ") + std::strerror(errno));
  }
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    nccom::Error e = nccom::make_error(
        NRT_RESOURCE,
        std::string("ftruncate of the device memory region failed: ") + std::strerror(errno));
    close(fd);
    return e;
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    nccom::Error e =
        nccom::make_error(NRT_RESOURCE, std::string("mmap of the device memory region failed: ") +
                                            std::strerror(errno));
    close(fd);
    return e;
  }
  return new Region(fd, base, size);  // a fresh memfd reads as zeros
}

Region::~Region() {
  munmap(base_, size_);
  close(fd_);
}

size_t Region::offset_of(const volatile void* p) const {
  const auto at = reinterpret_cast<uintptr_t>(p);
  const auto begin = reinterpret_cast<uintptr_t>(base_);
  if (at < begin || at >= begin + size_) return SIZE_MAX;
  return at - begin;
}

void* Region::allocate(size_t bytes, size_t align, const char* what) {
  std::lock_guard lock(mutex_);
  const size_t start = (used_ + align - 1) & ~(align - 1);
  if (bytes == 0 || start > size_ || bytes > size_ - start) {
    log::message(log::Level::Error,
                 "device memory: no room for %s (%zu bytes aligned to %zu): %zu of %zu bytes used",
                 what, bytes, align, used_, size_);
    return nullptr;
  }
  used_ = start + bytes;
  return static_cast<char*>(base_) + start;
}

}  // namespace nrt_emu::devmem
