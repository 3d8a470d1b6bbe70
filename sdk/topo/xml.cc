// XmlNode helpers, number conversion and the writer. The parser is in
// xml_parser.cc.
#include <nccom/topo/xml.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nccom::topo {
namespace {

Error attrError(const XmlNode& node, std::string_view key, std::string_view rule) {
  return make_error(NRT_INVALID, "XML: attribute '" + std::string(key) + "' of " +
                                     node.describe({}) + ": " + std::string(rule));
}

Status checkSetterLimits(const XmlNode& node, std::string_view key, std::string_view value,
                         bool adding, const XmlLimits& limits) {
  if (key.empty() || key.size() > limits.maxNameLength) {
    return attrError(node, key,
                     "name must be 1.." + std::to_string(limits.maxNameLength) + " characters");
  }
  if (value.size() > limits.maxValueLength) {
    return attrError(node, key,
                     "value longer than " + std::to_string(limits.maxValueLength) + " characters");
  }
  if (adding && static_cast<int>(node.attributes().size()) >= limits.maxAttributes) {
    return attrError(
        node, key,
        "more than " + std::to_string(limits.maxAttributes) + " attributes on one element");
  }
  return {};
}

void appendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
}

void writeNode(std::string& out, const XmlNode& node, int depth) {
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  out += '<';
  out += node.name();
  for (const auto& a : node.attributes()) {
    out += ' ';
    out += a.key;
    out += "=\"";
    appendEscaped(out, a.value);
    out += '"';
  }
  if (node.children().empty()) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  for (const auto& child : node.children()) writeNode(out, *child, depth + 1);
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  out += "</";
  out += node.name();
  out += ">\n";
}

int countRec(const XmlNode& node) {
  int n = 1;
  for (const auto& c : node.children()) n += countRec(*c);
  return n;
}

}  // namespace

std::optional<int64_t> parseIntText(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  const std::string s(text);
  if (std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parseFloatText(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  const std::string s(text);
  if (std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> parseHexText(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return std::nullopt;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v;
}

std::string XmlNode::describe(std::string_view source) const {
  std::string s = "<" + name_ + ">";
  if (line_ > 0) {
    s += source.empty() ? std::string(" at line ") : " at " + std::string(source) + ":";
    s += std::to_string(line_) + ":" + std::to_string(column_);
  }
  return s;
}

XmlNode* XmlNode::findChild(std::string_view name) const {
  for (const auto& c : children_) {
    if (c->name_ == name) return c.get();
  }
  return nullptr;
}

std::vector<XmlNode*> XmlNode::childrenNamed(std::string_view name) const {
  std::vector<XmlNode*> out;
  for (const auto& c : children_) {
    if (c->name_ == name) out.push_back(c.get());
  }
  return out;
}

Result<XmlNode*> XmlNode::addChild(std::string name, const XmlLimits& limits) {
  if (name.empty() || name.size() > limits.maxNameLength) {
    return make_error(NRT_INVALID, "XML: element name must be 1.." +
                                       std::to_string(limits.maxNameLength) +
                                       " characters (child of " + describe({}) + ")");
  }
  if (static_cast<int>(children_.size()) >= limits.maxChildren) {
    return make_error(NRT_INVALID, "XML: " + describe({}) + " would have more than " +
                                       std::to_string(limits.maxChildren) + " children");
  }
  children_.push_back(std::make_unique<XmlNode>(std::move(name)));
  children_.back()->parent_ = this;
  return children_.back().get();
}

const std::string* XmlNode::attribute(std::string_view key) const {
  for (const auto& a : attrs_) {
    if (a.key == key) return &a.value;
  }
  return nullptr;
}

Result<std::string> XmlNode::getString(std::string_view key) const {
  const std::string* v = attribute(key);
  if (v == nullptr) return attrError(*this, key, "missing");
  return *v;
}

Result<int64_t> XmlNode::getInt(std::string_view key) const {
  const std::string* v = attribute(key);
  if (v == nullptr) return attrError(*this, key, "missing");
  auto n = parseIntText(*v);
  if (!n) return attrError(*this, key, "'" + *v + "' is not an integer");
  return *n;
}

Result<double> XmlNode::getFloat(std::string_view key) const {
  const std::string* v = attribute(key);
  if (v == nullptr) return attrError(*this, key, "missing");
  auto n = parseFloatText(*v);
  if (!n) return attrError(*this, key, "'" + *v + "' is not a finite number");
  return *n;
}

Result<uint64_t> XmlNode::getHex(std::string_view key) const {
  const std::string* v = attribute(key);
  if (v == nullptr) return attrError(*this, key, "missing");
  auto n = parseHexText(*v);
  if (!n) return attrError(*this, key, "'" + *v + "' is not a 64-bit hex number");
  return *n;
}

Result<int64_t> XmlNode::getIntOr(std::string_view key, int64_t fallback) const {
  if (!hasAttribute(key)) return fallback;
  return getInt(key);
}

Status XmlNode::setAttribute(std::string_view key, std::string_view value,
                             const XmlLimits& limits) {
  for (auto& a : attrs_) {
    if (a.key == key) {
      if (auto st = checkSetterLimits(*this, key, value, false, limits); !st) return st;
      a.value = std::string(value);
      return {};
    }
  }
  if (auto st = checkSetterLimits(*this, key, value, true, limits); !st) return st;
  attrs_.push_back({std::string(key), std::string(value)});
  return {};
}

Status XmlNode::setInt(std::string_view key, int64_t value, const XmlLimits& limits) {
  return setAttribute(key, std::to_string(value), limits);
}

Status XmlNode::setFloat(std::string_view key, double value, const XmlLimits& limits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", value);
  return setAttribute(key, buf, limits);
}

Status XmlNode::setHex(std::string_view key, uint64_t value, const XmlLimits& limits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, value);
  return setAttribute(key, buf, limits);
}

void XmlNode::removeAttribute(std::string_view key) {
  for (auto it = attrs_.begin(); it != attrs_.end(); ++it) {
    if (it->key == key) {
      attrs_.erase(it);
      return;
    }
  }
}

int XmlDocument::countNodes() const { return root ? countRec(*root) : 0; }

std::string writeXml(const XmlNode& root) {
  std::string out;
  writeNode(out, root, 0);
  return out;
}

namespace {

// What to do about a failed write, by its errno.
const char* writeHint(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT: return "free room on that filesystem, or write the file elsewhere";
    case EACCES:
    case EPERM:
    case EROFS: return "make that directory writable for this process, or write the file elsewhere";
    case ENOENT:
    case ENOTDIR: return "create that directory first, or write the file elsewhere";
    case EISDIR: return "the path names a directory: name a file in it instead";
    default: return "write the file elsewhere";
  }
}

std::string errnoText(int err) {
  return std::string(std::strerror(err)) + " (" + writeHint(err) + ")";
}

// write() until all of `text` is out; the bytes written when it stops.
std::size_t writeAll(int fd, const std::string& text, int* err) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = n < 0 ? errno : EIO;
      return done;
    }
    done += static_cast<std::size_t>(n);
  }
  *err = 0;
  return done;
}

