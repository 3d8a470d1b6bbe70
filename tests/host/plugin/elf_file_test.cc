// A plugin file is checked before dlopen: truncated copies of a real built
// plugin, a text file, ELF headers of another class, byte order or machine,
// tables pointing past the end of the file. Each is refused in this process
// with InvalidFile and a message naming the file; none reaches the dynamic
// loader, which would die with SIGBUS on the truncated ones.
#include "plugin/elf_file.h"

#include "child_process.h"
#include "plugin/shared_library.h"
#include "test_host.h"

#include <elf.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace nccom::plugin {
namespace {

using test::plugin_file;

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// The error of SharedLibrary::open, failing the test if it loaded.
LoadError open_error(const std::string& path) {
  auto lib = SharedLibrary::open(path);
  if (lib.ok()) {
    ADD_FAILURE() << path << " loaded";
    return {};
  }
  return lib.error();
}

class PluginElfFile : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = read_all(plugin_file("good"));
    ASSERT_GT(good_.size(), 8192u) << "the built plugin is the source of the truncated copies";
  }
  std::string copy(const std::string& name, std::vector<char> bytes) const {
    return write_file(dir_.path() + "/" + name, bytes);
  }
  std::vector<char> prefix(std::size_t n) const {
    return std::vector<char>(good_.begin(), good_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  Elf64_Ehdr header_of(const std::vector<char>& bytes) const {
    Elf64_Ehdr h;
    std::memcpy(&h, bytes.data(), sizeof h);
    return h;
  }
  static void put_header(std::vector<char>& bytes, const Elf64_Ehdr& h) {
    std::memcpy(bytes.data(), &h, sizeof h);
  }

  nccom_test::TempDir dir_;
  std::vector<char> good_;
};

TEST_F(PluginElfFile, TheIntactPluginPassesAndLoads) {
  const std::string path = copy("libintact.so", good_);
  EXPECT_TRUE(check_elf_file(path).ok());
  auto lib = SharedLibrary::open(path);
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  EXPECT_NE(lib->symbol(NCCOM_PLUGIN_SYMBOL), nullptr);
}

TEST_F(PluginElfFile, TruncatedCopiesAreRefusedInProcess) {
  struct Cut {
    std::size_t bytes;
    std::string expected;  // after "<path>: "
  };
  const std::size_t size = good_.size();
  const std::string reinstall = "; reinstall or rebuild it";
  const std::vector<Cut> cuts = {
      {0, "empty file (0 bytes), not a shared library" + reinstall},
      {3, "not an ELF file (it does not start with the ELF magic \\177ELF)"},
      {10,
       "truncated or corrupt shared library: the 64-byte ELF header ends at byte 64 but the "
       "file has 10 bytes" +
           reinstall},
      {63, "the 64-byte ELF header ends at byte 64 but the file has 63 bytes"},
      {64, "truncated or corrupt shared library: the program header table ("},
      {4096, "truncated or corrupt shared library: segment "},
      {size / 2, "truncated or corrupt shared library: "},
      {size - 1, "truncated or corrupt shared library: "},
  };
  for (const Cut& cut : cuts) {
    const std::string path = copy("libcut-" + std::to_string(cut.bytes) + ".so", prefix(cut.bytes));
    const LoadError e = open_error(path);
    EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile) << cut.bytes << ": " << e.message;
    EXPECT_EQ(e.path, path);
    EXPECT_EQ(e.message.rfind(path + ": ", 0), 0u) << e.message;
    EXPECT_NE(e.message.find(cut.expected), std::string::npos) << cut.bytes << ": " << e.message;
    if (cut.bytes >= 10) {
      EXPECT_NE(
          e.message.find("but the file has " + std::to_string(cut.bytes) + " bytes" + reinstall),
          std::string::npos)
          << e.message;
    }
  }
}

// At 4096 bytes the ELF header and the program headers are whole, so the
// check names the first segment that ends past the end of the file.
TEST_F(PluginElfFile, FirstSegmentPastTheEndIsNamedWithItsEnd) {
  const Elf64_Ehdr h = header_of(good_);
  ASSERT_EQ(h.e_phentsize, sizeof(Elf64_Phdr));
  std::size_t first = h.e_phnum;
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr p;
    std::memcpy(&p, good_.data() + h.e_phoff + i * sizeof p, sizeof p);
    if (p.p_filesz > 0 && p.p_offset + p.p_filesz > 4096) {
      first = i;
      end = p.p_offset + p.p_filesz;
      break;
    }
  }
  ASSERT_LT(first, h.e_phnum) << "every segment of the built plugin fits in 4096 bytes";
  const std::string path = copy("lib4096.so", prefix(4096));
  const LoadError e = open_error(path);
  EXPECT_NE(e.message.find("segment " + std::to_string(first) + " ("), std::string::npos)
      << e.message;
  EXPECT_NE(
      e.message.find(") ends at byte " + std::to_string(end) + " but the file has 4096 bytes"),
      std::string::npos)
      << e.message;
}

