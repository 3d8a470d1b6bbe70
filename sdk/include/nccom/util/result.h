// nccom::Result — the one result type inside the host.
//
// A function that can fail returns Result<T> (or Result<void>). The function
// that first classifies an error builds the Error with a message that says
// what failed, where, and what to do; callers only propagate it. At the C
// boundary an Error becomes its NRT_STATUS (see docs/decisions.md, "error
// mapping").
#pragma once

#include <nccom/nrt_abi.h>

#include <cassert>
#include <cstddef>
#include <string>
#include <utility>
#include <variant>

namespace nccom {

struct Error {
  NRT_STATUS status = NRT_FAILURE;
  std::string message;
  // Set by in_context: message is the cause's first cause_size bytes, then
  // " (CONTEXT)". 0 while nothing was added.
  std::size_t cause_size = 0;
};

inline Error make_error(NRT_STATUS status, std::string message) {
  return Error{status, std::move(message)};
}

// Adds where an error happened after its cause, so the cause stays first:
// "CAUSE (CONTEXT)". Each further call appends inside the same parentheses,
// innermost first: "CAUSE (INNER; OUTER)".
inline Error in_context(Error e, const std::string& context) {
  if (context.empty()) return e;
  if (e.cause_size == 0 || e.cause_size + 3 > e.message.size()) {
    e.cause_size = e.message.size();
    e.message += " (" + context + ")";
  } else {
    e.message.insert(e.message.size() - 1, "; " + context);
  }
  return e;
}

// The cause alone: message without what in_context added.
inline std::string cause_of(const Error& e) {
  return e.cause_size == 0 ? e.message : e.message.substr(0, e.cause_size);
}

template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

  const E& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }
  E&& take_error() {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, E> v_;
};

template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : err_(std::move(error)), failed_(true) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const E& error() const {
    assert(failed_);
    return err_;
  }
  E&& take_error() {
    assert(failed_);
    return std::move(err_);
  }

 private:
  E err_{};
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace nccom
