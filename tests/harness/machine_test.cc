// MachineLack.*: the names a skip prints (machine.h). scripts/test.sh groups
// skips by these names and docs/testing.md lists them, so they must be
// distinct, stable words.
#include "machine.h"

#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>

namespace nccom_test::machine {
namespace {

// Every enumerator, in the order of the enum; a new reason is added here too.
constexpr Lack kEvery[] = {Lack::kRoot,
                           Lack::kNetworkNamespaces,
                           Lack::kIpv6Loopback,
                           Lack::kIpv4Interface,
                           Lack::kLibfabricProvider,
                           Lack::kProgram,
                           Lack::kMountNamespaces,
                           Lack::kCgroups};

TEST(MachineLack, EveryReasonHasItsOwnName) {
  std::size_t count = 0;
  const std::string_view* names = all_names(&count);
  ASSERT_EQ(count, std::size(kEvery)) << "a reason was added to the enum or to kNames, not both";
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < count; ++i) {
    EXPECT_EQ(name(kEvery[i]), names[i]) << "reason " << i;
    EXPECT_TRUE(seen.insert(names[i]).second) << names[i] << " names two reasons";
  }
}

TEST(MachineLack, NamesAreLowercaseHyphenatedWords) {
  std::size_t count = 0;
  const std::string_view* names = all_names(&count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view n = names[i];
    EXPECT_FALSE(n.empty()) << "reason " << i;
    EXPECT_FALSE(n.starts_with('-') || n.ends_with('-')) << n;
    EXPECT_EQ(n.find("--"), std::string_view::npos) << n;
    for (char c : n) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') << n;
  }
}

TEST(MachineLack, SkipPrefixNamesTheReason) {
  EXPECT_EQ(skip_prefix(Lack::kIpv6Loopback), "machine lacks ipv6-loopback: ");
  EXPECT_EQ(skip_prefix(Lack::kLibfabricProvider), "machine lacks libfabric-provider: ");
}

TEST(MachineProbe, ProgramFindsAShellAndNotANonsenseName) {
  EXPECT_EQ(program("sh"), "");
  EXPECT_EQ(program("/bin/sh"), "");
  EXPECT_NE(program("nccom-no-such-program"), "");
  EXPECT_NE(program("/nonexistent/nccom-no-such-program"), "");
}

}  // namespace
}  // namespace nccom_test::machine
