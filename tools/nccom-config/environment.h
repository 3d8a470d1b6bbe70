// What nccom-config says about the environment: variables that look like
// nccom's (NCCOM_*, CCOM_*, NEURON_CCOM_*) but that no knob, plugin or tool
// reads — usually a misspelling, named with the closest known name — and
// NCCL's own variables that nccom does not read.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace nccom::tools {

struct EnvNote {
  std::string name;        // the variable as set
  std::string suggestion;  // the closest name nccom reads ("" when none is close)
  bool nccl = false;       // an NCCL variable nccom does not read (else: unknown)
};

// `known` holds every variable the configuration's knobs read (host and
// plugins); the loader's own and the tools' are added here. `environ_names`
// are the names set in the environment.
std::vector<EnvNote> environment_notes(const std::set<std::string>& known,
                                       const std::vector<std::string>& environ_names);

// The closest of `candidates` to `word` within a small edit distance, or "".
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace nccom::tools