TEST_F(PluginElfFile, TextFileIsNotAnElfFile) {
  const LoadError e = open_error(plugin_file("garbage"));
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
  EXPECT_EQ(e.message, plugin_file("garbage") +
                           ": not an ELF file (it does not start with the ELF magic \\177ELF), so "
                           "not a shared library; give the path of a plugin's .so file");
}

TEST_F(PluginElfFile, ThirtyTwoBitElfHeaderIsRefused) {
  Elf32_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS32;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
  h.e_machine = EM_386;
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof h;
  std::vector<char> bytes(sizeof h + 4096, '\0');
  std::memcpy(bytes.data(), &h, sizeof h);
  const LoadError e = open_error(copy("lib32.so", bytes));
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
  EXPECT_NE(e.message.find("a 32-bit ELF file (ELFCLASS32); this process loads only 64-bit "
                           "(ELFCLASS64) shared libraries: rebuild it for "),
            std::string::npos)
      << e.message;
}

TEST_F(PluginElfFile, BigEndianAndOtherMachinesAreRefused) {
  std::vector<char> big_endian = good_;
  big_endian[EI_DATA] = ELFDATA2MSB;
  LoadError e = open_error(copy("libmsb.so", big_endian));
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
  EXPECT_NE(e.message.find("in big-endian byte order (ELFDATA2MSB)"), std::string::npos)
      << e.message;

  std::vector<char> other = good_;
  Elf64_Ehdr h = header_of(other);
  h.e_machine = h.e_machine == EM_X86_64 ? EM_AARCH64 : EM_X86_64;
  put_header(other, h);
  e = open_error(copy("libother.so", other));
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
  EXPECT_NE(
      e.message.find(h.e_machine == EM_AARCH64 ? "built for AArch64 (e_machine 183); this process "
                                                 "is x86-64: rebuild it for x86-64"
                                               : "built for x86-64 (e_machine 62); this process "
                                                 "is AArch64: rebuild it for AArch64"),
      std::string::npos)
      << e.message;
}

// Offsets near 2^64 must not wrap around into "inside the file".
TEST_F(PluginElfFile, TablesAndSegmentsPointingPastTheEndDoNotOverflow) {
  std::vector<char> far_table = good_;
  Elf64_Ehdr h = header_of(far_table);
  h.e_phoff = UINT64_MAX - 8;
  put_header(far_table, h);
  LoadError e = open_error(copy("libphoff.so", far_table));
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
  EXPECT_NE(e.message.find("the program header table (" + std::to_string(h.e_phnum) +
                           " entries at byte 18446744073709551607) ends beyond byte 2^64"),
            std::string::npos)
      << e.message;

  std::vector<char> far_segment = good_;
  h = header_of(far_segment);
  Elf64_Phdr p;
  std::memcpy(&p, far_segment.data() + h.e_phoff, sizeof p);
  p.p_offset = UINT64_MAX - 16;
  p.p_filesz = 32;
  std::memcpy(far_segment.data() + h.e_phoff, &p, sizeof p);
  e = open_error(copy("libsegment.so", far_segment));
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
  EXPECT_NE(e.message.find("segment 0 ("), std::string::npos) << e.message;
  EXPECT_NE(e.message.find(") ends beyond byte 2^64 but the file has " +
                           std::to_string(good_.size()) + " bytes"),
            std::string::npos)
      << e.message;

  std::vector<char> far_sections = good_;
  h = header_of(far_sections);
  ASSERT_NE(h.e_shoff, 0u);
  h.e_shoff = good_.size() - 8;
  put_header(far_sections, h);
  e = open_error(copy("libshoff.so", far_sections));
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
  EXPECT_NE(
      e.message.find("the section header table (at byte " + std::to_string(good_.size() - 8) + ")"),
      std::string::npos)
      << e.message;
}

// A FIFO would block dlopen's own open until a writer came.
TEST_F(PluginElfFile, FifoAndDirectoryAreRefusedWithoutBlocking) {
  const std::string fifo = dir_.path() + "/libfifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  LoadError e = open_error(fifo);
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
  EXPECT_EQ(e.message, fifo +
                           ": not a regular file, so not a shared library; give the path of a "
                           "plugin's .so file");
  e = open_error(dir_.path());
  EXPECT_EQ(e.kind, LoadErrorKind::InvalidFile);
}

}  // namespace
}  // namespace nccom::plugin
