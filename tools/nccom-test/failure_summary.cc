// The one-line failure summary of a local run (see failure_summary.h).
#include "failure_summary.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

namespace nccom::nccomtest {

int departed_peer(const std::string& reason, int self) {
  // The health view a rank adds describes every process, not its failure.
  const std::string text = reason.substr(0, reason.find("; the health service says: "));
  // "rank N" at `at` (not "ranks"), N != self: N, else -1.
  auto rank_at = [&text, self](size_t at) {
    if (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1]))) return -1;
    size_t i = at + 5;
    if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
    long n = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && n < 1 << 24; ++i)
      n = n * 10 + (text[i] - '0');
    return n == self ? -1 : static_cast<int>(n);
  };
  // The phrases of a peer's departure, and where its rank is named: before
  // the phrase (libnccom's bootstrap: a member that closed its connection,
  // left after its setup or gave up its own, a connection the peer closed,
  // a peer's port nobody listens on any more; the net plugins' "connection
  // closed by peer") or after it (the reference runtime's engine: "process gone:
  // rank N (...)").
  static constexpr const char* kNamedBefore[] = {
      "closed its connection", "completed its setup and freed its communicator",
      "gave up its setup", "connection closed by", "nothing listens there any more"};
  size_t first = std::string::npos;
  int peer = -1;
  for (const char* phrase : kNamedBefore) {
    const size_t at = text.find(phrase);
    if (at == std::string::npos || at >= first) continue;
    for (size_t r = text.rfind("rank ", at); r != std::string::npos;
         r = r == 0 ? std::string::npos : text.rfind("rank ", r - 1)) {
      if (const int n = rank_at(r); n >= 0) {
        first = at;
        peer = n;
        break;
      }
    }
  }
  const size_t gone = text.find("process gone: ");
  if (gone != std::string::npos && gone < first) {
    const size_t r = text.find("rank ", gone);
    if (r != std::string::npos) {
      if (const int n = rank_at(r); n >= 0) peer = n;
    }
  }
  return peer;
}

namespace {

constexpr const char* kHealthSays = "; the health service says: ";
constexpr const char* kEllipsis = "\u2026";  // "…"

// A cause compared with another: its digits dropped, so that causes that
// differ only in the ranks, ports or counts they name (each rank names its
// own peers) are one cause.
std::string cause_key(const std::string& cause) {
  std::string key;
  for (char c : cause) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) key += c;
  }
  return key;
}

// "rank 3" / "ranks 0-2, 4-7".
std::string ranks_text(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
}

}  // namespace

RankReason split_reason(const std::string& said) {
  std::string text = said.substr(0, said.find(kHealthSays));
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.empty() || text.back() != ')') return {text, ""};
  int depth = 0;
  for (size_t i = text.size(); i-- > 0;) {
    if (text[i] == ')') ++depth;
    if (text[i] == '(' && --depth == 0) {
      if (i < 2 || text[i - 1] != ' ') return {text, ""};
      return {text.substr(0, i - 1), text.substr(i + 1, text.size() - i - 2)};
    }
  }
  return {text, ""};  // unbalanced: no context of nccom-test's
}

std::string phase_of(const std::string& context) {
  std::string phase = context.substr(0, context.find(": "));
  if (!phase.empty() && phase.back() == ')') {
    int depth = 0;
    for (size_t i = phase.size(); i-- > 0;) {
      if (phase[i] == ')') ++depth;
      if (phase[i] == '(' && --depth == 0) {
        phase.erase(i > 0 && phase[i - 1] == ' ' ? i - 1 : i);
        break;
      }
    }
  }
  if (const size_t at = phase.find(" at "); at != std::string::npos) phase.erase(at);
  return phase;
}

std::string rank_ranges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string ellipsize(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  const size_t mark = std::strlen(kEllipsis);
  if (limit < mark) return "";
  size_t cut = limit - mark;
  // Not inside a UTF-8 character: back off its continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  while (cut > 0 && text[cut - 1] == ' ') --cut;
  return text.substr(0, cut) + kEllipsis;
}

namespace {

// The culprit's group: the ranks that failed with its cause (`exact`: in
// the same words, not only the same kind).
struct Group {
  std::vector<bool> in;  // by index into the ranks
  std::vector<int> ranks;
  bool exact = true;
};

Group group_of(const std::vector<RankEnd>& ranks, size_t culprit, const std::string& cause) {
  Group g;
  g.in.assign(ranks.size(), false);
  g.in[culprit] = true;
  g.ranks = {ranks[culprit].rank};
  if (cause.empty()) return g;
  const std::string key = cause_key(cause);
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == culprit || !ranks[i].failed || ranks[i].said.empty()) continue;
    const std::string other = split_reason(ranks[i].said).cause;
    if (cause_key(other) != key) continue;
    g.in[i] = true;
    g.ranks.push_back(ranks[i].rank);
    g.exact = g.exact && other == cause;
  }
  return g;
}

