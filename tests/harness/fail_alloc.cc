// libnccom_fail_alloc.so — allocation-failure injection for a whole
// process, by LD_PRELOAD: replaces the global operator new (every form) so
// that allocation number NCCOM_FAIL_ALLOC_AT (1-based, counted over every
// thread from the first allocation of the process) throws std::bad_alloc
// (the nothrow forms return NULL). NCCOM_FAIL_ALLOC_MODE=once fails that
// allocation only; =after (the default) fails it and every later one, as
// an exhausted address space would. Without NCCOM_FAIL_ALLOC_AT nothing
// fails; NCCOM_FAIL_ALLOC_COUNT_TO=<file> then receives, at exit, how many
// allocations the process made (the range a sweep covers).
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

std::atomic<unsigned long> g_count{0};
unsigned long g_fail_at = 0;  // 0 = never
bool g_once = false;

__attribute__((constructor)) void read_settings() {
  if (const char* at = std::getenv("NCCOM_FAIL_ALLOC_AT"))
    g_fail_at = std::strtoul(at, nullptr, 10);
  const char* mode = std::getenv("NCCOM_FAIL_ALLOC_MODE");
  g_once = mode != nullptr && std::strcmp(mode, "once") == 0;
}

__attribute__((destructor)) void report_count() {
  const char* path = std::getenv("NCCOM_FAIL_ALLOC_COUNT_TO");
  if (path == nullptr) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char text[32];
  const int n = std::snprintf(text, sizeof text, "%lu\n", g_count.load());
  (void)!::write(fd, text, static_cast<size_t>(n));
  ::close(fd);
}

bool should_fail() {
  const unsigned long n = g_count.fetch_add(1, std::memory_order_relaxed) + 1;
  if (g_fail_at == 0) return false;
  return g_once ? n == g_fail_at : n >= g_fail_at;
}

void* allocate(std::size_t size, std::size_t align) {
  if (should_fail()) return nullptr;
  if (size == 0) size = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(size);
  void* p = nullptr;
  return ::posix_memalign(&p, align, size) == 0 ? p : nullptr;
}

void* allocate_or_throw(std::size_t size, std::size_t align) {
  void* p = allocate(size, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return allocate_or_throw(size, 0); }
void* operator new[](std::size_t size) { return allocate_or_throw(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) {
  return allocate_or_throw(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return allocate_or_throw(size, static_cast<std::size_t>(a));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(size, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
