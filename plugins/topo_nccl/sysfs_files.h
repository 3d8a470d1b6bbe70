// Bounded, never-blocking reads of sysfs attribute files, and the syntax
// checks detection applies to what it reads.
//
// Detection must survive a broken or hostile tree (tests point it at a fake
// one): a FIFO where a file should be, a symlink loop, a file of megabytes.
// So every read opens non-blocking, insists on a regular file, and reads at
// most one page — a real sysfs attribute is never larger.
#pragma once

#include <nccom/util/result.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nccom::topo_nccl {

inline constexpr std::size_t kMaxAttributeBytes = 4096;  // one page: sysfs's own limit

// The text of one attribute file with trailing whitespace removed.
// nullopt when the file does not exist (ENOENT/ENOTDIR); an Error naming the
// path when it exists but is not a regular file, is a symlink loop, cannot be
// read, or holds more than `maxBytes`.
Result<std::optional<std::string>> readAttribute(const std::string& path,
                                                 std::size_t maxBytes = kMaxAttributeBytes);

// The beginning of a text file up to and including the first empty line
// (one /proc/cpuinfo processor block), at most `maxBytes`. Errors as above;
// a missing file is an error here.
Result<std::string> readFirstBlock(const std::string& path, std::size_t maxBytes);

// "0x" followed by exactly `digits` hex digits ("0x1d0f", "0x060400").
bool isHexId(std::string_view text, int digits);
// A PCI function name as sysfs spells it: "0000:3b:00.0" (4-8 hex digits of
// domain, lower- or upper-case hex, function 0-7).
bool isBusId(std::string_view text);
// A decimal integer within [min, max], optional leading '-', nothing else.
std::optional<long> parseDecimal(std::string_view text, long min, long max);
// sysfs cpulist syntax: "", "3", "0-3,8-11".
bool isCpuList(std::string_view text);
// sysfs cpumap syntax: comma-separated groups of 1-8 hex digits.
bool isCpuMask(std::string_view text);
// Printable ASCII only, 1..maxLength characters (link speed strings).
bool isPrintableText(std::string_view text, std::size_t maxLength);
// `text` with control characters replaced and cut to 40 characters, for
// quoting bad file contents in a message.
std::string quoteForMessage(std::string_view text);

}  // namespace nccom::topo_nccl
