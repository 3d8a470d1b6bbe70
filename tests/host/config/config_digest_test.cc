// config::digest: the same for the same resolved values wherever they came
// from, different when any value differs, and exactly FNV-1a over
// "key=value\n" in key order (what nccom-config and nccom-test print).
#include "config/config.h"
#include "config_test_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace nccom::config::testing {
namespace {

// An independent FNV-1a 64 of the expected text, in the digest's format.
std::string fnv_of(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char out[32];
  std::snprintf(out, sizeof out, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return out;
}

TEST(ConfigDigest, SameValuesSameDigestWhereverTheyCameFrom) {
  TempDir dir;
  const std::string defaults = digest(load_ok(options(FakeEnv())));
  // The environment and a file giving the default values: same digest.
  EXPECT_EQ(digest(load_ok(options(FakeEnv().set("NCCL_SOCKET_NTHREADS", "1")))), defaults);
  const std::string file = dir.write("same.toml", "[demo.socket]\nnthreads = 1\n");
  EXPECT_EQ(digest(load_ok(options(FakeEnv().set("NCCOM_CONFIG", file)))), defaults);
  // Any value that differs changes it, from either source.
  const std::string two = digest(load_ok(options(FakeEnv().set("NCCL_SOCKET_NTHREADS", "2"))));
  EXPECT_NE(two, defaults);
  const std::string file2 = dir.write("two.toml", "[demo.socket]\nnthreads = 2\n");
  EXPECT_EQ(digest(load_ok(options(FakeEnv().set("NCCOM_CONFIG", file2)))), two);
  EXPECT_NE(digest(load_ok(options(FakeEnv().set("DEMO_DEBUG", "1")))), defaults);
  // Another table registered: other knobs, another digest.
  EXPECT_NE(digest(load_ok(host_options(FakeEnv()))), defaults);
}

TEST(ConfigDigest, KnobsThatNameTheJobAreLeftOut) {
  // The root address, the health address and the secret change from job to
  // job (and a secret must not enter a published hash): same digest.
  const std::string base = digest(load_ok(host_options(FakeEnv())));
  EXPECT_EQ(digest(load_ok(host_options(FakeEnv()
                                            .set("NEURON_RT_ROOT_COMM_ID", "127.0.0.1:41000")
                                            .set("NCCOM_RAS_ADDR", "127.0.0.1:41001")
                                            .set("NCCOM_BOOTSTRAP_SECRET", "s3cret")))),
            base);
  // A knob of the same table that changes behaviour still counts.
  EXPECT_NE(digest(load_ok(host_options(FakeEnv().set("NCCL_SOCKET_IFNAME", "lo")))), base);
}

TEST(ConfigDigest, FnvOverKeyEqualsValueLinesInKeyOrder) {
  // Entries given out of key order: the digest sorts them.
  std::vector<Entry> entries;
  entries.push_back(Entry{&kDemoKnobs[1], Value{std::int64_t{3}}, Source{}});   // nthreads
  entries.push_back(Entry{&kDemoKnobs[2], Value{true}, Source{}});              // debug
  entries.push_back(Entry{&kDemoKnobs[0], Value{std::int64_t{12}}, Source{}});  // nsocks
  const Config c(std::move(entries), "", "", "");
  const std::string d = digest(c);
  EXPECT_EQ(d, fnv_of("demo.socket.debug=true\ndemo.socket.nsocks_per_thread=12\n"
                      "demo.socket.nthreads=3\n"));
  EXPECT_EQ(d.size(), 8u + 16u);
  EXPECT_EQ(d.rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(digest(Config({}, "", "", "")), fnv_of(""));
}

}  // namespace
}  // namespace nccom::config::testing
