// nccom-topo-neuron-examples DIR: writes the example NCCL_TOPO_FILE files
// (examples.h) into DIR, normally config/topo of the source tree.
#include "examples.h"

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR   (normally config/topo)\n", argv[0]);
    return 2;
  }
  for (const auto& spec : nccom::topo_neuron::exampleSpecs()) {
    auto text = nccom::topo_neuron::exampleText(spec);
    if (!text) {
      std::fprintf(stderr, "%s: %s\n", spec.file, text.error().message.c_str());
      return 1;
    }
    const std::string path = std::string(argv[1]) + "/" + spec.file;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << *text;
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    std::printf("wrote %s\n", path.c_str());
  }
  return 0;
}
