// The runtime's log: an in-memory ring of the last kCapacity lines, readable
// through nrt_emu_log_snapshot(), and echoed to stderr according to
// NEURON_RT_LOG_LEVEL (default WARN: errors and warnings are never silent).
//
// Two kinds of lines share the ring:
//   "[nrt] LEVEL: text"           the runtime's own messages (loader, callbacks)
//   "[nccom] action=N: text"      text libnccom forwarded with nec_ndl_printk
// libnccom's lines reach stderr only at INFO or more verbose, since libnccom
// prints its own WARN lines already.
#pragma once

#include <nccom/util/result.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nrt_emu::log {

inline constexpr std::size_t kCapacity = 256;       // lines kept
inline constexpr std::size_t kMaxLineBytes = 4096;  // longer lines are cut

enum class Level : int { Error = 0, Warn = 1, Info = 2, Debug = 3, Trace = 4 };

// A runtime message (printf-style; no trailing newline needed).
void message(Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Text from libnccom: `size` bytes that may lack a NUL (a NUL ends it early);
// each '\n'-separated piece becomes one line tagged with `action`.
void nccom_text(const char* text, std::size_t size, uint32_t action);

// Copies the ring, one '\n'-terminated line each, oldest first, into buf
// (always NUL-terminated when len > 0). Returns the snapshot's full length in
// bytes, without the NUL, like snprintf.
std::size_t snapshot(char* buf, std::size_t len);

void clear();

// OK when NEURON_RT_LOG_LEVEL is unset or names a level, else the error that
// says so (the log itself then keeps the WARN threshold). The runtime's
// entry points that start work (loading libnccom, a communicator's init)
// fail with it: an invalid value is an error, never silently the default.
nccom::Status check_level();

// The cause of a failed libnccom call, as libnccom forwarded it: every line
// that arrives through nccom_text is a WARN (libnccom forwards nothing else,
// whatever its own NCCL_DEBUG level). mark() numbers the lines so far;
// nccom_cause(m) is the message text (after "CCOM WARN ") of the newest line
// since mark m, preferring one the calling thread forwarded, or "" if none.
uint64_t mark();
std::string nccom_cause(uint64_t since);

}  // namespace nrt_emu::log
