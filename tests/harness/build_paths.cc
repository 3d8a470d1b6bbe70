#include "build_paths.h"

#include <mutex>
#include <set>
#include <string>
#include <string_view>

// Defined in the build tree's generated/build_roots.cc.
extern "C" const char nccom_build_root[];
extern "C" const char nccom_source_root[];

namespace nccom_test {
namespace {

const char* join(const char* root, const char* relative) {
  // A set never moves what it holds, so every pointer handed out stays valid.
  static std::mutex mutex;
  static std::set<std::string> joined;
  const std::lock_guard<std::mutex> lock(mutex);
  if (relative[0] == '\0' || std::string_view(relative) == ".") return root;
  return joined.insert(std::string(root) + "/" + relative).first->c_str();
}

}  // namespace

const char* build_dir() { return nccom_build_root; }
const char* source_dir() { return nccom_source_root; }
const char* in_build(const char* relative) { return join(nccom_build_root, relative); }
const char* in_source(const char* relative) { return join(nccom_source_root, relative); }

}  // namespace nccom_test
