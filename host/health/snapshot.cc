#include "health/snapshot.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace nccom::health {
namespace {

Error bad(std::size_t line, const std::string& what) {
  return make_error(NRT_INVALID, "health snapshot line " + std::to_string(line) + ": " + what);
}

// key=value words of one line (after its kind); "text=" takes the rest.
using Fields = std::map<std::string_view, std::string_view>;

Fields fields_of(std::string_view rest) {
  Fields f;
  while (!rest.empty()) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) break;
    if (rest.substr(0, 5) == "text=") {
      f["text"] = rest.substr(5);
      break;
    }
    const std::size_t end = rest.find(' ');
    const std::string_view word = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    const std::size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    f[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return f;
}

template <typename T>
bool number(const Fields& f, std::string_view key, T& out, int base = 10) {
  auto it = f.find(key);
  if (it == f.end() || it->second.empty()) return false;
  const char* first = it->second.data();
  const char* last = first + it->second.size();
  auto [ptr, ec] = std::from_chars(first, last, out, base);
  return ec == std::errc() && ptr == last;
}

// A text field; control characters (a peer's escape sequences, say) become '?'.
bool text(const Fields& f, std::string_view key, std::string& out) {
  auto it = f.find(key);
  if (it == f.end()) return false;
  out = std::string(it->second);
  std::replace_if(out.begin(), out.end(), control_char, '?');
  return true;
}

// The lines after "process", one function per kind: each adds to `snap`
// and returns "" or what is wrong with the line.
std::string comm_line(const Fields& f, ProcessSnapshot& snap) {
  CommSnap c;
  if (!number(f, "hash", c.hash, 16) || !number(f, "rank", c.rank) ||
      !number(f, "nranks", c.nranks) || !text(f, "state", c.state) || c.nranks <= 0 || c.rank < 0 ||
      c.rank >= c.nranks)
    return "comm needs hash, rank < nranks and state";
  snap.comms.push_back(c);
  return "";
}

std::string stream_line(const Fields& f, ProcessSnapshot& snap) {
  StreamSnap s;
  int running = 0;
  if (!number(f, "comm", s.comm, 16) || !number(f, "rank", s.rank) || !number(f, "id", s.id) ||
      !number(f, "started", s.started) || !number(f, "completed", s.completed) ||
      !number(f, "running", running) || !number(f, "idle_ms", s.idle_ms) ||
      !number(f, "peer", s.peer) || !number(f, "channel", s.channel))
    return "stream needs comm, rank, id, started, completed, running, idle_ms, peer and channel";
  s.running = running != 0;
  if (f.count("block") != 0 && !number(f, "block", s.block)) return "a bad block";
  if (f.count("began_ago_ms") != 0) {
    uint64_t ago = 0;
    if (!number(f, "began_ago_ms", ago)) return "a bad began_ago_ms";
    s.began_ago_ms = ago;
  }
  snap.streams.push_back(s);
  return "";
}

std::string waiting_line(const Fields& f, ProcessSnapshot& snap) {
  uint64_t comm = 0;
  int rank = -1;
  int id = -1;
  std::string in;
  if (!number(f, "comm", comm, 16) || !number(f, "rank", rank) || !number(f, "id", id) ||
      !text(f, "text", in))
    return "waiting needs comm, rank, id and text";
  for (StreamSnap& s : snap.streams) {
    if (s.comm == comm && s.rank == rank && s.id == id) s.waiting_in = in;
  }
  return "";
}

std::string link_line(const Fields& f, ProcessSnapshot& snap) {
  LinkSnap l;
  if (!number(f, "process", l.process, 16) || !text(f, "state", l.state) ||
      !number(f, "silent_ms", l.silent_ms))
    return "link needs process, state and silent_ms";
  snap.links.push_back(l);
  return "";
}

std::string event_line(std::string_view kind, const Fields& f, ProcessSnapshot& snap) {
  ErrorSnap e;
  if (!number(f, "comm", e.comm, 16) || !number(f, "rank", e.rank) ||
      !number(f, "age_ms", e.age_ms) || !text(f, "text", e.text))
    return std::string(kind) + " needs comm, rank, age_ms and text";
  (kind == "error" ? snap.errors : snap.warnings).push_back(e);
  return "";
}

std::string body_line(std::string_view kind, const Fields& f, ProcessSnapshot& snap) {
  if (kind == "comm") return comm_line(f, snap);
  if (kind == "stream") return stream_line(f, snap);
  if (kind == "waiting") return waiting_line(f, snap);
  if (kind == "link") return link_line(f, snap);
  if (kind == "error" || kind == "warning") return event_line(kind, f, snap);
  return "";  // another kind: a newer peer's addition, skipped
}

}  // namespace

Result<ProcessSnapshot> parse_snapshot(std::string_view all) {
  ProcessSnapshot snap;
  bool header = false;
  bool process = false;
  bool end = false;
  std::size_t n = 0;
  while (!all.empty()) {
    const std::size_t nl = all.find('\n');
    if (nl == std::string_view::npos) return bad(n + 1, "the text does not end with a newline");
    std::string_view line = all.substr(0, nl);
    all.remove_prefix(nl + 1);
    ++n;
    if (n > kMaxLines) return bad(n, "more than " + std::to_string(kMaxLines) + " lines");
    if (line.size() > kMaxLineBytes) return bad(n, "line longer than the bound");
    if (end) return bad(n, "text after \"end\"");
    if (!header) {
      if (line != "nccom-health 1") return bad(n, "not a health snapshot (no \"nccom-health 1\")");
      header = true;
      continue;
    }
    const std::size_t sp = line.find(' ');
    const std::string_view kind = line.substr(0, sp);
    const Fields f = fields_of(sp == std::string_view::npos ? "" : line.substr(sp));
    if (kind == "end") {
      end = true;
    } else if (kind == "process") {
      if (process) return bad(n, "a second \"process\" line");
      if (!number(f, "key", snap.process, 16) || !number(f, "pid", snap.pid) ||
          !text(f, "host", snap.host))
        return bad(n, "process needs key, pid and host");
      process = true;
    } else if (!process) {
      return bad(n, "\"" + std::string(kind) + "\" before the \"process\" line");
    } else if (std::string wrong = body_line(kind, f, snap); !wrong.empty()) {
      return bad(n, wrong);
    }
  }
  if (!header) return bad(0, "empty");
  if (!process) return bad(n, "no \"process\" line");
  if (!end) return bad(n, "truncated (no \"end\" line)");
  return snap;
}

}  // namespace nccom::health
