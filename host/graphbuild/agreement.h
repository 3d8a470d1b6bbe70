// The settings every rank of a communicator must share: they decide what
// goes on the wire, or which path and peer a rank picks for each channel.
// A rank that differs would not fail by itself: it would wait for a message
// its peers never send, or send one they do not expect, until a timeout
// blamed whoever it waited for. So neuronBuildGraphComm compares them first,
// in one all-gather, and every rank fails alike naming the setting, the ranks
// and their values (docs/decisions.md, "Settings that must agree").
#pragma once

#include "config/config.h"
#include "graphbuild/rank_graph.h"

#include <nccom/util/result.h>

#include <string>
#include <vector>

namespace nccom::graphbuild {

struct AgreedSetting {
  std::string name;    // as the user sets it: the config key
  std::string value;   // as text; compared as text
  std::string source;  // where this rank's value came from ("env NCCL_...", a file:line)
};

// Each field travels and is compared up to this many bytes.
inline constexpr std::size_t kAgreedNameBytes = 32;
inline constexpr std::size_t kAgreedValueBytes = 80;
inline constexpr std::size_t kAgreedSourceBytes = 48;
// At most this many settings per record.
inline constexpr std::size_t kMaxAgreedSettings = 8;

// This process's settings that must agree: the topology and transport
// plugins, the ring-graph knobs (and the graph file's contents), and the
// net plugin as `net_plugin` describes it ("" when the caller has none).
std::vector<AgreedSetting> settings_that_must_agree(const config::Config& config,
                                                    const std::string& net_plugin);

// Gathers every rank's settings and compares them. Fails, on every rank
// alike, with the first setting that differs: "graph.use_new_algorithm
// differs between the ranks: "1" on rank 2; "0" on ranks 0, 1, 3 ...".
// A record that does not decode (another build's) fails naming its rank.
Status check_agreement(int my_rank, int nranks, const std::vector<AgreedSetting>& mine,
                       const AllGather& all_gather);

}  // namespace nccom::graphbuild
