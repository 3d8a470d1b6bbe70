// A small DOM for NCCL topology and graph XML: elements with ordered attributes
// and children, a bounded parser that never trusts its input, and a
// deterministic writer in NCCL's dump layout.
//
// Only the subset NCCL reads and writes is accepted: elements, attributes in
// single or double quotes, self-closing tags, the five predefined entity
// references, an optional `<?xml ...?>` prolog and comments (both skipped).
// Anything else — text content, CDATA, DOCTYPE, a second root — is an error
// naming `source:line:col` and the rule broken.
#pragma once

#include <nccom/util/result.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::topo {

// Limits of the parser and of the setters. The defaults are NCCL's build
// constants (MAX_STR_LEN, MAX_ATTR_COUNT, MAX_SUBS, MAX_NODES of the Neuron
// build) plus two of our own: nesting depth and input size.
struct XmlLimits {
  std::size_t maxNameLength = 255;   // element and attribute names
  std::size_t maxValueLength = 255;  // attribute values, after entity decoding
  int maxAttributes = 16;            // per element
  int maxChildren = 256;             // per element
  int maxNodes = 10432;              // elements in one document
  int maxDepth = 64;                 // element nesting
  std::size_t maxInputBytes = 64u << 20;
};

struct XmlAttribute {
  std::string key;
  std::string value;
};

class XmlNode {
 public:
  explicit XmlNode(std::string name) : name_(std::move(name)) {}
  XmlNode(const XmlNode&) = delete;
  XmlNode& operator=(const XmlNode&) = delete;

  const std::string& name() const { return name_; }
  XmlNode* parent() const { return parent_; }
  const std::vector<XmlAttribute>& attributes() const { return attrs_; }
  const std::vector<std::unique_ptr<XmlNode>>& children() const { return children_; }

  // Where the element started in its source (0 when built in memory).
  int line() const { return line_; }
  int column() const { return column_; }
  void setLocation(int line, int column) {
    line_ = line;
    column_ = column;
  }
  // "<name> at source:line:col" (or "<name>" when built in memory).
  std::string describe(std::string_view source) const;

  // First child with this name, or null. childrenNamed: all, in order.
  XmlNode* findChild(std::string_view name) const;
  std::vector<XmlNode*> childrenNamed(std::string_view name) const;
  // Appends a child; errors when the child limit would be exceeded.
  Result<XmlNode*> addChild(std::string name, const XmlLimits& limits = {});

  bool hasAttribute(std::string_view key) const { return attribute(key) != nullptr; }
  // Raw value, or null when absent.
  const std::string* attribute(std::string_view key) const;
  // Typed getters: an error when absent or malformed, naming the attribute
  // and the element. Integers are read as strtol base 0 reads them (as
  // upstream): decimal, 0x-hex, and a leading 0 means octal.
  Result<std::string> getString(std::string_view key) const;
  Result<int64_t> getInt(std::string_view key) const;
  Result<double> getFloat(std::string_view key) const;
  Result<uint64_t> getHex(std::string_view key) const;  // "0x1f" or "1f"
  // Absent: the default; present but malformed: an error.
  Result<int64_t> getIntOr(std::string_view key, int64_t fallback) const;

  // Setters replace an existing value in place (order kept) or append.
  Status setAttribute(std::string_view key, std::string_view value, const XmlLimits& limits = {});
  Status setInt(std::string_view key, int64_t value, const XmlLimits& limits = {});
  Status setFloat(std::string_view key, double value, const XmlLimits& limits = {});  // %g
  Status setHex(std::string_view key, uint64_t value, const XmlLimits& limits = {});  // 0x%lx
  void removeAttribute(std::string_view key);

 private:
  friend class XmlParser;
  std::string name_;
  std::vector<XmlAttribute> attrs_;
  std::vector<std::unique_ptr<XmlNode>> children_;
  XmlNode* parent_ = nullptr;
  int line_ = 0;
  int column_ = 0;
};

// One parsed document: exactly one root element.
struct XmlDocument {
  std::string source = "<string>";  // file path, or "<string>"
  std::unique_ptr<XmlNode> root;

  int countNodes() const;
};

Result<XmlDocument> parseXml(std::string_view text, std::string_view source = "<string>",
                             const XmlLimits& limits = {});
// Reads and parses a file through read_bounded_file (nccom/util/bounded_file.h):
// only a regular file of at most limits.maxInputBytes is read, so a FIFO or
// a device is refused instead of hanging; every error names the path.
Result<XmlDocument> parseXmlFile(const std::string& path, const XmlLimits& limits = {});

// NCCL's dump layout: two spaces per level, attributes in stored order in
// double quotes, `<x .../>` for childless elements, one element per line,
// no prolog, trailing newline. Deterministic: equal trees give equal text.
std::string writeXml(const XmlNode& root);
// Writes writeXml(root) to `path` through a temporary file beside it
// ("<path>.tmp.<pid>.<n>"), flushed with fsync and renamed over the path
// once complete: on any failure the path keeps what it held before (or stays
// absent) and the temporary is removed. Through a symbolic link the file it
// names is replaced; a path that names a device or a FIFO is written in
// place. An error names the path, how many of the bytes were written, the
// system's reason (strerror) and what to do about it, e.g. "XML: writing
// 'x.xml' failed after 4096 of 9000 bytes: No space left on device (free
// room on that filesystem, or write the file elsewhere)".
Status writeXmlFile(const XmlNode& root, const std::string& path);

// Parses a whole string as an integer (strtol base 0, optional sign) /
// float / hex; nullopt when malformed or out of range. Shared by the getters
// and by callers that convert attribute text themselves.
std::optional<int64_t> parseIntText(std::string_view text);
std::optional<double> parseFloatText(std::string_view text);
std::optional<uint64_t> parseHexText(std::string_view text);

}  // namespace nccom::topo
