// The XML parser: one forward pass over the bytes with an explicit stack of
// open elements (no recursion, so depth is only bounded by the limit). Every
// byte is looked at a bounded number of times, so any input costs O(size).
#include <nccom/topo/xml.h>
#include <nccom/util/bounded_file.h>

namespace nccom::topo {

class XmlParser {
 public:
  XmlParser(std::string_view text, std::string_view source, const XmlLimits& limits)
      : text_(text), source_(source), limits_(limits) {}

  Result<XmlDocument> run();

 private:
  bool eof() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool startsWith(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void advance(std::size_t n) {
    for (std::size_t i = 0; i < n && !eof(); ++i) advance();
  }
  static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static bool isNameStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
  }
  static bool isNameChar(char c) {
    return isNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
  }
  void skipSpace() {
    while (!eof() && isSpace(peek())) advance();
  }

  Error fail(const std::string& rule) const { return failAt(line_, col_, rule); }
  Error failAt(int line, int col, const std::string& rule) const {
    return make_error(NRT_INVALID, std::string(source_) + ":" + std::to_string(line) + ":" +
                                       std::to_string(col) + ": XML error: " + rule);
  }
  static std::string quoteChar(char c) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(c));
      return buf;
    }
    return std::string("'") + c + "'";
  }

  Result<std::string> parseName(const char* what);
  Status skipComment();
  Status skipProlog();
  Status parseCloseTag();
  Status parseOpenTag();
  Status parseAttribute(XmlNode& node);
  Result<std::string> parseAttrValue(std::string_view key);

  std::string_view text_;
  std::string_view source_;
  const XmlLimits& limits_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  int nodes_ = 0;
  bool seenProlog_ = false;
  std::unique_ptr<XmlNode> root_;
  std::vector<XmlNode*> open_;
};

Result<std::string> XmlParser::parseName(const char* what) {
  if (eof()) return fail(std::string("unexpected end of input, expected ") + what + " name");
  if (!isNameStart(peek()))
    return fail(std::string("bad character ") + quoteChar(peek()) + " at the start of " + what +
                " name");
  const std::size_t start = pos_;
  while (!eof() && isNameChar(peek())) {
    if (pos_ - start >= limits_.maxNameLength) {
      return fail(std::string(what) + " name longer than " + std::to_string(limits_.maxNameLength) +
                  " characters");
    }
    advance();
  }
  return std::string(text_.substr(start, pos_ - start));
}

Status XmlParser::skipComment() {
  const int line = line_, col = col_;
  advance(4);  // "<!--"
  while (!eof()) {
    if (startsWith("-->")) {
      advance(3);
      return {};
    }
    advance();
  }
  return failAt(line, col, "unterminated comment (no '-->')");
}

Status XmlParser::skipProlog() {
  const int line = line_, col = col_;
  if (root_ || !open_.empty() || seenProlog_) {
    return fail(
        "processing instruction '<?' only allowed as one <?xml ...?> prolog before the root "
        "element");
  }
  seenProlog_ = true;
  if (!startsWith("<?xml") || !isSpace(peek(5)))
    return fail("only the <?xml ...?> processing instruction is supported");
  advance(5);
  while (!eof()) {
    if (startsWith("?>")) {
      advance(2);
      return {};
    }
    advance();
  }
  return failAt(line, col, "unterminated <?xml prolog (no '?>')");
}

Status XmlParser::parseCloseTag() {
  const int line = line_, col = col_;
  advance(2);  // "</"
  auto name = parseName("closing tag");
  if (!name) return name.take_error();
  skipSpace();
  if (eof()) return fail("unexpected end of input in closing tag </" + *name);
  if (peek() != '>')
    return fail("bad character " + quoteChar(peek()) + " in closing tag </" + *name +
                ", expected '>'");
  advance();
  if (open_.empty())
    return failAt(line, col, "closing tag </" + *name + "> without an open element");
  const XmlNode* top = open_.back();
  if (top->name() != *name) {
    return failAt(line, col,
                  "mismatched closing tag </" + *name + ">, expected </" + top->name() +
                      "> for the element opened at " + std::to_string(top->line()) + ":" +
                      std::to_string(top->column()));
  }
  open_.pop_back();
  return {};
}

