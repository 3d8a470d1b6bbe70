#include "elf_exports.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace nccom::plugin_check {
namespace {

// The file, mapped read-only for as long as this object lives.
class Mapping {
 public:
  explicit Mapping(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error_ = strerror(errno);
      return;
    }
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const unsigned char*>(p);
        size_ = static_cast<std::size_t>(st.st_size);
      } else {
        error_ = strerror(errno);
      }
    } else {
      error_ = "not a regular, non-empty file";
    }
    close(fd);
  }
  ~Mapping() {
    if (data_ != nullptr) munmap(const_cast<unsigned char*>(data_), size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  const std::string& error() const { return error_; }
  // A pointer to `count` objects of T at `offset`, or nullptr if the file is too short.
  template <class T>
  const T* at(std::size_t offset, std::size_t count = 1) const {
    if (data_ == nullptr || offset > size_ || count > (size_ - offset) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(data_ + offset);
  }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
  std::string error_;
};

bool exported(const Elf64_Sym& sym) {
  const unsigned bind = ELF64_ST_BIND(sym.st_info);
  const unsigned visibility = ELF64_ST_VISIBILITY(sym.st_other);
  return sym.st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
         (visibility == STV_DEFAULT || visibility == STV_PROTECTED);
}

}  // namespace

Expected<std::vector<ExportedSymbol>> read_exports(const std::string& path,
                                                   const std::vector<std::string>& names) {
  Mapping file(path);
  if (!file.error().empty()) return fail("cannot read " + path + ": " + file.error());
  const auto* header = file.at<Elf64_Ehdr>(0);
  if (header == nullptr || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) {
    return fail(path + " is not an ELF file");
  }
  if (header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != ELFDATA2LSB ||
      (header->e_machine != EM_X86_64 && header->e_machine != EM_AARCH64)) {
    return fail(path + " is an ELF file for another machine (not 64-bit little-endian)");
  }
  if (header->e_type != ET_DYN) return fail(path + " is an ELF file but not a shared object");
  if (header->e_shentsize != sizeof(Elf64_Shdr))
    return fail(path + ": unexpected section header size");
  const auto* sections = file.at<Elf64_Shdr>(header->e_shoff, header->e_shnum);
  if (sections == nullptr) return fail(path + ": section headers missing or truncated");

  std::vector<ExportedSymbol> found;
  for (const std::string& name : names) found.push_back({name, false, 0});
  for (unsigned i = 0; i < header->e_shnum; ++i) {
    const Elf64_Shdr& s = sections[i];
    if (s.sh_type != SHT_DYNSYM || s.sh_entsize != sizeof(Elf64_Sym) ||
        s.sh_link >= header->e_shnum) {
      continue;
    }
    const Elf64_Shdr& strtab = sections[s.sh_link];
    const auto* symbols = file.at<Elf64_Sym>(s.sh_offset, s.sh_size / sizeof(Elf64_Sym));
    const auto* strings = file.at<char>(strtab.sh_offset, strtab.sh_size);
    if (symbols == nullptr || strings == nullptr) return fail(path + ": .dynsym is truncated");
    for (std::size_t k = 0; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
      const Elf64_Sym& sym = symbols[k];
      if (sym.st_name >= strtab.sh_size || !exported(sym)) continue;
      const char* sym_name = strings + sym.st_name;
      const std::size_t max_len = strtab.sh_size - sym.st_name;
      const std::size_t len = strnlen(sym_name, max_len);
      for (ExportedSymbol& e : found) {
        if (len == e.name.size() && memcmp(sym_name, e.name.data(), len) == 0) {
          e.present = true;
          e.size = sym.st_size;
        }
      }
    }
  }
  return found;
}

}  // namespace nccom::plugin_check
