#include "plugin/elf_file.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace nccom::plugin {
namespace {

#if defined(__x86_64__)
constexpr Elf64_Half kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr Elf64_Half kMachine = EM_AARCH64;
#else
#error "check_elf_file knows the ELF machine of x86-64 and AArch64 only"
#endif

// Section headers read per pread.
constexpr std::size_t kSectionBatch = 256;

const char* machine_name(Elf64_Half machine) {
  switch (machine) {
    case EM_386: return "i386";
    case EM_X86_64: return "x86-64";
    case EM_ARM: return "ARM";
    case EM_AARCH64: return "AArch64";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "S/390";
    case EM_RISCV: return "RISC-V";
  }
  return nullptr;
}

std::string machine_text(Elf64_Half machine) {
  const char* name = machine_name(machine);
  return name != nullptr ? std::string(name) : "machine " + std::to_string(machine);
}

std::string segment_type(Elf64_Word type) {
  switch (type) {
    case PT_LOAD: return "PT_LOAD";
    case PT_DYNAMIC: return "PT_DYNAMIC";
    case PT_INTERP: return "PT_INTERP";
    case PT_NOTE: return "PT_NOTE";
    case PT_SHLIB: return "PT_SHLIB";
    case PT_PHDR: return "PT_PHDR";
    case PT_TLS: return "PT_TLS";
    case PT_GNU_EH_FRAME: return "PT_GNU_EH_FRAME";
    case PT_GNU_STACK: return "PT_GNU_STACK";
    case PT_GNU_RELRO: return "PT_GNU_RELRO";
#ifdef PT_GNU_PROPERTY
    case PT_GNU_PROPERTY: return "PT_GNU_PROPERTY";
#endif
  }
  char text[32];
  std::snprintf(text, sizeof text, "type 0x%x", static_cast<unsigned>(type));
  return text;
}

// Reads up to `n` bytes at `offset`; the count read (short only at the end
// of the file), or -1 with errno set.
ssize_t read_at(int fd, void* buf, std::size_t n, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r =
        ::pread(fd, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

// Whether [offset, offset + length) lies inside a file of `size` bytes,
// without computing offset + length (which may overflow).
bool inside(std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
  return offset <= size && length <= size - offset;
}

// "ends at byte X" (the exclusive end), or "ends beyond 2^64" when X does not
// fit in 64 bits.
std::string end_text(std::uint64_t offset, std::uint64_t length) {
  std::uint64_t end = 0;
  if (__builtin_add_overflow(offset, length, &end)) return "ends beyond byte 2^64";
  return "ends at byte " + std::to_string(end);
}

class Checker {
 public:
  explicit Checker(const std::filesystem::path& path) : path_(path), where_(path.string() + ": ") {}

  Result<void, LoadError> run();

 private:
  LoadError invalid(const std::string& what) const {
    return LoadError{LoadErrorKind::InvalidFile, path_.string(), where_ + what};
  }
  // The common refusal of a file whose tables or contents end past its end.
  LoadError truncated(const std::string& what) const {
    return invalid("truncated or corrupt shared library: " + what + " but the file has " +
                   std::to_string(size_) + " bytes; reinstall or rebuild it");
  }
  LoadError io_error(const char* call) const {
    return invalid(std::string("cannot check it before loading: ") + call + ": " +
                   std::strerror(errno) + "; check the file's permissions");
  }

  Result<void, LoadError> check_header(const unsigned char* bytes, std::size_t n);
  Result<void, LoadError> check_segments(const Elf64_Ehdr& header);
  Result<void, LoadError> check_sections(const Elf64_Ehdr& header);

  const std::filesystem::path& path_;
  const std::string where_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

Result<void, LoadError> Checker::run() {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) {
    // dlopen gives the loader's own words for this (e.g. permission denied).
    return {};
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd_};
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return io_error("fstat");
  if (!S_ISREG(st.st_mode)) {
    return invalid(
        "not a regular file, so not a shared library; give the path of a plugin's "
        ".so file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  if (size_ == 0)
    return invalid("empty file (0 bytes), not a shared library; reinstall or rebuild it");

  Elf64_Ehdr header{};
  const ssize_t n = read_at(fd_, &header, sizeof header, 0);
  if (n < 0) return io_error("pread");
  if (auto checked = check_header(reinterpret_cast<const unsigned char*>(&header),
                                  static_cast<std::size_t>(n));
      !checked) {
    return checked;
  }
  if (auto checked = check_segments(header); !checked) return checked;
  return check_sections(header);
}

Result<void, LoadError> Checker::check_header(const unsigned char* bytes, std::size_t n) {
  if (n < SELFMAG || std::memcmp(bytes, ELFMAG, SELFMAG) != 0) {
    return invalid(
        "not an ELF file (it does not start with the ELF magic \\177ELF), so not a "
        "shared library; give the path of a plugin's .so file");
  }
  if (n > EI_CLASS && bytes[EI_CLASS] == ELFCLASS32) {
    return invalid(
        "a 32-bit ELF file (ELFCLASS32); this process loads only 64-bit "
        "(ELFCLASS64) shared libraries: rebuild it for " +
        machine_text(kMachine));
  }
  if (n > EI_CLASS && bytes[EI_CLASS] != ELFCLASS64) {
    return invalid("an ELF file of unknown class " + std::to_string(bytes[EI_CLASS]) +
                   "; this process loads only 64-bit (ELFCLASS64) shared libraries: reinstall "
                   "or rebuild it");
  }
  if (n > EI_DATA && bytes[EI_DATA] != ELFDATA2LSB) {
    return invalid(std::string("an ELF file ") +
                   (bytes[EI_DATA] == ELFDATA2MSB
                        ? "in big-endian byte order (ELFDATA2MSB)"
                        : "of unknown byte order " + std::to_string(bytes[EI_DATA])) +
                   "; this process loads only little-endian (ELFDATA2LSB) shared libraries: "
                   "rebuild it for " +
                   machine_text(kMachine));
  }
  if (n < sizeof(Elf64_Ehdr)) {
    return truncated("the 64-byte ELF header ends at byte " + std::to_string(sizeof(Elf64_Ehdr)));
  }
  Elf64_Ehdr header;
  std::memcpy(&header, bytes, sizeof header);
  if (header.e_machine != kMachine) {
    return invalid("built for " + machine_text(header.e_machine) + " (e_machine " +
                   std::to_string(header.e_machine) + "); this process is " +
                   machine_text(kMachine) + ": rebuild it for " + machine_text(kMachine));
  }
  return {};
}

Result<void, LoadError> Checker::check_segments(const Elf64_Ehdr& header) {
  if (header.e_phnum == 0) return {};
  if (header.e_phentsize != sizeof(Elf64_Phdr)) {
    return invalid("corrupt shared library: program headers of " +
                   std::to_string(header.e_phentsize) + " bytes, an ELF64 one has " +
                   std::to_string(sizeof(Elf64_Phdr)) + "; reinstall or rebuild it");
  }
  const std::uint64_t table_bytes = std::uint64_t{header.e_phnum} * sizeof(Elf64_Phdr);
  if (!inside(header.e_phoff, table_bytes, size_)) {
    return truncated("the program header table (" + std::to_string(header.e_phnum) +
                     " entries at byte " + std::to_string(header.e_phoff) + ") " +
                     end_text(header.e_phoff, table_bytes));
  }
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  const ssize_t n = read_at(fd_, segments.data(), table_bytes, header.e_phoff);
  if (n < 0) return io_error("pread");
  if (static_cast<std::uint64_t>(n) != table_bytes) {
    return truncated(
        "the program header table could not be read whole (the file shrank while "
        "being checked)");
  }
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Elf64_Phdr& p = segments[i];
    if (p.p_filesz == 0 || inside(p.p_offset, p.p_filesz, size_)) continue;
    return truncated("segment " + std::to_string(i) + " (" + segment_type(p.p_type) + ") " +
                     end_text(p.p_offset, p.p_filesz));
  }
  return {};
}

Result<void, LoadError> Checker::check_sections(const Elf64_Ehdr& header) {
  if (header.e_shoff == 0) return {};  // no section header table (allowed)
  if (header.e_shentsize != sizeof(Elf64_Shdr)) {
    return invalid("corrupt shared library: section headers of " +
                   std::to_string(header.e_shentsize) + " bytes, an ELF64 one has " +
                   std::to_string(sizeof(Elf64_Shdr)) + "; reinstall or rebuild it");
  }
  if (!inside(header.e_shoff, sizeof(Elf64_Shdr), size_)) {
    return truncated("the section header table (at byte " + std::to_string(header.e_shoff) + ") " +
                     end_text(header.e_shoff, sizeof(Elf64_Shdr)));
  }
  // Section 0 holds the count when e_shnum is 0 (more than 0xff00 sections).
  std::uint64_t count = header.e_shnum;
  if (count == 0) {
    Elf64_Shdr first{};
    if (read_at(fd_, &first, sizeof first, header.e_shoff) != sizeof first)
      return io_error("pread");
    count = first.sh_size;
  }
  if (count > (size_ - header.e_shoff) / sizeof(Elf64_Shdr)) {
    std::uint64_t table_bytes = 0;
    const bool fits = !__builtin_mul_overflow(count, sizeof(Elf64_Shdr), &table_bytes);
    return truncated("the section header table (" + std::to_string(count) + " entries at byte " +
                     std::to_string(header.e_shoff) + ") " +
                     (fits ? end_text(header.e_shoff, table_bytes) : "ends beyond byte 2^64"));
  }
  std::vector<Elf64_Shdr> batch(kSectionBatch);
  for (std::uint64_t first = 0; first < count; first += kSectionBatch) {
    const std::size_t k =
        static_cast<std::size_t>(std::min<std::uint64_t>(kSectionBatch, count - first));
    const std::uint64_t bytes = k * sizeof(Elf64_Shdr);
    const ssize_t n =
        read_at(fd_, batch.data(), bytes, header.e_shoff + first * sizeof(Elf64_Shdr));
    if (n < 0) return io_error("pread");
    if (static_cast<std::uint64_t>(n) != bytes) {
      return truncated(
          "the section header table could not be read whole (the file shrank while "
          "being checked)");
    }
    for (std::size_t j = 0; j < k; ++j) {
      const Elf64_Shdr& s = batch[j];
      if (s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL || s.sh_size == 0) continue;
      if (inside(s.sh_offset, s.sh_size, size_)) continue;
      return truncated("section " + std::to_string(first + j) + " " +
                       end_text(s.sh_offset, s.sh_size));
    }
  }
  return {};
}

}  // namespace

Result<void, LoadError> check_elf_file(const std::filesystem::path& path) {
  return Checker(path).run();
}

}  // namespace nccom::plugin