// The ranks that failed because the group left, directly or through a rank
// that failed because of it; marks them in `counted`.
std::vector<int> followers_of(const std::vector<RankEnd>& ranks, const Group& g,
                              std::vector<bool>& counted) {
  auto index_of = [&ranks](int rank) -> long {
    for (size_t i = 0; i < ranks.size(); ++i)
      if (ranks[i].rank == rank) return static_cast<long>(i);
    return -1;
  };
  std::vector<int> followers;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (g.in[i] || !ranks[i].failed) continue;
    long at = static_cast<long>(i);
    for (size_t hops = 0; at >= 0 && hops <= ranks.size(); ++hops) {
      const RankEnd& r = ranks[static_cast<size_t>(at)];
      if (g.in[static_cast<size_t>(at)]) break;
      at = r.left_for < 0 ? -1 : index_of(r.left_for);
      if (at >= 0 && !ranks[static_cast<size_t>(at)].failed && !g.in[static_cast<size_t>(at)])
        at = -1;
    }
    if (at >= 0 && g.in[static_cast<size_t>(at)]) {
      followers.push_back(ranks[i].rank);
      counted[i] = true;
    }
  }
  return followers;
}

// The other failures, grouped by cause (first seen first): "; R failed
// too" each, and the same with each group's cause.
struct Others {
  std::string short_text, long_text;
};

Others others_of(const std::vector<RankEnd>& ranks, const std::vector<bool>& counted) {
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (counted[i] || !ranks[i].failed) continue;
    const std::string k = cause_key(split_reason(ranks[i].said).cause);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&k](const auto& o) { return o.first == k; });
    if (it == groups.end()) {
      groups.push_back({k, {i}});
    } else {
      it->second.push_back(i);
    }
  }
  Others o;
  for (const auto& [k, members] : groups) {
    std::vector<int> numbers;
    for (size_t i : members) numbers.push_back(ranks[i].rank);
    const RankEnd& first = ranks[members.front()];
    const RankReason r = split_reason(first.said);
    const std::string who = ranks_text(numbers);
    o.short_text += "; " + who + " failed too";
    o.long_text += "; " + who + (r.cause.empty() ? " " + first.end : " failed too: " + r.cause);
  }
  return o;
}

// Who ended the run and how, up to where its cause goes.
std::string head_of(const RankEnd& c, const Group& g, bool says) {
  std::string head = "nccom-test: ";
  if (g.ranks.size() > 1) {
    return head + ranks_text(g.ranks) + " failed" +
           (g.exact ? ": " : " alike; rank " + std::to_string(c.rank) + ": ");
  }
  const bool plain = says && (c.end == "exited with status 1" ||
                              c.end == "failed and was still running when it was stopped");
  return head + "rank " + std::to_string(c.rank) + " (host " + std::to_string(c.host) + ") " +
         (plain ? std::string("failed") : c.end) + (says ? ": " : "");
}

}  // namespace

std::string summary_line(const std::vector<RankEnd>& ranks, size_t culprit, size_t limit) {
  const RankEnd& c = ranks[culprit];
  const RankReason reason = split_reason(c.said);
  const Group group = group_of(ranks, culprit, reason.cause);
  std::vector<bool> counted = group.in;
  const std::vector<int> followers = followers_of(ranks, group, counted);
  const Others others = others_of(ranks, counted);
  std::vector<int> stopped;
  for (const RankEnd& r : ranks)
    if (r.stopped && !r.failed) stopped.push_back(r.rank);

  const bool says = !reason.cause.empty();
  const std::string head = head_of(c, group, says);
  const std::string phase = phase_of(reason.context);
  std::string tail;
  if (!followers.empty())
    tail += "; " + ranks_text(followers) + " failed because " +
            (group.ranks.size() > 1 ? "they" : "it") + " left";
  const std::string stop = stopped.empty() ? "" : "; stopped " + ranks_text(stopped);
  // The culprit's cause gets what the line has left; a cause needs room to
  // be read, so the other ranks' causes come only when it stays whole.
  constexpr size_t kCauseRoom = 60;
  const std::string phase_text = phase.empty() ? "" : " (" + phase + ")";
  auto room_for_cause = [&](const std::string& rest) -> long {
    return static_cast<long>(limit) - static_cast<long>(head.size() + rest.size());
  };
  std::string rest = phase_text + tail + others.long_text + stop;
  if (!says || room_for_cause(rest) < static_cast<long>(reason.cause.size()))
    rest = phase_text + tail + others.short_text + stop;
  if (says && room_for_cause(rest) < static_cast<long>(kCauseRoom))
    rest = tail + others.short_text + stop;  // what it was doing gives way first
  std::string line = head;
  if (says) {
    const long room = std::max(room_for_cause(rest), static_cast<long>(kCauseRoom));
    line += ellipsize(reason.cause, static_cast<size_t>(room));
  }
  return ellipsize(line + rest, limit);
}

}  // namespace nccom::nccomtest
