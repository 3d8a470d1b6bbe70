#include "graphbuild/agreement.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace nccom::graphbuild {
namespace {

// One rank's record: magic "NCAG", u32 count, then kMaxAgreedSettings slots
// of name, value and source, each NUL-padded to its width.
constexpr uint32_t kMagic = 0x4741434e;  // "NCAG" little-endian
constexpr std::size_t kSlotBytes = kAgreedNameBytes + kAgreedValueBytes + kAgreedSourceBytes;
constexpr std::size_t kRecordBytes = 8 + kMaxAgreedSettings * kSlotBytes;

void put_u32(uint8_t* at, uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(at[i]) << (8 * i);
  return v;
}

void put_text(uint8_t* at, std::size_t width, const std::string& text) {
  std::memset(at, 0, width);
  std::memcpy(at, text.data(), std::min(text.size(), width - 1));
}

// Up to the first NUL; a field without one is cut at its width minus one,
// as put_text cuts it, so that the same text compares equal either way.
std::string get_text(const uint8_t* at, std::size_t width) {
  std::size_t n = 0;
  while (n + 1 < width && at[n] != 0) ++n;
  std::string s(reinterpret_cast<const char*>(at), n);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return s;
}

std::string clip(const std::string& s, std::size_t width) {
  return get_text(reinterpret_cast<const uint8_t*>(s.c_str()), std::min(width, s.size() + 1));
}

// FNV-1a of a file's bytes: "fnv1a:0123456789abcdef", or why it cannot be read.
std::string content_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unreadable";
  uint64_t h = 0xcbf29ce484222325ull;
  char buffer[65536];
  while (in) {
    in.read(buffer, sizeof buffer);
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<uint8_t>(buffer[i]);
      h *= 0x100000001b3ull;
    }
  }
  char text[32];
  std::snprintf(text, sizeof text, "fnv1a:%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  }
  if (ranks.size() > 8) out += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  return out;
}

}  // namespace

std::vector<AgreedSetting> settings_that_must_agree(const config::Config& config,
                                                    const std::string& net_plugin) {
  std::vector<AgreedSetting> out;
  for (const char* key : {"topology.plugins", "transport.plugins", "graph.use_new_algorithm",
                          "graph.p2p_level", "graph.p2p_disable"}) {
    const config::Entry& e = config.entry(key);
    out.push_back({key, e.text(), e.source.to_string()});
  }
  const config::Entry& graph = config.entry("graph.file");
  const std::string path = graph.text();
  out.push_back({"graph.file", path.empty() ? "none" : content_digest(path),
                 path.empty() ? graph.source.to_string() : path});
  if (!net_plugin.empty()) out.push_back({"net plugin", net_plugin, "net.plugin and its layout"});
  return out;
}

namespace {

// One rank's settings by name, as it sent them.
struct Theirs {
  std::string value, source;
};
using RankSettings = std::map<std::string, Theirs>;

// This rank's record: the magic, the count, then name, value, source each.
void put_record(uint8_t* own, const std::vector<AgreedSetting>& mine, std::size_t count) {
  put_u32(own, kMagic);
  put_u32(own + 4, static_cast<uint32_t>(count));
  for (std::size_t i = 0; i < count; ++i) {
    uint8_t* slot = own + 8 + i * kSlotBytes;
    put_text(slot, kAgreedNameBytes, mine[i].name);
    put_text(slot + kAgreedNameBytes, kAgreedValueBytes, mine[i].value);
    put_text(slot + kAgreedNameBytes + kAgreedValueBytes, kAgreedSourceBytes, mine[i].source);
  }
}

// Every rank's settings (untrusted bytes: checked as they are read).
Result<std::vector<RankSettings>> read_records(const std::vector<uint8_t>& records, int nranks) {
  std::vector<RankSettings> ranks(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    const uint8_t* rec = records.data() + static_cast<std::size_t>(r) * kRecordBytes;
    const uint32_t n = get_u32(rec + 4);
    if (get_u32(rec) != kMagic || n > kMaxAgreedSettings) {
      return make_error(NRT_INVALID, "rank " + std::to_string(r) +
                                         " sent no readable list of the settings that must agree "
                                         "(another libnccom build?)");
    }
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t* slot = rec + 8 + i * kSlotBytes;
      ranks[static_cast<std::size_t>(r)][get_text(slot, kAgreedNameBytes)] = {
          get_text(slot + kAgreedNameBytes, kAgreedValueBytes),
          get_text(slot + kAgreedNameBytes + kAgreedValueBytes, kAgreedSourceBytes)};
    }
  }
  return ranks;
}

// "" when every rank holds the same value of `name`; otherwise the message
// naming the values, the ranks holding each and where the value came from.
std::string disagreement(const std::string& name, const std::vector<RankSettings>& ranks) {
  // The ranks by value, in the order values first appear.
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  std::vector<std::string> sources;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    const auto& theirs = ranks[static_cast<std::size_t>(r)];
    auto it = theirs.find(name);
    const std::string value =
        it == theirs.end() ? "(not compared: another libnccom build?)" : it->second.value;
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& group) { return group.first == value; });
    if (g == groups.end()) {
      groups.push_back({value, {r}});
      sources.push_back(it == theirs.end() ? std::string() : it->second.source);
    } else {
      g->second.push_back(r);
    }
  }
  if (groups.size() == 1) return "";
  // The value fewest ranks hold first: usually the odd one out.
  std::vector<std::size_t> order(groups.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return groups[a].second.size() < groups[b].second.size();
  });
  std::string text = name + " differs between the ranks: ";
  for (std::size_t k = 0; k < order.size() && k < 4; ++k) {
    const auto& [value, who] = groups[order[k]];
    const std::string& source = sources[order[k]];
    text +=
        (k == 0 ? "" : "; ") + std::string("\"") + value + "\" on " + rank_list(who) +
        (source.empty()
             ? ""
             : " (" + source + (who.size() > 1 ? " on rank " + std::to_string(who[0]) : "") + ")");
  }
  if (order.size() > 4) text += "; and " + std::to_string(order.size() - 4) + " more values";
  return text +
         ". It decides what goes on the wire or which path a rank takes: set it alike on every "
         "rank";
}

}  // namespace

Status check_agreement(int my_rank, int nranks, const std::vector<AgreedSetting>& mine,
                       const AllGather& all_gather) {
  if (nranks <= 1) return {};
  std::vector<uint8_t> records(static_cast<std::size_t>(nranks) * kRecordBytes, 0);
  const std::size_t count = std::min(mine.size(), kMaxAgreedSettings);
  put_record(records.data() + static_cast<std::size_t>(my_rank) * kRecordBytes, mine, count);
  if (Status s = all_gather(records.data(), kRecordBytes); !s) return s;
  auto ranks = read_records(records, nranks);
  if (!ranks) return ranks.take_error();
  // Every name any rank listed (this rank's first): a rank of another build
  // that lists one more or one less fails every rank alike.
  std::vector<std::string> names;
  for (std::size_t i = 0; i < count; ++i) names.push_back(clip(mine[i].name, kAgreedNameBytes));
  for (const auto& theirs : *ranks) {
    for (const auto& [name, value] : theirs) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  for (const std::string& name : names) {
    if (std::string text = disagreement(name, *ranks); !text.empty())
      return make_error(NRT_INVALID, text);
  }
  return {};
}

}  // namespace nccom::graphbuild
