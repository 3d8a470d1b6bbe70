// Where this build tree and its sources are, for tests and benchmarks.
//
// The paths are not compiled into every translation unit as string macros:
// an absolute path on a compiler command line makes an object differ from
// clone to clone, and no compiler cache could share it. A target names a
// path with nccom_path_definitions() (cmake/NccomHelpers.cmake), which turns
// it into a call of in_build() or in_source() with a path relative to the
// tree; only one small generated file holds the absolute roots.
#pragma once

namespace nccom_test {

// The build tree (CMake's PROJECT_BINARY_DIR) and the source tree, absolute.
const char* build_dir();
const char* source_dir();

// build_dir()/relative and source_dir()/relative. The strings live as long as
// the process.
const char* in_build(const char* relative);
const char* in_source(const char* relative);

}  // namespace nccom_test
