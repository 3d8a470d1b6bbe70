// The plugin boundary (cmake/NccomBoundary.cmake), the checks the configure
// step runs over plugins/: a plugin target that links a host library, even
// through a static library of its own folder, or has a host include
// directory, or a source whose #include "..." resolves into host/, stops the
// configure step with a message naming it. Each check runs on a throwaway
// project laid out like this tree, and the source check also on the tree's
// own plugins/.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using nccom_test::ChildResult;
using nccom_test::run_child;
using nccom_test::TempDir;

const std::string kModule = nccom_test::in_source("cmake/NccomBoundary.cmake");

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string output(const ChildResult& r) { return "stdout:\n" + r.out + "\nstderr:\n" + r.err; }

// CMake wraps a message's lines: compare with every run of white space as one blank.
std::string flat(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n' || c == '\t';
    if (blank && !out.empty() && out.back() == ' ') continue;
    out += blank ? ' ' : c;
  }
  return out;
}

// A project with host/ (a library and a header) and plugins/ (a plugin over
// a static library of its folder). `mode` picks what the plugin side does
// wrong, if anything.
ChildResult configure(const TempDir& dir, const std::string& mode) {
  const std::string src = dir.path() + "/src";
  write(src + "/CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.25)\n"
        "project(boundary LANGUAGES C)\n"
        "include(" +
            kModule +
            ")\n"
            "add_subdirectory(host)\n"
            "add_subdirectory(plugins)\n"
            "nccom_check_target_boundary(DIRECTORY ${CMAKE_SOURCE_DIR}/plugins\n"
            "                            FORBIDDEN ${CMAKE_SOURCE_DIR}/host)\n");
  write(src + "/host/CMakeLists.txt",
        "add_library(host_log STATIC log.c)\n"
        "target_include_directories(host_log PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})\n");
  write(src + "/host/log.c", "int host_log(void) { return 0; }\n");
  std::string plugins =
      "add_library(plugin_core STATIC core.c)\n"
      "add_library(plugin MODULE plugin.c)\n"
      "target_link_libraries(plugin PRIVATE plugin_core)\n";
  if (mode == "link") plugins += "target_link_libraries(plugin_core PUBLIC host_log)\n";
  if (mode == "include")
    plugins += "target_include_directories(plugin PRIVATE ${CMAKE_SOURCE_DIR}/host)\n";
  if (mode == "file")
    plugins += "target_link_libraries(plugin_core PUBLIC ${CMAKE_SOURCE_DIR}/host/libold.a)\n";
  write(src + "/plugins/CMakeLists.txt", plugins);
  write(src + "/plugins/core.c", "int core(void) { return 1; }\n");
  write(src + "/plugins/plugin.c", "int plugin(void) { return 2; }\n");
  return run_child(CMAKE_COMMAND, {"-S", src, "-B", dir.path() + "/build"}, {});
}

ChildResult scan(const std::string& plugins, const std::string& forbidden) {
  return run_child(
      CMAKE_COMMAND,
      {"-DNCCOM_BOUNDARY_DIR=" + plugins, "-DNCCOM_BOUNDARY_FORBIDDEN=" + forbidden, "-P", kModule},
      {});
}

TEST(PluginBoundary, APluginOnItsOwnFolderConfigures) {
  TempDir dir;
  const auto r = configure(dir, "clean");
  EXPECT_EQ(r.exit_code, 0) << output(r);
}

TEST(PluginBoundary, AHostLibraryLinkedThroughAPluginLibraryStopsTheConfigure) {
  TempDir dir;
  const auto r = configure(dir, "link");
  EXPECT_NE(r.exit_code, 0) << output(r);
  // Both the plugin and its folder's library reach host_log: the first one
  // checked is named, with the chain that got there.
  EXPECT_NE(flat(r.err).find("links 'host_log', a target of " + dir.path() + "/src/host"),
            std::string::npos)
      << output(r);
  EXPECT_NE(flat(r.err).find("-> host_log"), std::string::npos) << output(r);
  EXPECT_NE(flat(r.err).find("nccom::sdk"), std::string::npos) << output(r);
}

TEST(PluginBoundary, AHostIncludeDirectoryStopsTheConfigure) {
  TempDir dir;
  const auto r = configure(dir, "include");
  EXPECT_NE(r.exit_code, 0) << output(r);
  EXPECT_NE(flat(r.err).find("plugin target 'plugin' has include directory '" + dir.path() +
                             "/src/host'"),
            std::string::npos)
      << output(r);
}

TEST(PluginBoundary, AFileInsideTheHostLinkedByPathStopsTheConfigure) {
  TempDir dir;
  const auto r = configure(dir, "file");
  EXPECT_NE(r.exit_code, 0) << output(r);
  EXPECT_NE(flat(r.err).find("links '" + dir.path() + "/src/host/libold.a'"), std::string::npos)
      << output(r);
}

TEST(PluginBoundary, ARelativeIncludeIntoTheHostIsNamedWithWhereItResolves) {
  TempDir dir;
  write(dir.path() + "/host/log/log.h", "#pragma once\n");
  write(dir.path() + "/plugins/p/own.h", "#pragma once\n");
  write(dir.path() + "/plugins/p/ok.cc", "#include \"own.h\"\n#include <vector>\n");
  const auto clean = scan(dir.path() + "/plugins", dir.path() + "/host");
  EXPECT_EQ(clean.exit_code, 0) << output(clean);

  write(dir.path() + "/plugins/p/sub/bad.cc",
        "#include \"own.h\"\n  #  include \"../../../host/log/log.h\"\n");
  const auto bad = scan(dir.path() + "/plugins", dir.path() + "/host");
  EXPECT_NE(bad.exit_code, 0) << output(bad);
  EXPECT_NE(flat(bad.err).find(dir.path() +
                               "/plugins/p/sub/bad.cc: #include \"../../../host/log/log.h\" "
                               "resolves to " +
                               dir.path() + "/host/log/log.h"),
            std::string::npos)
      << output(bad);
  EXPECT_EQ(flat(bad.err).find("ok.cc"), std::string::npos) << output(bad);
}

TEST(PluginBoundary, TheTreesPluginsIncludeNothingOfTheHost) {
  const std::string root = NCCOM_SOURCE_DIR;
  const auto r = scan(root + "/plugins", root + "/host;" + root + "/emu;" + root + "/tools");
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("no include reaches outside the SDK"), std::string::npos) << output(r);
}

}  // namespace
