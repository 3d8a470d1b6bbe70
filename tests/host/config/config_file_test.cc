// What the loader reads as a configuration file: only a regular file of at
// most kMaxConfigFileBytes. A FIFO, a device, a directory or an oversized
// file named by NCCOM_CONFIG is an error naming the path and its kind or
// size, never a hang. Also read_bounded_file itself, the helper every
// user-named file goes through.
#include "config_test_util.h"

#include <nccom/util/bounded_file.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>

namespace nccom::config::testing {
namespace {

class ConfigFile : public ::testing::Test {
 protected:
  // The error of loading with NCCOM_CONFIG = `path`.
  std::string error_for_path(const std::string& path) {
    env_.set("NCCOM_CONFIG", path);
    return load_error(options(env_));
  }
  std::string prefix(const std::string& path) {
    return "cannot read configuration file " + path + " (from NCCOM_CONFIG): ";
  }
  TempDir dir_;
  FakeEnv env_;
};

TEST_F(ConfigFile, FifoIsRefusedAtOnceWithoutWaitingForAWriter) {
  const std::string fifo = dir_.path("nccom.toml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  env_.set("NCCOM_CONFIG", fifo);
  std::future<Result<Config>> loading =
      std::async(std::launch::async, [this] { return load(options(env_)); });
  if (loading.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "loading a FIFO did not return within 30 s (it waits for a writer)";
    // A writer releases a reader that waits in open; its close is the EOF.
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
  }
  Result<Config> result = loading.get();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status, NRT_INVALID);
  EXPECT_EQ(result.error().message,
            prefix(fifo) + "it is a FIFO, not a regular file; give the path of a regular file");
}

TEST_F(ConfigFile, CharacterDeviceIsRefusedBeforeAnyRead) {
  // /dev/zero never ends: reading it would not stop before memory runs out.
  struct stat st {};
  ASSERT_EQ(::stat("/dev/zero", &st), 0);
  ASSERT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(error_for_path("/dev/zero"),
            prefix("/dev/zero") +
                "it is a character device, not a regular file; give the path of a regular file");
}

TEST_F(ConfigFile, DirectoryIsRefused) {
  const std::string dir = dir_.path("conf.d");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << std::strerror(errno);
  EXPECT_EQ(error_for_path(dir),
            prefix(dir) + "it is a directory, not a regular file; give the path of a regular file");
}

TEST_F(ConfigFile, DefaultPathThatIsADirectoryIsRefusedToo) {
  const std::string dir = dir_.path("etc-nccom.toml");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << std::strerror(errno);
  EXPECT_EQ(load_error(options(FakeEnv(), {dir})),
            "cannot read configuration file " + dir +
                ": it is a directory, not a regular file; give the path of a regular file");
}

TEST_F(ConfigFile, SocketIsRefusedByItsKind) {
  const std::string path = dir_.path("nccom.sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0)
      << std::strerror(errno);
  EXPECT_EQ(error_for_path(path),
            prefix(path) + "it is a socket, not a regular file; give the path of a regular file");
  ::close(fd);
}

TEST_F(ConfigFile, FileOverTheBoundIsRefusedWithItsSizeAndTheBound) {
  static_assert(kMaxConfigFileBytes == 4u << 20);
  const std::string big = dir_.write("big.toml", std::string(kMaxConfigFileBytes + 1, '\n'));
  EXPECT_EQ(error_for_path(big),
            prefix(big) +
                "it is 4194305 bytes, over the limit of 4194304 bytes (4 MiB); check "
                "that the path names the intended file");
}

TEST_F(ConfigFile, FileOfExactlyTheBoundIsRead) {
  std::string text = "log.level = \"INFO\"\n";
  text += "#" + std::string(kMaxConfigFileBytes - text.size() - 2, 'x') + "\n";
  ASSERT_EQ(text.size(), kMaxConfigFileBytes);
  env_.set("NCCOM_CONFIG", dir_.write("full.toml", text));
  Config cfg = load_ok(options(env_));
  EXPECT_EQ(cfg.get_string("log.level"), "INFO");
}

// The bound holds while reading, not only by the size fstat reports: a /proc
// file reports size 0 and still has content.
TEST(BoundedFile, BoundHoldsWhileReadingAFileThatReportsNoSize) {
  struct stat st {};
  ASSERT_EQ(::stat("/proc/self/status", &st), 0);
  ASSERT_TRUE(S_ISREG(st.st_mode));
  ASSERT_EQ(st.st_size, 0);
  Result<std::string> whole = read_bounded_file("/proc/self/status", 1u << 20, "status");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  ASSERT_GT(whole->size(), 64u);

  Result<std::string> cut = read_bounded_file("/proc/self/status", 64, "the status file");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().status, NRT_INVALID);
  EXPECT_EQ(cut.error().message,
            "cannot read the status file: it holds more than the limit of 64 bytes (it grew "
            "while being read, or does not report its size); check that the path names the "
            "intended file");
}

TEST(BoundedFile, MissingFileAndStatusOfTheCaller) {
  TempDir dir;
  Result<std::string> r =
      read_bounded_file(dir.path("absent.xml"), 100, "graph file 'absent.xml'", NRT_FAILURE);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, NRT_FAILURE);
  EXPECT_EQ(r.error().message, "cannot read graph file 'absent.xml': No such file or directory");
}

TEST(BoundedFile, EmptyFileIsEmptyText) {
  TempDir dir;
  Result<std::string> r = read_bounded_file(dir.write("empty", ""), 0, "empty");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "");
}

}  // namespace
}  // namespace nccom::config::testing
