// config::digest — one short text that changes when any knob's resolved
// value changes (see config.h).
#include "config/config.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::config {

std::string digest(const Config& config) {
  std::vector<const Entry*> order;
  order.reserve(config.entries().size());
  for (const Entry& e : config.entries()) {
    if ((e.knob->flags & kJobIdentity) == 0) order.push_back(&e);
  }
  std::sort(order.begin(), order.end(),
            [](const Entry* a, const Entry* b) { return a->key() < b->key(); });
  // FNV-1a, 64 bits, over "key=value\n" per knob in key order.
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&h](std::string_view text) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  };
  for (const Entry* e : order) {
    add(e->key());
    add("=");
    add(e->text());
    add("\n");
  }
  char out[32];
  std::snprintf(out, sizeof out, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace nccom::config
