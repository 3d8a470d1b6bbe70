// A tiny strict JSON validator (RFC 8259 grammar, no extensions) so tests
// can tell that nccom-test's --json output parses, without a JSON library.
#pragma once

#include <cctype>
#include <cstring>
#include <string>

namespace json_check {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  bool document(std::string* why) {
    ws();
    if (!value()) return fail(why);
    ws();
    if (i_ != s_.size()) return fail(why, "trailing text");
    return true;
  }

 private:
  bool fail(std::string* why, const char* what = "syntax error") {
    *why = std::string(what) + " at offset " + std::to_string(i_);
    return false;
  }
  void ws() {
    while (i_ < s_.size() && std::strchr(" \t\r\n", s_[i_]) != nullptr) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool literal(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  bool string() {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        if (s_[i_] == 'u') {
          for (int k = 0; k < 4; ++k) {
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_])))
              return false;
          }
        } else if (std::strchr("\"\\/bfnrt", s_[i_]) == nullptr) {
          return false;
        }
      }
    }
    return false;
  }
  bool digits() {
    const size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ > start;
  }
  bool number() {
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
      if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
    } else if (!digits()) {
      return false;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digits()) return false;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    return true;
  }
  bool value() {
    ws();
    if (++depth_ > 64 || i_ >= s_.size()) return false;
    bool ok = false;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      ok = eat('}');
      while (!ok) {
        ws();
        if (!string() || !eat(':') || !value()) break;
        if (eat('}')) {
          ok = true;
        } else if (!eat(',')) {
          break;
        }
      }
    } else if (c == '[') {
      ++i_;
      ok = eat(']');
      while (!ok) {
        if (!value()) break;
        if (eat(']')) {
          ok = true;
        } else if (!eat(',')) {
          break;
        }
      }
    } else if (c == '"') {
      ok = string();
    } else if (c == 't' || c == 'f' || c == 'n') {
      ok = literal("true") || literal("false") || literal("null");
    } else {
      ok = number();
    }
    --depth_;
    return ok;
  }

  const std::string& s_;
  size_t i_ = 0;
  int depth_ = 0;
};

inline bool valid(const std::string& text, std::string* why) { return Parser(text).document(why); }

}  // namespace json_check