std::string writeFailure(const std::string& path, std::size_t done, std::size_t total, int err) {
  return "XML: writing '" + path + "' failed after " + std::to_string(done) + " of " +
         std::to_string(total) + " bytes: " + errnoText(err);
}

// A path that exists and is not a regular file (a device such as
// /dev/stdout, a FIFO) is written as it is: there is nothing to rename over.
Status writeInPlace(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    return make_error(NRT_FAILURE,
                      "XML: cannot open '" + path + "' for writing: " + errnoText(err));
  }
  int err = 0;
  const std::size_t done = writeAll(fd, text, &err);
  ::close(fd);
  if (err != 0) return make_error(NRT_FAILURE, writeFailure(path, done, text.size(), err));
  return {};
}

std::atomic<unsigned> g_tempCounter{0};

}  // namespace

Status writeXmlFile(const XmlNode& root, const std::string& path) {
  const std::string text = writeXml(root);
  // Through a symbolic link the file it names is replaced, not the link.
  std::string target = path;
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists) {
    if (!S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) {
        return make_error(NRT_FAILURE, "XML: cannot write '" + path + "': " + errnoText(EISDIR));
      }
      return writeInPlace(path, text);
    }
    if (char* real = ::realpath(path.c_str(), nullptr); real != nullptr) {
      target = real;
      std::free(real);
    }
  }
  // A temporary beside the target, renamed over it once complete: the path
  // holds the old file or the whole new one, never a part.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = target + ".tmp." + std::to_string(::getpid()) + "." +
           std::to_string(g_tempCounter.fetch_add(1, std::memory_order_relaxed));
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int err = errno;
    return make_error(NRT_FAILURE, "XML: writing '" + path + "' failed: cannot create '" + temp +
                                       "' beside it: " + errnoText(err));
  }
  if (exists) (void)::fchmod(fd, st.st_mode & 07777);  // the replaced file's permissions
  int err = 0;
  const std::size_t done = writeAll(fd, text, &err);
  std::string failure;
  if (err != 0) {
    failure = writeFailure(path, done, text.size(), err);
  } else if (::fsync(fd) != 0) {
    // Filesystems that allocate late (NFS, quotas) report a full disk here.
    err = errno;
    failure = "XML: writing '" + path + "' failed when flushing its " + std::to_string(done) +
              " bytes: " + errnoText(err);
  }
  if (::close(fd) != 0 && failure.empty()) {
    err = errno;
    failure = "XML: writing '" + path + "' failed when closing it after " + std::to_string(done) +
              " bytes: " + errnoText(err);
  }
  if (failure.empty() && ::rename(temp.c_str(), target.c_str()) != 0) {
    err = errno;
    failure = "XML: writing '" + path + "' failed: renaming the complete '" + temp +
              "' over it: " + errnoText(err);
  }
  if (!failure.empty()) {
    ::unlink(temp.c_str());
    return make_error(NRT_FAILURE, failure);
  }
  return {};
}

}  // namespace nccom::topo