Result<std::string> XmlParser::parseAttrValue(std::string_view key) {
  const char quote = peek();
  if (quote != '"' && quote != '\'') {
    return fail("value of attribute '" + std::string(key) + "' must be in single or double quotes");
  }
  advance();
  std::string value;
  while (true) {
    if (eof()) return fail("unterminated value of attribute '" + std::string(key) + "'");
    const char c = peek();
    if (c == quote) break;
    if (c == '<')
      return fail("bad character '<' in the value of attribute '" + std::string(key) + "'");
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      return fail("bad character " + quoteChar(c) + " in the value of attribute '" +
                  std::string(key) + "'");
    }
    if (c == '&') {
      static constexpr std::pair<std::string_view, char> kEntities[] = {
          {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
      bool matched = false;
      for (const auto& [ref, ch] : kEntities) {
        if (startsWith(ref)) {
          value += ch;
          advance(ref.size());
          matched = true;
          break;
        }
      }
      if (!matched)
        return fail("unknown entity reference in attribute '" + std::string(key) +
                    "' (only &lt; &gt; &amp; &quot; &apos;)");
    } else {
      value += c;
      advance();
    }
    if (value.size() > limits_.maxValueLength) {
      return fail("value of attribute '" + std::string(key) + "' longer than " +
                  std::to_string(limits_.maxValueLength) + " characters");
    }
  }
  advance();  // closing quote
  return value;
}

Status XmlParser::parseAttribute(XmlNode& node) {
  const int line = line_, col = col_;
  auto key = parseName("attribute");
  if (!key) return key.take_error();
  skipSpace();
  if (eof() || peek() != '=') return fail("expected '=' after attribute name '" + *key + "'");
  advance();
  skipSpace();
  auto value = parseAttrValue(*key);
  if (!value) return value.take_error();
  if (node.hasAttribute(*key))
    return failAt(line, col, "duplicate attribute '" + *key + "' on <" + node.name() + ">");
  if (static_cast<int>(node.attrs_.size()) >= limits_.maxAttributes) {
    return failAt(line, col,
                  "too many attributes on <" + node.name() + "> (limit " +
                      std::to_string(limits_.maxAttributes) + ")");
  }
  node.attrs_.push_back({std::move(*key), std::move(*value)});
  return {};
}

Status XmlParser::parseOpenTag() {
  const int line = line_, col = col_;
  if (root_ && open_.empty())
    return fail("trailing garbage: a second root element after </" + root_->name() + ">");
  advance();  // "<"
  auto name = parseName("element");
  if (!name) return name.take_error();
  if (nodes_ >= limits_.maxNodes)
    return failAt(line, col, "too many elements (limit " + std::to_string(limits_.maxNodes) + ")");
  if (static_cast<int>(open_.size()) >= limits_.maxDepth) {
    return failAt(line, col,
                  "elements nested too deep (limit " + std::to_string(limits_.maxDepth) + ")");
  }
  XmlNode* node;
  if (open_.empty()) {
    root_ = std::make_unique<XmlNode>(std::move(*name));
    node = root_.get();
  } else {
    XmlNode* parent = open_.back();
    if (static_cast<int>(parent->children_.size()) >= limits_.maxChildren) {
      return failAt(line, col,
                    "too many children in <" + parent->name() + "> (limit " +
                        std::to_string(limits_.maxChildren) + ")");
    }
    parent->children_.push_back(std::make_unique<XmlNode>(std::move(*name)));
    node = parent->children_.back().get();
    node->parent_ = parent;
  }
  node->setLocation(line, col);
  ++nodes_;
  while (true) {
    const bool spaced = !eof() && isSpace(peek());
    skipSpace();
    if (eof())
      return failAt(line, col, "unclosed tag <" + node->name() + " (end of input inside the tag)");
    if (startsWith("/>")) {
      advance(2);
      return {};
    }
    if (peek() == '>') {
      advance();
      open_.push_back(node);
      return {};
    }
    if (!isNameStart(peek()))
      return fail("bad character " + quoteChar(peek()) + " in tag <" + node->name() + ">");
    if (!spaced) return fail("missing whitespace before attribute in tag <" + node->name() + ">");
    if (auto st = parseAttribute(*node); !st) return st;
  }
}

Result<XmlDocument> XmlParser::run() {
  if (text_.size() > limits_.maxInputBytes) {
    return failAt(1, 1,
                  "input of " + std::to_string(text_.size()) + " bytes exceeds the limit of " +
                      std::to_string(limits_.maxInputBytes));
  }
  if (startsWith("\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 byte order mark
  while (true) {
    skipSpace();
    if (eof()) break;
    Status st;
    if (peek() != '<') {
      if (peek() == '\0') return fail("bad character 0x00 (NUL byte)");
      if (open_.empty()) {
        st = root_ ? fail("trailing garbage after the root element </" + root_->name() + ">")
                   : fail("bad character " + quoteChar(peek()) + " before the root element");
      } else {
        st = fail("text content is not supported (inside <" + open_.back()->name() + ">)");
      }
    } else if (startsWith("<!--")) {
      st = skipComment();
    } else if (startsWith("<?")) {
      st = skipProlog();
    } else if (startsWith("<!")) {
      st = fail("<!DOCTYPE and <![CDATA[ are not supported");
    } else if (startsWith("</")) {
      st = parseCloseTag();
    } else {
      st = parseOpenTag();
    }
    if (!st) return st.take_error();
  }
  if (!open_.empty()) {
    const XmlNode* top = open_.back();
    return fail("unclosed tag <" + top->name() + "> opened at " + std::to_string(top->line()) +
                ":" + std::to_string(top->column()) + " (end of input)");
  }
  if (!root_) return fail("no root element");
  XmlDocument doc;
  doc.source = std::string(source_);
  doc.root = std::move(root_);
  return doc;
}

Result<XmlDocument> parseXml(std::string_view text, std::string_view source,
                             const XmlLimits& limits) {
  return XmlParser(text, source, limits).run();
}

Result<XmlDocument> parseXmlFile(const std::string& path, const XmlLimits& limits) {
  auto text = read_bounded_file(path, limits.maxInputBytes, "XML file '" + path + "'");
  if (!text) return text.take_error();
  return parseXml(*text, path, limits);
}

}  // namespace nccom::topo
