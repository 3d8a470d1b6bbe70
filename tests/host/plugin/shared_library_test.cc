// SharedLibrary: opening, symbol lookup, and the loader's own error text.
#include "plugin/shared_library.h"

#include "build_paths.h"
#include "test_host.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace nccom::plugin {
namespace {

using test::plugin_file;

TEST(PluginSharedLibrary, OpensAndFindsExportedSymbols) {
  auto lib = SharedLibrary::open(plugin_file("good"));
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  EXPECT_EQ(lib->path(), plugin_file("good"));
  EXPECT_NE(lib->symbol(NCCOM_PLUGIN_SYMBOL), nullptr);
  EXPECT_NE(lib->symbol(TEST_PLUGIN_STATE_SYMBOL), nullptr);
  EXPECT_EQ(lib->symbol("no_such_symbol_anywhere"), nullptr);
  EXPECT_EQ(lib->symbol(nullptr), nullptr);
}

TEST(PluginSharedLibrary, HiddenSymbolsAreAbsent) {
  auto lib = SharedLibrary::open(plugin_file("good"));
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  EXPECT_EQ(lib->symbol("good_init"), nullptr);
}

TEST(PluginSharedLibrary, ClosesOnDestructionAndMoveKeepsItOpen) {
  const std::string path = plugin_file("good_b");
  ASSERT_FALSE(test::is_mapped(path));
  {
    auto lib = SharedLibrary::open(path);
    ASSERT_TRUE(lib.ok()) << lib.error().message;
    SharedLibrary moved = std::move(lib).value();
    EXPECT_TRUE(test::is_mapped(path));
    EXPECT_NE(moved.symbol(NCCOM_PLUGIN_SYMBOL), nullptr);
    SharedLibrary target = std::move(moved);
    EXPECT_EQ(moved.symbol(NCCOM_PLUGIN_SYMBOL), nullptr);  // NOLINT(bugprone-use-after-move)
    EXPECT_NE(target.symbol(NCCOM_PLUGIN_SYMBOL), nullptr);
    EXPECT_TRUE(test::is_mapped(path));
  }
  EXPECT_FALSE(test::is_mapped(path));
}

TEST(PluginSharedLibrary, MissingFileIsNotFound) {
  const std::string path = plugin_file("does_not_exist");
  auto lib = SharedLibrary::open(path);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, LoadErrorKind::NotFound);
  EXPECT_EQ(lib.error().path, path);
  EXPECT_NE(lib.error().message.find(path + ": no such file"), std::string::npos)
      << lib.error().message;
}

TEST(PluginSharedLibrary, NonElfFileIsRefusedBeforeDlopen) {
  const std::string path = plugin_file("garbage");
  auto lib = SharedLibrary::open(path);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, LoadErrorKind::InvalidFile);
  EXPECT_EQ(lib.error().path, path);
  EXPECT_NE(lib.error().message.find(path + ": not an ELF file"), std::string::npos)
      << lib.error().message;
}

TEST(PluginSharedLibrary, UnresolvableSymbolGivesLoaderText) {
  auto lib = SharedLibrary::open(plugin_file("undefined"));
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, LoadErrorKind::DlopenFailed);
  EXPECT_NE(lib.error().message.find("undefined symbol: nccom_test_missing_function"),
            std::string::npos)
      << lib.error().message;
}

TEST(PluginSharedLibrary, StaleDlerrorIsNotBlamedOnTheNextLoad) {
  // Leave an unrelated failure pending in dlerror(), then fail differently.
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "nccom_stale_symbol_for_test"), nullptr);
  auto lib = SharedLibrary::open(plugin_file("undefined"));
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().kind, LoadErrorKind::DlopenFailed);
  EXPECT_EQ(lib.error().message.find("nccom_stale_symbol_for_test"), std::string::npos)
      << lib.error().message;
  EXPECT_NE(lib.error().message.find("undefined symbol: nccom_test_missing_function"),
            std::string::npos);
}

TEST(PluginSharedLibrary, ProbeRecoversLoaderText) {
  EXPECT_NE(detail::probe_dlopen_error(plugin_file("garbage")).find("invalid ELF header"),
            std::string::npos);
  EXPECT_NE(detail::probe_dlopen_error(plugin_file("undefined"))
                .find("undefined symbol: nccom_test_missing_function"),
            std::string::npos);
  // A loadable library: the probe must not leave it loaded.
  const std::string good = plugin_file("good_b");
  EXPECT_FALSE(detail::probe_dlopen_error(good).empty());
  EXPECT_FALSE(test::is_mapped(good));
}

// libnccom-net.so links libfabric, which may pull in libinfinipath: its
// constructor installs handlers for SIGTERM, SIGSEGV and more that exit from
// the handler. A plugin's load must leave the process's dispositions as they
// were. Each load runs in a child, so that this process keeps its own.
// Returns 0 when SIGTERM's handler is unchanged, 1 when the load changed it,
// 3 when the library did not load.
int sigterm_changed_by(const std::string& path, bool through_shared_library) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    struct sigaction before = {};
    ::sigaction(SIGTERM, nullptr, &before);
    if (through_shared_library) {
      auto lib = SharedLibrary::open(path);
      if (!lib.ok()) ::_exit(3);
    } else if (::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
      ::_exit(3);
    }
    struct sigaction after = {};
    ::sigaction(SIGTERM, nullptr, &after);
    ::_exit(after.sa_handler != before.sa_handler ? 1 : 0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A library built to take SIGTERM in its constructor (plugins/signal_handler.c).
TEST(PluginSharedLibrary, ALoadKeepsTheProcessSignalDispositions) {
  ASSERT_EQ(sigterm_changed_by(SIGNAL_HANDLER_LIB, false), 1)
      << "a plain dlopen of " << SIGNAL_HANDLER_LIB << " should take SIGTERM";
  EXPECT_EQ(sigterm_changed_by(SIGNAL_HANDLER_LIB, true), 0)
      << "SharedLibrary::open let the load take SIGTERM";
}

// The real case: whatever this machine's libfabric does at load.
TEST(PluginSharedLibrary, LoadingTheLibfabricPluginKeepsTheProcessSignalDispositions) {
  const std::string path = std::string(NCCOM_BUILD_DIR) + "/lib/libnccom-net.so";
  EXPECT_EQ(sigterm_changed_by(path, true), 0)
      << "3: " << path << " does not load; 1: SharedLibrary::open let its load take SIGTERM";
}

}  // namespace
}  // namespace nccom::plugin
