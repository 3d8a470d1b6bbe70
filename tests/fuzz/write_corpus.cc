// fuzz_write_corpus <corpus-dir>: (re)writes the seed corpora from the
// encoders (seeds.cc). Run it after a wire format change:
//   build/bin/fuzz_write_corpus tests/fuzz/corpus
// Files in a target directory that are not seeds any more are removed.
#include "seeds.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 2) {
    std::cerr << "usage: fuzz_write_corpus <corpus-dir>\n";
    return 2;
  }
  for (const auto& target : nccom::fuzz::target_names()) {
    const fs::path dir = fs::path(argv[1]) / target;
    fs::create_directories(dir);
    std::set<std::string> written;
    for (const auto& seed : nccom::fuzz::make_seeds(target)) {
      std::ofstream out(dir / seed.name, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(seed.bytes.data()),
                static_cast<std::streamsize>(seed.bytes.size()));
      if (!out) {
        std::cerr << "fuzz_write_corpus: cannot write " << (dir / seed.name) << "\n";
        return 1;
      }
      written.insert(seed.name);
    }
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!written.count(entry.path().filename().string())) fs::remove(entry.path());
    }
    std::cout << dir.string() << ": " << written.size() << " seeds\n";
  }
  return 0;
}
