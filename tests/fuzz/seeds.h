// The seed corpora of the fuzz targets, produced by the encoders, so they
// follow the wire formats: tests/fuzz/corpus/<target>/<name> holds exactly
// these bytes (fuzz_write_corpus rewrites them; the replay test checks them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::fuzz {

struct Seed {
  std::string name;            // "valid-*": must decode; "edge-*": may be refused
  std::vector<uint8_t> bytes;  // the whole target input (parameter prefix included)
};

// The six targets, in the order of docs/fuzzing.md.
const std::vector<std::string>& target_names();
std::vector<Seed> make_seeds(const std::string& target);
// Whether the target's decoder accepts this input (the same input framing as
// the target: fuzz_support.h).
bool seed_decodes(const std::string& target, const std::vector<uint8_t>& input);

}  // namespace nccom::fuzz
