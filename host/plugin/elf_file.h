// nccom::plugin::check_elf_file — is this file a shared object the dynamic
// loader can map without touching bytes past its end?
//
// dlopen maps every segment a program header names and reads from the
// mapping; a page of a segment that lies past the end of a truncated file
// raises SIGBUS inside the loader, which no caller can handle. So before
// dlopen the file is read with pread (never mapped) and refused when:
//  - it is not a regular file (a FIFO would block dlopen's open);
//  - it is empty, shorter than the ELF identification, or lacks the ELF
//    magic ("not an ELF file");
//  - it is not ELF64 little-endian for this process's machine (the only
//    objects this platform loads);
//  - it is shorter than the 64-byte ELF header;
//  - the program header table, or the section header table when there is
//    one, lies outside the file;
//  - a segment with file content (p_filesz > 0: PT_LOAD, PT_DYNAMIC,
//    PT_INTERP, PT_NOTE, PT_GNU_*, ...) or a section with file content
//    (anything but SHT_NOBITS) ends past the end of the file.
// Every refusal is LoadErrorKind::InvalidFile with a message naming the
// path and what is wrong, e.g. "<path>: truncated or corrupt shared
// library: segment 2 (PT_LOAD) ends at byte 20480 but the file has 4096
// bytes; reinstall or rebuild it". Offsets are compared without overflow.
//
// What it cannot see: a file that changes between this check and dlopen's
// own open, and damage inside the segments' bytes.
#pragma once

#include "plugin/load_error.h"

#include <filesystem>

namespace nccom::plugin {

Result<void, LoadError> check_elf_file(const std::filesystem::path& path);

}  // namespace nccom::plugin
