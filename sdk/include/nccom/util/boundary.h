// nccom/util/boundary.h — the C boundary of a C++ plugin: no exception
// leaves a slot, and an error reaches the host as a status plus a message.
//
// C++17. An nccom-native slot (transport or topology vtable) runs its body in
// guarded(): the body returns the status, turns an nccom::Error into one with
// fail(), and anything it throws becomes NCCOM_PLUGIN_SYSTEM_ERROR with
// "<who> <slot>: ..." in the caller's buffer. An ncclNet slot runs its body in
// guarded_net(), which logs an escaping exception as a WARN instead, since
// the ncclNet ABI has no message buffer. install_logger() is the logger step
// of an nccom-native init.
//
//   return nccom::util::guarded("P2P", "setup", err, err_len, [&] {
//     auto c = connector_setup(comm, dir, channel, peer, blob_out);
//     if (!c) return nccom::util::fail(c.error(), err, err_len);
//     *connector = *c;
//     return NCCOM_PLUGIN_OK;
//   });
#pragma once

#include <nccom/net_common.h>
#include <nccom/plugin.h>
#include <nccom/util/log.h>
#include <nccom/util/result.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

namespace nccom::util {

// Copies `text` into a caller's buffer (an error message, a description): cut to len - 1
// bytes, always NUL-terminated; nothing is written when `buf` is NULL or `len` is 0.
inline void put_text(char* buf, std::size_t len, const char* text) noexcept {
  if (buf == nullptr || len == 0) return;
  const std::size_t n = text == nullptr ? 0 : std::min(std::strlen(text), len - 1);
  if (n > 0) std::memcpy(buf, text, n);
  buf[n] = '\0';
}
inline void put_text(char* buf, std::size_t len, const std::string& text) noexcept {
  put_text(buf, len, text.c_str());
}

// The status an Error returns at the boundary: NRT_INVALID is the caller's
// fault (NCCOM_PLUGIN_INVALID_ARGUMENT), anything else NCCOM_PLUGIN_ERROR.
inline nccom_plugin_status_t to_status(const Error& e) noexcept {
  return e.status == NRT_INVALID ? NCCOM_PLUGIN_INVALID_ARGUMENT : NCCOM_PLUGIN_ERROR;
}

// Writes the Error's message into the caller's buffer and returns to_status(e).
inline nccom_plugin_status_t fail(const Error& e, char* err, std::size_t len) noexcept {
  put_text(err, len, e.message);
  return to_status(e);
}

namespace detail {

inline const char* or_empty(const char* s) noexcept { return s != nullptr ? s : ""; }

// "<who> <slot>: <what>" into the buffer, formatted in place: the exception
// being handled may be bad_alloc, so nothing here allocates.
inline void put_slot_error(char* err, std::size_t len, const char* who, const char* slot,
                           const char* what) noexcept {
  if (err == nullptr || len == 0) return;
  std::snprintf(err, len, "%s %s: %s", or_empty(who), or_empty(slot), or_empty(what));
}

// The same line as a WARN through this object's logger (log.h).
inline void warn_slot(const char* who, const char* slot, const char* what) noexcept {
  NCCOM_SDK_WARN("%s %s: %s", or_empty(who), or_empty(slot), or_empty(what));
}

}  // namespace detail

// Runs an nccom-native slot's body; an escaping exception is NCCOM_PLUGIN_SYSTEM_ERROR with
// "<who> <slot>: " then "out of memory", its what() or "unknown exception" in err.
template <class F>
nccom_plugin_status_t guarded(const char* who, const char* slot, char* err, std::size_t len,
                              F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    detail::put_slot_error(err, len, who, slot, "out of memory");
  } catch (const std::exception& e) {
    detail::put_slot_error(err, len, who, slot, e.what());
  } catch (...) {
    detail::put_slot_error(err, len, who, slot, "unknown exception");
  }
  return NCCOM_PLUGIN_SYSTEM_ERROR;
}

// Runs an ncclNet slot's body; an escaping exception is a WARN with guarded's text and
// ncclSystemError (ncclInternalError for one that is no std::exception).
template <class F>
ncclResult_t guarded_net(const char* who, const char* slot, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    detail::warn_slot(who, slot, "out of memory");
    return ncclSystemError;
  } catch (const std::exception& e) {
    detail::warn_slot(who, slot, e.what());
    return ncclSystemError;
  } catch (...) {
    detail::warn_slot(who, slot, "unknown exception");
    return ncclInternalError;
  }
}

// An nccom-native init's logger step: set_logger(host->log) if the host API is long enough to
// hold `log` and it is set; returns whether it installed one (otherwise nothing changes).
inline bool install_logger(const nccom_host_api_t* host) noexcept {
  if (host == nullptr || host->struct_size < offsetof(nccom_host_api_t, log) + sizeof host->log ||
      host->log == nullptr) {
    return false;
  }
  set_logger(host->log);
  return true;
}

}  // namespace nccom::util
